import Dispatch
import Platform
import RoomTransport
import Synchronization
import WebSocket

/// What a reconnecting session keeps beside its connection, told of the connection's turns under the same lock
/// as the connection itself, so that the two never disagree.
protocol ReconnectingSocketExtra: Sendable {
    init()
    /// A new connection is about to be made.
    mutating func connecting()
    /// The new connection is stored: returns the text messages that waited for it, to send now.
    mutating func connected() -> [String]
    /// The current connection closed.
    mutating func disconnected()
    /// The connection is lost and a retry is being scheduled.
    mutating func retrying()
}

extension ReconnectingSocketExtra {
    mutating func connecting() {}
    mutating func connected() -> [String] { [] }
    mutating func disconnected() {}
    mutating func retrying() {}
}

/// The state of a reconnecting session's connection, with what the session itself adds in `extra`.
struct ReconnectingSocketState<Extra: ReconnectingSocketExtra>: Sendable {
    var client: WebSocketClient?
    /// Counts connections, so a late callback of an old one is recognised and ignored.
    var generation = 0
    /// The retry in progress, from 1; 0 while connected or before the first loss.
    var attempt = 0
    /// Whether the server ever answered this session in full (its first snapshot or list): only then is a lost
    /// connection retried.
    var everConnected = false
    /// Set once the person asked to stop: no connection is made after it.
    var stopping = false
    var ended = false
    /// Counts scheduled retries, so one that was overtaken by `retryNow` does nothing when its time comes.
    var retryTicket = 0
    /// Whether a retry is scheduled and not yet started.
    var retryPending = false
    var extra = Extra()

    /// The server answered in full: later losses are retried, and the next one's backoff starts again.
    mutating func established() {
        everConnected = true
        attempt = 0
    }
}

/// What a reconnecting session holds: its server, its event loop and connecting queue, its connection's
/// state and the way its events go out.
final class ReconnectingSocket<Extra: ReconnectingSocketExtra, Event: Sendable>: Sendable {
    let url: String
    let tls: TLSClientConfiguration
    let policy: ReconnectPolicy
    let loop: EventLoop
    let connector: DispatchQueue
    let state = Mutex(ReconnectingSocketState<Extra>())
    private let handler: @Sendable (Event) -> Void
    private let reconnectingEvent: @Sendable (_ attempt: Int, _ delay: Duration) -> Event
    private let endedEvent: @Sendable (SessionEnd) -> Event

    /// `handler` receives every event on the loop thread; `reconnecting` and `ended` make the session's own
    /// events for a scheduled retry and for the end.
    init(
        url: String, tls: TLSClientConfiguration, policy: ReconnectPolicy, loopName: String, connectorLabel: String,
        handler: @escaping @Sendable (Event) -> Void,
        reconnecting: @escaping @Sendable (_ attempt: Int, _ delay: Duration) -> Event,
        ended: @escaping @Sendable (SessionEnd) -> Event
    ) throws(TransportError) {
        self.url = url
        self.tls = tls
        self.policy = policy
        self.handler = handler
        self.reconnectingEvent = reconnecting
        self.endedEvent = ended
        self.loop = try EventLoop(name: loopName)
        self.connector = DispatchQueue(label: connectorLabel)
    }

    /// The open connection, if any.
    var client: WebSocketClient? { state.withLock { $0.client } }

    /// Marks the session as stopping and returns the connection to close, if one is open.
    func stop() -> WebSocketClient? {
        state.withLock { state -> WebSocketClient? in
            state.stopping = true
            return state.client
        }
    }

    /// Closes the connection and stops the loop's thread.
    func shutdown() {
        client?.close(code: .goingAway, reason: "")
        loop.shutdown()
    }

    /// Forgets connection `generation` as it closes: returns whether the session was stopping and had ever
    /// connected, or nil when that connection was an old one.
    func closed(generation: Int) -> (stopping: Bool, everConnected: Bool)? {
        state.withLock { state in
            guard state.generation == generation else { return nil }
            state.client = nil
            state.extra.disconnected()
            return (state.stopping, state.everConnected)
        }
    }

    /// Ends the session, once: the ended event goes out and nothing follows it.
    func finish(_ end: SessionEnd) {
        let first = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            state.ended = true
            return true
        }
        if first { deliver(endedEvent(end)) }
    }

    /// Hands an event to the handler on the loop thread.
    func deliver(_ event: Event) {
        if loop.inLoop {
            handler(event)
        } else {
            loop.execute { [handler] in handler(event) }
        }
    }

    /// The event announcing retry `attempt` after `delay`.
    func reconnecting(attempt: Int, delay: Duration) -> Event { reconnectingEvent(attempt, delay) }
}

/// A session that keeps one WebSocket connection to the server and makes it again, with jittered exponential
/// backoff, when it drops: `RoomSession` and `DirectorySession`. The session builds each connection's options
/// and callbacks and says what a close means; the connecting, the retries and the end are written here once.
protocol ReconnectingSession: AnyObject, Sendable {
    associatedtype Extra: ReconnectingSocketExtra
    associatedtype Event: Sendable
    var socket: ReconnectingSocket<Extra, Event> { get }
    /// Makes a fresh connection: builds its options and headers and hands them to `open(options:headers:bearer:)`.
    func connect()
    /// The callbacks of connection `generation`.
    func connectionHandler(generation: Int) -> WebSocketClient.Handler
}

extension ReconnectingSession {
    /// Connects in the background.
    func startConnecting() {
        socket.connector.async { self.connect() }
    }

    /// Opens a connection with these options and headers, and `token` as its bearer, unless the session is over or
    /// stopping. A failure before the server ever answered ends the session; after that it is retried.
    func open(options: WebSocketOptions, headers given: HTTPHeaders, bearer token: String) {
        var headers = given
        headers.add("Authorization", "Bearer \(token)")
        let generation = socket.state.withLock { state -> Int? in
            guard !state.ended, !state.stopping else { return nil }
            state.generation += 1
            state.extra.connecting()
            return state.generation
        }
        guard let generation else { return }
        do {
            let client = try WebSocketClient.connect(
                to: socket.url, headers: headers, tls: socket.tls, options: options, loop: socket.loop,
                handler: connectionHandler(generation: generation))
            let waiting = socket.state.withLock { state -> [String]? in
                guard state.generation == generation, !state.ended else { return nil }
                state.client = client
                return state.extra.connected()
            }
            if let waiting {
                for text in waiting { client.send(text: text) }
            } else {
                client.close(code: .goingAway, reason: "")
            }
        } catch {
            if socket.state.withLock({ $0.everConnected }) {
                socket.loop.execute { [self] in retry(after: error.description, cause: error.cause) }
            } else {
                socket.finish(.connectionFailed(error.description, cause: .unreachable(error.cause)))
            }
        }
    }

    /// Schedules the next connection attempt after the policy's delay, or gives up once every retry failed.
    /// Runs on the loop thread.
    func retry(after problem: String, cause: TransportError.Cause = .other) {
        let attempt = socket.state.withLock { state -> Int? in
            guard !state.ended, !state.stopping else { return nil }
            state.attempt += 1
            state.extra.retrying()
            return state.attempt
        }
        guard let attempt else { return }
        let policy = socket.policy
        guard attempt <= policy.maximumAttempts else {
            socket.finish(
                .connectionFailed(
                    "lost the connection and \(policy.maximumAttempts) retries failed: \(problem)",
                    cause: .lost(lastTry: cause)))
            return
        }
        let delay = policy.delay(attempt: attempt, random: Double.random(in: 0..<1))
        let ticket = socket.state.withLock { state -> Int in
            state.retryTicket += 1
            state.retryPending = true
            return state.retryTicket
        }
        socket.deliver(socket.reconnecting(attempt: attempt, delay: delay))
        let milliseconds = Int(delay.inMilliseconds)
        socket.connector.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
            let due = socket.state.withLock { state -> Bool in
                guard state.retryTicket == ticket, state.retryPending else { return false }
                state.retryPending = false
                return true
            }
            if due { connect() }
        }
    }

    /// While the connection is down and a retry is scheduled, tries now instead; does nothing otherwise.
    func retryScheduledNow() {
        let go = socket.state.withLock { state -> Bool in
            guard state.retryPending, !state.ended, !state.stopping else { return false }
            state.retryPending = false
            state.retryTicket += 1
            return true
        }
        if go { socket.connector.async { [self] in connect() } }
    }
}
