import ClientAudio
import Foundation
import Platform
import RoomApp
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization
import WebSocket

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
    /// Where the microphone preview's levels go (the driver's inbox), once started.
    private let previewDelivery = Mutex<(@Sendable (AppAction) -> Void)?>(nil)
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
        previewDelivery.withLock { $0 = deliver }
        let sound = audioSettings.map { settings in
            RoomAudio(
                settings: settings,
                report: { report in
                    switch report {
                    case .status(let text): deliver(.notice(Notice(.error, text), at: clock()))
                    case .microphone(let level): deliver(.microphone(level: level))
                    case .microphoneMissing(let missing): deliver(.microphoneMissing(missing))
                    case .playing(let playing): deliver(.filePlay(.progress(Self.playingFile(playing))))
                    case .playEnded(let title): deliver(.filePlay(.ended(title: title)))
                    }
                },
                speakers: { heard in deliver(.heard(Self.heardPeers(heard), at: clock())) })
        }
        audio.withLock { $0 = sound }
        do {
            var media: (@Sendable (SessionMedia) -> Void)?
            if let sound { media = { sound.handle($0) } }
            // The screen keeps trying while the person waits (they give up with q); bots give up on their own.
            let session = try RoomSession(
                url: url, token: token, headers: headers, tls: tls, reconnect: ReconnectPolicy(maximumAttempts: .max),
                media: media,
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

    public func retryNow() {
        session.withLock { $0 }?.retryNow()
    }

    /// The one place the room's sound commands meet `RoomAudio`.
    public func perform(_ command: SoundCommand) {
        guard let sound = audio.withLock({ $0 }) else { return }
        switch command {
        case .openMicrophone: sound.setCapturing(true)
        case .closeMicrophone: sound.setCapturing(false)
        case .setMuted(let muted): sound.setMuted(muted)
        case .setVolume(let peer, let percent): sound.setVolume(percent, for: peer.rawValue)
        case .startPreview:
            let deliver = previewDelivery.withLock { $0 }
            sound.startPreview { preview in
                switch preview {
                case .level(let level): deliver?(.preview(.level(level)))
                case .unavailable(let why): deliver?(.preview(.unavailable(why)))
                }
            }
        case .stopPreview: sound.stopPreview()
        case .play(let path):
            let deliver = previewDelivery.withLock { $0 }
            do {
                deliver?(.filePlay(.started(Self.playingFile(try sound.play(path)))))
            } catch {
                deliver?(.filePlay(.refused("\(error.path) \(error.problemDescription).")))
            }
        case .stopPlaying: sound.stopPlaying()
        }
    }

    static func playingFile(_ playing: NowPlaying) -> PlayingFile {
        PlayingFile(title: playing.title, position: playing.position, length: playing.length)
    }

    /// The speakers the sound hears, as the screen takes them: those the server has named, talking while their
    /// spurt lasts (the sound's hold applied).
    static func heardPeers(_ heard: [HeardSpeaker]) -> [HeardPeer] {
        heard.compactMap { speaker in
            speaker.peer.map { HeardPeer(peer: PeerID($0), level: speaker.level, talking: speaker.talkingSince != nil) }
        }
    }

    /// A round-trip time in whole milliseconds, rounded, and at least 1 so a fast link does not read "0 ms".
    public static func milliseconds(_ time: Duration) -> Int {
        max(1, Int((time.inMicroseconds + 500) / 1000))
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
            for: event, selfID: selfID.withLock { $0 }, now: now, linkBase: linkBase)
        {
            if case .joined = event, let roles { actions.append(.roles(roles)) }
            actions.append(.server(event, seq: seq, at: now))
        }
        return actions
    }

    /// Why a session ended, in the person's words: one sentence of what happened and one of what to do, with no
    /// internal codes. `withInvite` words a refusal for someone who came with an invite link rather than a token.
    public static func describe(_ end: SessionEnd, withInvite: Bool = false) -> String {
        switch end {
        case .left: return "You left the room."
        case .closedByServer(let reason):
            return "The server closed the connection\(reason.isEmpty ? "" : " (\(reason))"). Join again to come back."
        case .removed: return "You were removed from the room."
        case .roomEnded: return "The room has ended."
        case .replaced:
            return "You joined this room from somewhere else as the same person (another terminal of this account), "
                + "so this screen was closed. To be two people on one machine, join with --profile NAME."
        case .refused(let code, let reason):
            return Refusals.describe(code: code, reason: reason, withInvite: withInvite)
        case .connectionFailed(let problem, let cause): return unreachable(problem, cause)
        }
    }

    /// A connection that could not be made, in words, from why (`cause`); `problem`, the transport's own words,
    /// is quoted only when the cause says nothing a person can act on.
    static func unreachable(_ problem: String, _ cause: ConnectionFailureCause) -> String {
        let lastTry: TransportError.Cause
        let lost: Bool
        switch cause {
        case .unreachable(let transport): (lastTry, lost) = (transport, false)
        case .lost(let transport): (lastTry, lost) = (transport, true)
        }
        switch lastTry {
        case .httpStatus(404):
            return "There is no room at this address. Room addresses look like ws://HOST:PORT/rooms/ROOM."
        case .notTLS:
            return
                "The server at this address does not speak TLS. If it is a plain server, use ws:// instead of wss://."
        case .untrustedCertificate:
            return
                "The server's TLS certificate could not be trusted. Check the address, or ask the host which certificate to trust."
        case .refused:
            return "Nothing answers at this address. Check the address and port, and that the server runs."
        case .timedOut:
            return "The server did not answer in time. Check the address, and try again."
        case .unresolved:
            return "The server's name could not be found. Check the address."
        case .httpStatus, .connectTimedOut, .other:
            if lost { return "The connection was lost and could not be made again. Check your network and join again." }
            return "The room could not be reached (\(problem)). Check the address and try again."
        }
    }
}
