import CEventPoll
import Dispatch
import Glibc
import RoomProtocol
import Synchronization

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

        public init(
            onUpgrade: @escaping @Sendable (WebSocketUpgradeRequest, WebSocketConnection) -> UpgradeDecision = {
                _, _ in .accept
            },
            onOpen: @escaping @Sendable (WebSocketConnection) -> Void = { _ in },
            onMessage: @escaping @Sendable (WebSocketConnection, WebSocketPayload) -> Void = { _, _ in },
            onClose: @escaping @Sendable (WebSocketConnection, WebSocketCloseCode, String) -> Void = { _, _, _ in },
            onFailedHandshake: @escaping @Sendable (String, String) -> Void = { _, _ in }
        ) {
            self.onUpgrade = onUpgrade
            self.onOpen = onOpen
            self.onMessage = onMessage
            self.onClose = onClose
            self.onFailedHandshake = onFailedHandshake
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

    fileprivate func accepted(_ descriptor: Int32, _ address: String) {
        let handler = listener.handler
        var events = ConnectionEvents()
        events.upgrade = { request, connection in handler.onUpgrade(request, connection) }
        events.open = { handler.onOpen($0) }
        events.message = { handler.onMessage($0, $1) }
        events.close = { handler.onClose($0, $1, $2) }
        events.failedBeforeOpen = { handler.onFailedHandshake(address, $0.problem) }
        events.finished = { [weak self] connection in
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
                return
            }
        } else {
            stream = PlainStream(descriptor: descriptor)
        }
        let connection = WebSocketConnection(
            loop: loop, descriptor: descriptor, remoteAddress: address,
            localAddress: Socket.localAddress(descriptor), role: .server, stream: stream,
            isTLS: listener.tls != nil, connecting: false, options: listener.options, events: events)
        // Counted before it starts: a TLS handshake that fails at once finishes the connection inside start().
        connections[connection.id] = connection
        count.withLock { $0 += 1 }
        do {
            try connection.start()
        } catch {
            connections[connection.id] = nil
            count.withLock { $0 -= 1 }
            stream.close()
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
                server.accepted(accepted, address)
            case .noneWaiting:
                return
            case .exhausted:
                // Out of descriptors: with level-triggered epoll the listener would spin, so stop watching it
                // until the next tick, when connections may have closed.
                paused = true
                loop.pause(descriptor)
                return
            }
        }
    }

    func tick(nowMilliseconds: Int64) {
        guard paused, open else { return }
        paused = false
        loop.update(descriptor, writable: false)
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
    }
}
