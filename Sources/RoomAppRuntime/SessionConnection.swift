import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// The real connection: a `RoomSession` (WebSocket, reconnecting) whose wire messages are turned into RoomCore's
/// events; RoomCore's requests go out as they are (the protocol carries them).
public final class SessionConnection: RoomConnection, @unchecked Sendable {
    // @unchecked: `session` is set once in `start` before any event can arrive and only read afterwards, under the
    // lock; this client's identity is behind its own mutex.
    private let url: String
    private let token: String
    private let headers: HTTPHeaders
    /// Whether the token is an invite (so refusals speak of the link).
    private let withInvite: Bool
    /// The server, for the invite links this client asks for (`/link`).
    private let linkBase: ServerAddress?
    private let tls: TLSClientConfiguration
    private let session = Mutex<RoomSession?>(nil)
    private let selfID = Mutex<PeerID?>(nil)
    private let audioSettings: RoomAudioSettings?
    private let audio = Mutex<RoomAudio?>(nil)

    /// A connection to the room at `url`; with `audio`, it plays the room's sound and sends the microphone's
    /// (see ``RoomAudio``), reporting device trouble as notices and the level as `.microphone`.
    public init(
        url: String, token: String, headers: HTTPHeaders = HTTPHeaders(), withInvite: Bool = false,
        tls: TLSClientConfiguration = TLSClientConfiguration(), audio: RoomAudioSettings? = nil
    ) {
        self.url = url
        self.token = token
        self.headers = headers
        self.withInvite = withInvite
        self.linkBase = try? ClubroomLink.parse(url).server
        self.tls = tls
        self.audioSettings = audio
    }

    /// How many times the microphone was opened so far (0 without sound).
    public var microphoneOpenings: Int { audio.withLock { $0 }?.microphoneOpenings ?? 0 }

    public func start(deliver: @escaping @Sendable (ConnectionEvent) -> Void) {
        let sound = audioSettings.map { settings in
            RoomAudio(settings: settings) { report in
                switch report {
                case .status(let text): deliver(.notice(Notice(.error, text)))
                case .microphone(let level): deliver(.microphone(level: level))
                }
            }
        }
        audio.withLock { $0 = sound }
        do {
            var media: (@Sendable (SessionMedia) -> Void)?
            if let sound { media = { sound.handle($0) } }
            let session = try RoomSession(
                url: url, token: token, headers: headers, tls: tls, media: media,
                roundTrip: { deliver(.roundTrip(milliseconds: Self.milliseconds($0))) }
            ) { [self] event in
                for converted in convert(event) { deliver(converted) }
            }
            self.session.withLock { $0 = session }
            sound?.attach(session)
            sound?.start()
            if let volumes = sound?.volumes, !volumes.isEmpty { deliver(.volumes(volumes)) }
            session.start()
        } catch {
            deliver(.ended("Cannot connect to \(url): \(error.description)"))
        }
    }

    public func send(_ request: ClientRequest) {
        guard let session = session.withLock({ $0 }) else { return }
        if case .leave = request {
            session.leave()
        } else {
            session.send(request)
        }
    }

    public func leave() {
        guard let session = session.withLock({ $0 }) else { return }
        session.leave()
    }

    public func shutdown() {
        audio.withLock { $0 }?.stop()
        session.withLock { $0 }?.shutdown()
    }

    public func setAudio(mayPublish: Bool, muted: Bool) {
        guard let sound = audio.withLock({ $0 }) else { return }
        sound.setMuted(muted)
        sound.setCapturing(mayPublish)
    }

    public func setVolume(_ percent: Int, for peer: PeerID) {
        audio.withLock { $0 }?.setVolume(percent, for: peer.rawValue)
    }

    /// A round-trip time in whole milliseconds, rounded, and at least 1 so a fast link does not read "0 ms".
    public static func milliseconds(_ time: Duration) -> Int {
        let parts = time.components
        let microseconds = parts.seconds * 1_000_000 + parts.attoseconds / 1_000_000_000_000
        return max(1, Int((microseconds + 500) / 1000))
    }

    private func convert(_ event: SessionEvent) -> [ConnectionEvent] {
        switch event {
        case .message(let message): return convert(message)
        case .reconnecting(let attempt, _): return [.server(.reconnecting(attempt: attempt), seq: 0)]
        case .reconnected(let message): return [.server(.reconnected, seq: 0)] + convert(message)
        case .ended(let end): return [.ended(Self.describe(end, withInvite: withInvite))]
        }
    }

    /// Why a session ended, in plain words with what to do next.
    public static func describe(_ end: SessionEnd, withInvite: Bool = false) -> String {
        switch end {
        case .left: "You left the room."
        case .removed: "You were removed from the room."
        case .roomEnded: "The room has ended."
        case .replaced: "You joined this room from somewhere else, so this screen was closed."
        case .refused(let code, let reason): Refusals.describe(code: code, reason: reason, withInvite: withInvite)
        case .connectionFailed(let problem): "Cannot reach the room: \(problem). Check the address and try again."
        }
    }

    /// RoomCore's events for a wire message, through the protocol's one mapping; the role table (already
    /// checked as the message was read) comes first with a snapshot.
    private func convert(_ message: ServerMessage) -> [ConnectionEvent] {
        var events: [ConnectionEvent] = []
        if case .joined(let snapshot) = message.event {
            selfID.withLock { $0 = snapshot.selfID }
            events.append(.roles(snapshot.roles))
        }
        let me = selfID.withLock { $0 }
        for action in message.roomActions(selfID: me, linkBase: linkBase) {
            if case .server(let event, let seq) = action { events.append(.server(event, seq: seq)) }
        }
        return events
    }
}
