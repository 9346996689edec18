import ClientAudio
import Foundation
import RoomApp
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// The real connection: a `RoomSession` (WebSocket, reconnecting) whose wire messages become the room's actions
/// (through the protocol's one mapping), and RoomCore's requests go out as they are (the protocol carries them);
/// with sound, `RoomAudio` plays the room and sends the microphone as the reducer's sound commands say.
public final class SessionConnection: RoomConnection, @unchecked Sendable {
    // @unchecked: `session` is set once in `start` before any event can arrive and only read afterwards, under the
    // lock; this client's identity is behind its own mutex; `clock` is set once.
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
    private let clock: @Sendable () -> Timestamp

    /// A connection to the room at `url`; with `audio`, it plays the room's sound and sends the microphone's
    /// (see ``RoomAudio``), reporting device trouble as notices and the level as `.microphone`. `clock` stamps
    /// the actions it delivers.
    public init(
        url: String, token: String, headers: HTTPHeaders = HTTPHeaders(), withInvite: Bool = false,
        tls: TLSClientConfiguration = TLSClientConfiguration(), audio: RoomAudioSettings? = nil,
        clock: @escaping @Sendable () -> Timestamp = wallClock
    ) {
        self.url = url
        self.token = token
        self.headers = headers
        self.withInvite = withInvite
        self.linkBase = try? ClubroomLink.parse(url).server
        self.tls = tls
        self.audioSettings = audio
        self.clock = clock
    }

    public func start(deliver: @escaping @Sendable (AppAction) -> Void) {
        let clock = self.clock
        let sound = audioSettings.map { settings in
            RoomAudio(settings: settings) { report in
                switch report {
                case .status(let text): deliver(.notice(Notice(.error, text), at: clock()))
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
            if let volumes = sound?.volumes, !volumes.isEmpty {
                deliver(.volumes(Dictionary(uniqueKeysWithValues: volumes.map { (PeerID($0.key), $0.value) })))
            }
            session.start()
        } catch {
            deliver(.sessionEnded("Cannot connect to \(url): \(error.description)", at: clock()))
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

    /// The one place the room's sound commands meet `RoomAudio`.
    public func perform(_ command: SoundCommand) {
        guard let sound = audio.withLock({ $0 }) else { return }
        switch command {
        case .openMicrophone: sound.setCapturing(true)
        case .closeMicrophone: sound.setCapturing(false)
        case .setMuted(let muted): sound.setMuted(muted)
        case .setVolume(let peer, let percent): sound.setVolume(percent, for: peer.rawValue)
        }
    }

    /// A round-trip time in whole milliseconds, rounded, and at least 1 so a fast link does not read "0 ms".
    public static func milliseconds(_ time: Duration) -> Int {
        let parts = time.components
        let microseconds = parts.seconds * 1_000_000 + parts.attoseconds / 1_000_000_000_000
        return max(1, Int((microseconds + 500) / 1000))
    }

    /// The room's actions for a session event, through the client library's `StoreFeed` (the protocol's one
    /// mapping for messages); the role table (already checked as the message was read) comes just before the
    /// snapshot that uses it.
    private func convert(_ event: SessionEvent) -> [AppAction] {
        let now = clock()
        var roles: RoleTable?
        switch event {
        case .ended(let end):
            return [.sessionEnded(Self.describe(end, withInvite: withInvite), at: now)]
        case .message(let message), .reconnected(let message):
            if case .joined(let snapshot) = message.event {
                selfID.withLock { $0 = snapshot.selfID }
                roles = snapshot.roles
            }
        case .reconnecting:
            break
        }
        var actions: [AppAction] = []
        for case .server(let event, let seq) in StoreFeed.actions(
            for: event, selfID: selfID.withLock { $0 }, linkBase: linkBase)
        {
            if case .joined = event, let roles { actions.append(.roles(roles)) }
            actions.append(.server(event, seq: seq, at: now))
        }
        return actions
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
}
