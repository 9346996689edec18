import Dispatch
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// What a lobby's connection to the room directory reports, in order, on its loop's thread.
public enum DirectoryEvent: Sendable, Equatable {
    /// The whole list of live rooms (on connecting, after a reconnect, or when asked): it replaces what came before.
    case rooms([RoomListing])
    /// Rooms that started, changed or ended. A change may repeat one the last list already held; apply it as
    /// the room's state now (added and updated set it, removed takes it away).
    case changed([ListingChange])
    /// The connection dropped; the session tries again (attempts count from 1).
    case reconnecting(attempt: Int)
    /// The directory refused a request.
    case error(code: String, message: String)
    /// The session is over; nothing follows.
    case ended(SessionEnd)
}

/// A lobby's connection to a server's room directory (`/rooms`): connects with a server invite, reports the
/// list and its changes, asks for the whole list again when it notices a gap in the numbers, and reconnects
/// with backoff when the connection drops, until it is stopped or refused.
public final class DirectorySession: Sendable {
    public let url: String
    private let token: String
    private let headers: HTTPHeaders
    private let tls: TLSClientConfiguration
    private let policy: ReconnectPolicy
    private let handler: @Sendable (DirectoryEvent) -> Void
    private let loop: EventLoop
    private let connector = DispatchQueue(label: "clubroom.directory.connect")
    private let state = Mutex(State())

    private struct State {
        var client: WebSocketClient?
        var generation = 0
        var attempt = 0
        var everConnected = false
        var lastSeq: Int64?
        var stopping = false
        var ended = false
    }

    /// A session to the directory at `url` (`…/rooms`); nothing happens until `start()`.
    public init(
        url: String, token: String, headers: HTTPHeaders = HTTPHeaders(),
        tls: TLSClientConfiguration = TLSClientConfiguration(), reconnect: ReconnectPolicy = ReconnectPolicy(),
        handler: @escaping @Sendable (DirectoryEvent) -> Void
    ) throws(TransportError) {
        self.url = url
        self.token = token
        self.headers = headers
        self.tls = tls
        self.policy = reconnect
        self.handler = handler
        self.loop = try EventLoop(name: "clubroom-lobby")
    }

    /// Connects in the background.
    public func start() {
        connector.async { self.connect() }
    }

    /// Asks for the whole list again; false while the connection is down.
    @discardableResult
    public func refresh() -> Bool {
        guard let client = state.withLock({ $0.client }) else { return false }
        client.send(text: String(decoding: DirectoryCodec.encode(.list), as: UTF8.self))
        return true
    }

    /// Closes the connection; the session ends with `.left`.
    public func stop() {
        let client = state.withLock { state -> WebSocketClient? in
            state.stopping = true
            return state.client
        }
        if let client {
            client.close(code: .normal, reason: "left")
        } else {
            finish(.left)
        }
    }

    /// Stops the session's thread; call once it has ended, from another thread.
    public func shutdown() {
        state.withLock { $0.client }?.close(code: .goingAway, reason: "")
        loop.shutdown()
    }

    private func connect() {
        let generation = state.withLock { state -> Int? in
            guard !state.ended, !state.stopping else { return nil }
            state.generation += 1
            state.lastSeq = nil
            return state.generation
        }
        guard let generation else { return }
        var options = WebSocketOptions()
        options.maxMessageSize = DirectoryCodec.maxMessageBytes
        var headers = self.headers
        headers.add("Authorization", "Bearer \(token)")
        let clientHandler = WebSocketClient.Handler(
            onMessage: { [self] payload in received(payload, generation: generation) },
            onClose: { [self] code, reason in closed(code: code, reason: reason, generation: generation) })
        do {
            let client = try WebSocketClient.connect(
                to: url, headers: headers, tls: tls, options: options, loop: loop, handler: clientHandler)
            let keep = state.withLock { state -> Bool in
                guard state.generation == generation, !state.ended else { return false }
                state.client = client
                return true
            }
            if !keep { client.close(code: .goingAway, reason: "") }
        } catch {
            if state.withLock({ $0.everConnected }) {
                loop.execute { [self] in retry(after: error.description) }
            } else {
                finish(.connectionFailed(error.description))
            }
        }
    }

    private func received(_ payload: WebSocketPayload, generation: Int) {
        guard case .text(let text) = payload else { return }
        let message: DirectoryMessage
        do {
            message = try DirectoryCodec.decodeMessage(Array(text.utf8))
        } catch {
            // A newer server's unknown messages are skipped; anything else unreadable is said.
            if error.code != .unknownType { deliver(.error(code: error.code.rawValue, message: error.message)) }
            return
        }
        enum Step { case skip, deliver, deliverAndRefresh }
        let step = state.withLock { state -> Step in
            guard state.generation == generation, !state.ended else { return .skip }
            switch message {
            case .rooms(_, let seq):
                state.everConnected = true
                state.attempt = 0
                state.lastSeq = seq
                return .deliver
            case .changed(_, let seq, _):
                guard let last = state.lastSeq else { return .skip }
                state.lastSeq = seq
                return message.follows(last) ? .deliver : .deliverAndRefresh
            case .error:
                return .deliver
            }
        }
        switch message {
        case .rooms(let rooms, _): if step != .skip { deliver(.rooms(rooms)) }
        case .changed(let changes, _, _): if step != .skip { deliver(.changed(changes)) }
        case .error(let code, let text): if step != .skip { deliver(.error(code: code.rawValue, message: text)) }
        }
        // A gap: some change never arrived, so the list may be wrong; the whole list puts it right.
        if step == .deliverAndRefresh { refresh() }
    }

    private func closed(code: WebSocketCloseCode, reason: String, generation: Int) {
        let (current, stopping, everConnected) = state.withLock { state in
            let current = state.generation == generation
            if current { state.client = nil }
            return (current, state.stopping, state.everConnected)
        }
        guard current else { return }
        if stopping || code.rawValue == 1000 {
            finish(.left)
        } else if (4000...4099).contains(code.rawValue) {
            finish(.refused(code: code.rawValue, reason: reason))
        } else if everConnected {
            retry(after: "closed \(code.rawValue) \(reason)")
        } else {
            finish(.connectionFailed("the server closed the connection (\(code.rawValue) \(reason))"))
        }
    }

    private func retry(after problem: String) {
        let attempt = state.withLock { state -> Int? in
            guard !state.ended, !state.stopping else { return nil }
            state.attempt += 1
            return state.attempt
        }
        guard let attempt else { return }
        guard attempt <= policy.maximumAttempts else {
            finish(.connectionFailed("lost the connection and \(policy.maximumAttempts) retries failed: \(problem)"))
            return
        }
        deliver(.reconnecting(attempt: attempt))
        let delay = policy.delay(attempt: attempt, random: Double.random(in: 0..<1))
        let milliseconds = Int(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
        connector.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in connect() }
    }

    private func finish(_ end: SessionEnd) {
        let first = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.ended = true
            return true
        }
        if first { deliver(.ended(end)) }
    }

    private func deliver(_ event: DirectoryEvent) {
        if loop.inLoop {
            handler(event)
        } else {
            loop.execute { [handler] in handler(event) }
        }
    }
}
