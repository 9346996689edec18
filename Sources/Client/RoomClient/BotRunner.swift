import Dispatch
import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// A headless client driven by command lines: the engine of `clubroom bot`, reusable by the demo and by
/// anything that wants a scripted peer.
///
/// `run` connects, reports events through `output` (one JSON line each), feeds each input line to the session,
/// and returns when the session ends or, after the input ends, once the bot has left.
public final class BotRunner: Sendable {
    /// How the bot reacts by itself.
    public struct Behaviour: Sendable, Equatable {
        /// Accept invitations to speak without waiting for a command.
        public var autoAccept: Bool
        /// The bot's audio; `nil` joins without media.
        public var media: BotMediaOptions?

        public init(autoAccept: Bool = false, media: BotMediaOptions? = nil) {
            self.autoAccept = autoAccept
            self.media = media
        }
    }

    private let url: String
    private let token: String
    private let behaviour: Behaviour
    private let tls: TLSClientConfiguration
    private let reconnect: ReconnectPolicy
    private let output: @Sendable (String) -> Void
    private let progress = Mutex(Progress())
    private let joined = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    private struct Progress {
        var selfID: PeerID?
        var end: SessionEnd?
        var announcedJoin = false
    }

    /// A bot for `url`, writing each event line with `output` (which must write whole lines and flush them).
    public init(
        url: String, token: String, behaviour: Behaviour = Behaviour(),
        tls: TLSClientConfiguration = TLSClientConfiguration(), reconnect: ReconnectPolicy = ReconnectPolicy(),
        output: @escaping @Sendable (String) -> Void
    ) {
        self.url = url
        self.token = token
        self.behaviour = behaviour
        self.tls = tls
        self.reconnect = reconnect
        self.output = output
    }

    /// Runs the bot until it is over. `input` returns the next line, or nil at the end of input; it is called on a
    /// thread of its own and may block.
    public func run(input: @escaping @Sendable () -> String?) -> BotExitStatus {
        let session: RoomSession
        let media = behaviour.media.map { BotMedia(options: $0, output: output) }
        do {
            var mediaHandler: (@Sendable (SessionMedia) -> Void)?
            if let media { mediaHandler = { media.handle($0) } }
            session = try RoomSession(
                url: url, token: token, tls: tls, reconnect: reconnect, media: mediaHandler
            ) { [self] event in
                if case .message(let message) = event { media?.observe(message.event) }
                if case .reconnected(let message) = event { media?.observe(message.event) }
                handle(event)
            }
        } catch {
            output(BotProtocol.errorLine(code: "connection_failed", message: error.description))
            return .connectionFailed
        }
        acceptor.withLock { $0 = session }
        media?.attach(session)
        session.start()
        joined.wait()
        if progress.withLock({ $0.end == nil }) {
            // The snapshot can arrive a moment before the session has stored its connection.
            for _ in 0..<400 where !session.isConnected { usleep(5000) }
            startThread(named: "bot-input") { [self] in readInput(input, session: session, media: media) }
        }
        done.wait()
        if let problem = media?.finish() { output(BotProtocol.errorLine(code: "record_failed", message: problem)) }
        session.shutdown()
        return progress.withLock { $0.end.map(BotExitStatus.init) ?? .failure }
    }

    private func readInput(_ input: @Sendable () -> String?, session: RoomSession, media: BotMedia?) {
        while let line = input() {
            if progress.withLock({ $0.end != nil }) { return }
            let trimmed = line.trimmingSpaces
            if trimmed.isEmpty { continue }
            do {
                switch try BotProtocol.parse(trimmed) {
                case .leave:
                    session.leave()
                    return
                case .play(let path):
                    guard let media else {
                        output(BotProtocol.errorLine(code: "no_media", message: "this bot joined without media"))
                        continue
                    }
                    media.play(path)
                case .stopPlay:
                    media?.stopPlaying()
                case .request(let request, let id):
                    if !session.send(request, id: id) {
                        output(
                            BotProtocol.errorLine(
                                code: "not_connected", message: "not connected; the command was dropped"))
                    }
                }
            } catch {
                output(BotProtocol.errorLine(code: error.code, message: error.message))
            }
        }
        session.leave()
    }

    /// Runs on the session's loop thread.
    private func handle(_ event: SessionEvent) {
        switch event {
        case .message(let message), .reconnected(let message):
            if case .joined(let snapshot) = message.event {
                progress.withLock { $0.selfID = snapshot.selfID }
            }
            for line in BotProtocol.lines(for: event) { output(line) }
            if case .joined = message.event {
                let first = progress.withLock { progress -> Bool in
                    defer { progress.announcedJoin = true }
                    return !progress.announcedJoin
                }
                if first { joined.signal() }
            }
            if behaviour.autoAccept, case .invited(let peer, _, _) = message.event,
                peer == progress.withLock({ $0.selfID })
            {
                acceptLater()
            }
        case .reconnecting:
            for line in BotProtocol.lines(for: event) { output(line) }
        case .ended(let end):
            if case .connectionFailed(let problem, _) = end {
                output(BotProtocol.errorLine(code: "connection_failed", message: problem))
            }
            if case .refused(let code, let reason) = end {
                output(
                    BotProtocol.errorLine(
                        code: "refused", message: "the server refused the connection (\(code)): \(reason)"))
            }
            let first = progress.withLock { progress -> Bool in
                defer { progress.announcedJoin = true }
                progress.end = end
                return !progress.announcedJoin
            }
            if first { joined.signal() }
            done.signal()
        }
    }

    /// The running session, for the event handler, which is created before the session exists.
    private let acceptor = Mutex<RoomSession?>(nil)

    private func acceptLater() {
        acceptor.withLock { $0 }?.send(.acceptInvite)
    }
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
