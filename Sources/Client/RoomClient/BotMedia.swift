import AudioCore
import ClientAudio
import Foundation
import RoomCore
import RoomProtocol
import StrictJSON
import Synchronization

/// A bot's audio: what it sends as its microphone, whether it records what it hears, and the test aid that
/// blocks UDP.
public struct BotMediaOptions: Sendable, Equatable {
    public var source: MicrophoneSource
    /// Where to write what the bot hears (48 kHz mono 16-bit WAV) when it stops.
    public var recordPath: String?
    /// Drop all media UDP, so media falls back to the WebSocket.
    public var blockUDP: Bool
    /// Print a `packet` event for every packet heard, with its arrival time (for tests that time the audio).
    public var logPackets: Bool

    public init(
        source: MicrophoneSource = .none, recordPath: String? = nil, blockUDP: Bool = false, logPackets: Bool = false
    ) {
        self.source = source
        self.recordPath = recordPath
        self.blockUDP = blockUDP
        self.logPackets = logPackets
    }
}

/// Runs a bot's media for each connection's `media` offer (through the client's `ClientMediaSlot`) and reports
/// `media_path` and `audio_stats` events. A bot with a microphone unmutes itself whenever it arrives on stage
/// with a role that may publish; it sends whatever its role, so the server's refusal to forward an audience
/// member can be seen.
///
/// Its state sits behind one lock; the media calls back from its own thread.
final class BotMedia: Sendable {
    private let options: BotMediaOptions
    let mediaSlot: ClientMediaSlot
    private let state = Mutex(State())
    private let player: FilePlayer
    private let output: @Sendable (String) -> Void
    private let sessionSlot = SessionSlot()

    private struct State {
        var session: RoomSession?
        var selfID: String?
        var publishingRoles: Set<String> = []
        /// The bot's role, as last told.
        var role: String?
    }

    /// The session, for the player's thread when a file ends.
    private final class SessionSlot: Sendable {
        let session = Mutex<RoomSession?>(nil)
    }

    init(options: BotMediaOptions, output: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.output = output
        let slot = sessionSlot
        player = FilePlayer(onFinish: { title in
            output(BotProtocol.line("play_ended", [("title", .string(title))]))
            _ = slot.session.withLock { $0 }?.send(.setPlaying(false))
        })
        mediaSlot = ClientMediaSlot(
            options: ClientMedia.Options(
                source: options.source, blockUDP: options.blockUDP, record: options.recordPath != nil,
                reportsPackets: options.logPackets, player: player),
            onEvent: { event in
                if let line = Self.line(for: event) { output(line) }
            },
            onFailure: { problem in output(BotProtocol.errorLine(code: "media_failed", message: problem)) })
    }

    func attach(_ session: RoomSession) {
        state.withLock { $0.session = session }
        sessionSlot.session.withLock { $0 = session }
        mediaSlot.attach(session.mediaChannel)
    }

    /// Media traffic from the session (its loop thread).
    func handle(_ media: SessionMedia) {
        mediaSlot.handle(media)
    }

    /// Plays the file at `path` into the room: refused in one `error` line when the bot's role may not publish or
    /// the file cannot be played; otherwise a `playing` line, and the server is told (`set_playing`).
    func play(_ path: String) {
        let (role, publishing) = state.withLock { ($0.role, $0.publishingRoles) }
        guard let role, publishing.contains(role) else {
            output(BotProtocol.errorLine(code: "forbidden", message: ClientRequest.playingNeedsTheStage))
            return
        }
        do {
            let playing = try player.play(path)
            var members: [(String, JSONValue)] = [
                ("title", .string(playing.title)), ("format", .string(playing.format.rawValue)),
            ]
            members.append(("length_s", playing.length.map { .integer(Int64($0)) } ?? .null))
            output(BotProtocol.line("playing", members))
            _ = state.withLock { $0.session }?.send(.setPlaying(true))
        } catch {
            output(BotProtocol.errorLine(code: "unplayable", message: "\(error.path) \(error.problemDescription)."))
        }
    }

    /// Stops the file playing, if one plays.
    func stopPlaying() {
        guard player.stop() else { return }
        _ = state.withLock { $0.session }?.send(.setPlaying(false))
    }

    /// Room events the bot's microphone cares about: it unmutes when it arrives on stage.
    func observe(_ event: WireEvent) {
        state.withLock { state in
            switch event {
            case .joined(let snapshot):
                state.role = snapshot.peers.first(where: { $0.peer.id == snapshot.selfID })?.peer.role.rawValue
                state.selfID = snapshot.selfID.rawValue
                state.publishingRoles = Set(
                    snapshot.roles.roles.filter { $0.permissions.contains(.publishAudio) }.map(\.name.rawValue))
            case .roleChanged(let peer, let role, _, _) where peer.rawValue == state.selfID:
                state.role = role.rawValue
            default:
                break
            }
        }
        // A role that may not publish ends the file (the server has already taken the flag down).
        if let role = state.withLock({ $0.role }), !state.withLock({ $0.publishingRoles }).contains(role) {
            player.stop()
        }
        guard options.source != .none else { return }
        var unmute = false
        state.withLock { state in
            switch event {
            case .joined(let snapshot):
                state.selfID = snapshot.selfID.rawValue
                state.publishingRoles = Set(
                    snapshot.roles.roles.filter { $0.permissions.contains(.publishAudio) }.map(\.name.rawValue))
                if let me = snapshot.peers.first(where: { $0.peer.id == snapshot.selfID })?.peer {
                    unmute = me.muted && state.publishingRoles.contains(me.role.rawValue)
                }
            case .roleChanged(let peer, let role, _, _):
                unmute = peer.rawValue == state.selfID && state.publishingRoles.contains(role.rawValue)
            default:
                break
            }
        }
        if unmute { unmuteSoon(attempts: 100) }
    }

    /// The snapshot can arrive a moment before the session has stored its connection: retry briefly.
    private func unmuteSoon(attempts: Int) {
        guard let session = state.withLock({ $0.session }), attempts > 0 else { return }
        if session.send(.setMute(false)) { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in
            unmuteSoon(attempts: attempts - 1)
        }
    }

    /// Stops the media and writes the recording; returns an error line's message when writing failed.
    func finish() -> String? {
        let samples = mediaSlot.close()
        guard let path = options.recordPath else { return nil }
        do {
            let bytes = try WAVAudio(samples: samples).encoded()
            // Mode 0600: what the room said is for whoever recorded it.
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
            else { return "could not write the recording to \(path)" }
            return nil
        } catch {
            return "could not write the recording to \(path): \(error)"
        }
    }

    /// The event line for a media event; nil for those a bot does not print (who is talking: the server's
    /// `speakers` events say it).
    static func line(for event: ClientMediaEvent) -> String? {
        switch event {
        case .path(let kind):
            return BotProtocol.line("media_path", [("path", .string(kind.rawValue))])
        case .stats(let path, let speakers, let sent):
            let list = speakers.map { speaker -> JSONValue in
                .object(
                    JSONObject([
                        ("peer", speaker.peer.map { .string($0) } ?? .null),
                        ("ssrc", .integer(Int64(speaker.ssrc))), ("received", .integer(Int64(speaker.received))),
                        ("lost", .integer(Int64(speaker.lost))),
                        ("recovered_fec", .integer(Int64(speaker.recoveredByFEC))),
                        ("recovered_red", .integer(Int64(speaker.recoveredByRED))),
                        ("concealed", .integer(Int64(speaker.concealed))),
                        ("jitter_ms", .double(speaker.jitterMilliseconds)),
                        ("playout_delay_ms", .double(speaker.playoutDelayMilliseconds)),
                    ]))
            }
            return BotProtocol.line(
                "audio_stats",
                [
                    ("path", path.map { .string($0.rawValue) } ?? .null), ("sent", .integer(Int64(sent))),
                    ("speakers", .array(list)),
                ])
        case .heard:
            return nil
        case .packet(let ssrc, let sequence, let arrival):
            return BotProtocol.line(
                "packet",
                [
                    ("ssrc", .integer(Int64(ssrc))), ("seq", .integer(Int64(sequence))),
                    ("arrival_us", .integer(arrival)),
                ])
        }
    }
}
