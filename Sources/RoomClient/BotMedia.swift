import AudioCore
import Foundation
import MediaClient
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

    public init(source: MicrophoneSource = .none, recordPath: String? = nil, blockUDP: Bool = false) {
        self.source = source
        self.recordPath = recordPath
        self.blockUDP = blockUDP
    }
}

/// Runs a bot's media engine for each connection's `media` offer and reports `media_path` and `audio_stats`
/// events. A bot with a microphone unmutes itself whenever it arrives on stage with a role that may publish; it
/// sends whatever its role, so the server's refusal to forward an audience member can be seen.
///
/// Its state sits behind one lock; the engine calls back from its own thread.
final class BotMedia: Sendable {
    private let options: BotMediaOptions
    private let output: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State {
        var session: RoomSession?
        var engine: ClientMedia?
        var recorded: [Int16] = []
        var selfID: String?
        var publishingRoles: Set<String> = []
        /// Who sends with which SSRC, from `media_sources`.
        var names: [UInt32: String] = [:]
    }

    init(options: BotMediaOptions, output: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.output = output
    }

    func attach(_ session: RoomSession) {
        state.withLock { $0.session = session }
    }

    /// Media traffic from the session (its loop thread).
    func handle(_ media: SessionMedia) {
        switch media {
        case .packet(let bytes):
            state.withLock { $0.engine }?.receivedOverWebSocket(bytes)
        case .signal(.mediaKey(let key, let epoch)):
            state.withLock { $0.engine }?.newRoomKey(key, epoch: epoch)
        case .signal(.media(let offer)):
            start(offer)
        case .signal(.mediaSources(let sources)):
            state.withLock { state in
                for source in sources { state.names[source.ssrc] = source.peer }
            }
        case .signal(.mediaPath):
            break
        }
    }

    private func start(_ offer: MediaOffer) {
        let (old, session) = state.withLock { state in
            defer { state.engine = nil }
            return (state.engine, state.session)
        }
        if let old {
            let samples = old.stop()
            state.withLock { $0.recorded += samples }
        }
        let output = output
        do {
            let engine = try ClientMedia(
                offer: offer,
                options: ClientMedia.Options(
                    source: options.source, blockUDP: options.blockUDP, record: options.recordPath != nil),
                sendWebSocket: { bytes in session?.sendBinary(bytes) },
                sendControl: { text in session?.sendRaw(text) },
                onEvent: { [self] event in output(line(for: event)) })
            state.withLock { $0.engine = engine }
            engine.start()
        } catch {
            output(BotProtocol.errorLine(code: "media_failed", message: "media could not start: \(error)"))
        }
    }

    /// Room events the bot's microphone cares about: it unmutes when it arrives on stage.
    func observe(_ event: WireEvent) {
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

    /// Stops the engine and writes the recording; returns an error line's message when writing failed.
    func finish() -> String? {
        let engine = state.withLock { state in
            defer { state.engine = nil }
            return state.engine
        }
        let last = engine?.stop() ?? []
        guard let path = options.recordPath else { return nil }
        let samples = state.withLock { $0.recorded } + last
        do {
            let bytes = try WAVAudio(samples: samples).encoded()
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return nil
        } catch {
            return "could not write the recording to \(path): \(error)"
        }
    }

    func line(for event: ClientMediaEvent) -> String {
        let names = state.withLock { $0.names }
        return Self.line(for: event, names: names)
    }

    static func line(for event: ClientMediaEvent, names: [UInt32: String]) -> String {
        switch event {
        case .path(let kind):
            return BotProtocol.line("media_path", [("path", .string(kind.rawValue))])
        case .stats(let path, let speakers, let sent):
            let list = speakers.map { speaker -> JSONValue in
                .object(
                    JSONObject([
                        ("peer", names[speaker.ssrc].map { .string($0) } ?? .null),
                        ("ssrc", .integer(Int64(speaker.ssrc))), ("received", .integer(Int64(speaker.received))),
                        ("lost", .integer(Int64(speaker.lost))),
                        ("recovered_fec", .integer(Int64(speaker.recoveredByFEC))),
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
        }
    }
}
