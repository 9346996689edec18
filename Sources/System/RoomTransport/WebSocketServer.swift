import CEventPoll
import Dispatch
import Glibc
import Synchronization
import WebSocket

/// A WebSocket server on one event loop: accepts TCP (or TLS) connections, runs the HTTP upgrade, and hands
/// complete messages to its handler.
///
/// Every handler callback runs on ``loop``'s thread, one at a time, so room logic may run there directly or
/// hand messages to a queue of its own. A callback must not block.
public final class WebSocketServer: @unchecked Sendable {
    // Safe to share: `listener`, `connections` and `listening` are touched only on the loop thread; `count` is
    // behind a mutex; the rest is immutable.

    /// What the server application does at each step of a connection's life.
    public struct Handler: Sendable {
        /// Decides on an upgrade request: the path, the token, anything in the headers.
        public var onUpgrade: @Sendable (WebSocketUpgradeRequest, WebSocketConnection) -> UpgradeDecision
        /// The connection is open; ``WebSocketConnection/request`` holds its request.
        public var onOpen: @Sendable (WebSocketConnection) -> Void
        /// A complete text or binary message arrived.
        public var onMessage: @Sendable (WebSocketConnection, WebSocketPayload) -> Void
        /// The connection closed (exactly once per opened connection): the close code and reason of the closing
        /// handshake, 1006 when the peer vanished, or the code this side closed with.
        public var onClose: @Sendable (WebSocketConnection, WebSocketCloseCode, String) -> Void
        /// A connection ended before it opened (TLS or HTTP handshake failed, timed out, or the peer left): the
        /// peer's address and the problem. Rejected upgrades answered with an HTTP status are not reported here.
        public var onFailedHandshake: @Sendable (String, String) -> Void
        /// The process ran out of file descriptors, so new connections are refused (HTTP 503, one at a time, on
        /// a descriptor kept in reserve for it): called once when such a burst begins (its first refusal), with nil,
        /// and once when a connection is accepted a second or more after the last refusal, with how many were
        /// refused meanwhile.
        public var onDescriptorsExhausted: @Sendable (_ refusedWhenOver: Int?) -> Void

        public init(
            onUpgrade: @escaping @Sendable (WebSocketUpgradeRequest, WebSocketConnection) -> UpgradeDecision = {
                _, _ in .accept
            },
            onOpen: @escaping @Sendable (WebSocketConnection) -> Void = { _ in },
            onMessage: @escaping @Sendable (WebSocketConnection, WebSocketPayload) -> Void = { _, _ in },
            onClose: @escaping @Sendable (WebSocketConnection, WebSocketCloseCode, String) -> Void = { _, _, _ in },
            onFailedHandshake: @escaping @Sendable (String, String) -> Void = { _, _ in },
            onDescriptorsExhausted: @escaping @Sendable (_ refusedWhenOver: Int?) -> Void = { _ in }
        ) {
            self.onUpgrade = onUpgrade
            self.onOpen = onOpen
            self.onMessage = onMessage
            self.onClose = onClose
            self.onFailedHandshake = onFailedHandshake
            self.onDescriptorsExhausted = onDescriptorsExhausted
        }
    }

    /// The port actually bound (useful after listening on port 0).
    public let port: Int
    /// The loop every connection of this server runs on.
    public let loop: EventLoop
    private let ownsLoop: Bool
    private let listener: Listener
    private var connections: [Int: WebSocketConnection] = [:]
    private let count = Mutex(0)
    private let freedMemory = FreedMemory()
    private let stopped = Mutex(false)

    /// Listens on `host:port` (port 0 picks a free one) and starts serving, with TLS when `tls` is given.
    /// Without `loop` the server starts a loop of its own and stops it at ``shutdown()``.
    public init(
        host: String = "127.0.0.1", port: Int, tls: TLSServerConfiguration? = nil,
        options: WebSocketOptions = WebSocketOptions(), loop: EventLoop? = nil, handler: Handler
    ) throws(TransportError) {
        let tlsContext = try tls.map { configuration throws(TransportError) in try TLSContext.server(configuration) }
        let (descriptor, boundPort) = try Socket.listen(host: host, port: port)
        self.port = boundPort
        if let loop {
            self.loop = loop
            ownsLoop = false
        } else {
            do {
                self.loop = try EventLoop(name: "clubroom-server")
            } catch {
                Glibc.close(descriptor)
                throw error
            }
            ownsLoop = true
        }
        listener = Listener(
            descriptor: descriptor, loop: self.loop, tls: tlsContext, options: options, handler: handler)
        listener.server = self
        self.loop.execute { [self] in
            do {
                try self.loop.register(listener.descriptor, listener, writable: false)
            } catch {
                listener.closeDescriptor()
            }
        }
    }

    /// The number of connections not yet fully closed.
    public var connectionCount: Int { count.withLock { $0 } }

    /// Stops accepting, closes every connection with 1001, waits briefly for them to finish, and stops the loop
    /// if the server started it. Called on the loop thread, it drops the connections at once instead of waiting.
    public func shutdown() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        let stop: @Sendable (WebSocketServer) -> Void = { server in
            server.listener.stop(server.loop)
            for connection in server.connections.values {
                connection.closeOnLoop(code: .goingAway, reason: "server shutting down")
            }
        }
        if loop.inLoop {
            stop(self)
            for connection in connections.values { connection.terminate() }
            if ownsLoop { loop.shutdown() }
            return
        }
        loop.execute { [self] in stop(self) }
        var waited = 0
        while connectionCount > 0 && waited < 100 {
            usleep(10_000)
            waited += 1
        }
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            for connection in connections.values { connection.terminate() }
            done.signal()
        }
        _ = done.wait(timeout: .now() + .seconds(5))
        if ownsLoop { loop.shutdown() }
    }

    /// The answer to a connection accepted on the reserve descriptor while the process has no others.
    static let exhaustedReason = "the server is out of file descriptors; try again later"

    /// Starts a connection on an accepted descriptor. With `refusing`, its upgrade is answered with HTTP 503
    /// whatever it asks, and `refusing` runs when it has ended.
    fileprivate func accepted(_ descriptor: Int32, _ address: String, refusing: (() -> Void)? = nil) {
        let handler = listener.handler
        var events = ConnectionEvents()
        if refusing != nil {
            events.upgrade = { _, _ in .reject(status: 503, reason: Self.exhaustedReason) }
        } else {
            events.upgrade = { request, connection in handler.onUpgrade(request, connection) }
        }
        events.open = { handler.onOpen($0) }
        events.message = { handler.onMessage($0, $1) }
        events.close = { handler.onClose($0, $1, $2) }
        events.failedBeforeOpen = { handler.onFailedHandshake(address, $0.problem) }
        events.finished = { [weak self] connection in
            refusing?()
            guard let self else { return }
            connections[connection.id] = nil
            count.withLock { $0 -= 1 }
            freedMemory.connectionEnded(on: loop)
        }
        let stream: ByteStream
        if let tls = listener.tls {
            do {
                stream = try TLSStream(context: tls, descriptor: descriptor, clientHost: nil)
            } catch {
                Glibc.close(descriptor)
                refusing?()
                return
            }
        } else {
            stream = PlainStream(descriptor: descriptor)
        }
        var options = listener.options
        // A refused connection holds the reserve descriptor: it gets a second to send its request, not ten.
        if refusing != nil { options.handshakeTimeout = min(options.handshakeTimeout, .seconds(1)) }
        let connection = WebSocketConnection(
            loop: loop, descriptor: descriptor, remoteAddress: address,
            localAddress: Socket.localAddress(descriptor), role: .server, stream: stream,
            isTLS: listener.tls != nil, connecting: false, options: options, events: events)
        // Counted before it starts: a TLS handshake that fails at once finishes the connection inside start().
        connections[connection.id] = connection
        count.withLock { $0 += 1 }
        do {
            try connection.start()
        } catch {
            connections[connection.id] = nil
            count.withLock { $0 -= 1 }
            stream.close()
            refusing?()
        }
    }
}

/// Gives memory back to the system once many connections have ended (a crowd leaving at once): their buffers
/// are free, but the C library keeps freed memory for reuse unless asked to return it. At most once a second,
/// after at least 64 connections ended since the last time, on a thread of its own. Loop thread only, which makes
/// the unchecked sendability safe: its timer runs on the same loop.
final class FreedMemory: @unchecked Sendable {
    static let threshold = 64
    private var endedSinceReturn = 0
    private var scheduled = false

    func connectionEnded(on loop: EventLoop) {
        endedSinceReturn += 1
        guard endedSinceReturn >= Self.threshold, !scheduled else { return }
        scheduled = true
        loop.schedule(after: .seconds(1)) { [self] in
            scheduled = false
            endedSinceReturn = 0
            DispatchQueue.global(qos: .utility).async { _ = malloc_trim(0) }
        }
    }
}

/// The listening socket; loop thread only.
private final class Listener: EventLoopHandler {
    let descriptor: Int32
    let loop: EventLoop
    let tls: TLSContext?
    let options: WebSocketOptions
    let handler: WebSocketServer.Handler
    weak var server: WebSocketServer?
    private var open = true
    private var paused = false
    /// A descriptor kept open in reserve: when the process has no other, it is given up to accept one waiting
    /// connection and answer it 503 rather than leave it hanging in the backlog; reopened once that one ends.
    private var reserve: Int32 = Listener.openReserve()
    /// Connections refused since descriptors ran out; nil while they have not.
    private var refusedInBurst: Int?
    /// When the last connection was refused. A burst ends with the first connection accepted at least
    /// `burstQuiet` after it, so one burst is reported once however its refusals and accepts interleave.
    private var lastRefusal: Int64 = 0
    static let burstQuietMilliseconds: Int64 = 1000

    static func openReserve() -> Int32 { Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC) }

    init(
        descriptor: Int32, loop: EventLoop, tls: TLSContext?, options: WebSocketOptions,
        handler: WebSocketServer.Handler
    ) {
        self.descriptor = descriptor
        self.loop = loop
        self.tls = tls
        self.options = options
        self.handler = handler
    }

    func handle(events: UInt32) {
        // Bounded per wake-up so a flood of connects cannot starve connections already open.
        for _ in 0..<256 {
            guard open else { return }
            guard let server else {
                // The server was released without shutdown(): stop listening rather than spin on the backlog.
                stop(loop)
                return
            }
            switch Socket.accept(descriptor) {
            case .connection(let accepted, let address):
                if let refused = refusedInBurst, EventLoop.now() - lastRefusal >= Self.burstQuietMilliseconds {
                    refusedInBurst = nil
                    handler.onDescriptorsExhausted(refused)
                }
                server.accepted(accepted, address)
            case .noneWaiting:
                return
            case .exhausted:
                if reserve >= 0 {
                    Glibc.close(reserve)
                    reserve = -1
                    if case .connection(let accepted, let address) = Socket.accept(descriptor) {
                        if refusedInBurst == nil { handler.onDescriptorsExhausted(nil) }
                        refusedInBurst = (refusedInBurst ?? 0) + 1
                        lastRefusal = EventLoop.now()
                        server.accepted(accepted, address) { [self] in
                            if open && reserve < 0 { reserve = Self.openReserve() }
                        }
                        continue
                    }
                    reserve = Self.openReserve()
                }
                // Out of descriptors, the reserve in use: with level-triggered epoll the listener would spin, so
                // stop watching it until the next tick, when connections may have closed.
                paused = true
                loop.pause(descriptor)
                loop.tick(noLaterThan: EventLoop.now() + EventLoop.tickMilliseconds)
                return
            }
        }
    }

    func tick(nowMilliseconds: Int64) -> Int64? {
        guard paused, open else { return nil }
        paused = false
        loop.update(descriptor, writable: false)
        return nil
    }

    func loopStopping() { closeDescriptor() }

    func stop(_ loop: EventLoop) {
        guard open else { return }
        loop.unregister(descriptor)
        closeDescriptor()
    }

    func closeDescriptor() {
        guard open else { return }
        open = false
        Glibc.close(descriptor)
        if reserve >= 0 {
            Glibc.close(reserve)
            reserve = -1
        }
    }
}
