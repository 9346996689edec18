import Crypto
import Dispatch
import Platform
import Synchronization
import WebSocket

/// What a client receives, for ``WebSocketClient/connectWithEvents(to:headers:tls:options:loop:)``.
public enum WebSocketClientEvent: Sendable, Equatable {
    case message(WebSocketPayload)
    /// The last event: the close code and reason (1006 when the connection was lost).
    case closed(WebSocketCloseCode, String)
}

/// A WebSocket client for bots, the UI and tests: connects to `ws://` or `wss://`, then sends from any thread
/// and receives on its event loop's thread through callbacks.
public final class WebSocketClient: Sendable {
    /// What the client application does with what arrives; runs on the loop thread and must not block.
    public struct Handler: Sendable {
        /// A complete text or binary message arrived.
        public var onMessage: @Sendable (WebSocketPayload) -> Void
        /// The connection closed (once): the close code and reason, 1006 when it was lost.
        public var onClose: @Sendable (WebSocketCloseCode, String) -> Void
        /// A pong answered our ping: the smoothed round-trip time (see ``WebSocketConnection/roundTripTime``).
        public var onRoundTrip: @Sendable (Duration) -> Void

        public init(
            onMessage: @escaping @Sendable (WebSocketPayload) -> Void = { _ in },
            onClose: @escaping @Sendable (WebSocketCloseCode, String) -> Void = { _, _ in },
            onRoundTrip: @escaping @Sendable (Duration) -> Void = { _ in }
        ) {
            self.onMessage = onMessage
            self.onClose = onClose
            self.onRoundTrip = onRoundTrip
        }
    }

    /// The open connection.
    public let connection: WebSocketConnection

    private init(connection: WebSocketConnection) { self.connection = connection }

    /// Connects and completes the upgrade, blocking the caller until the connection is open or has failed.
    ///
    /// - Parameters:
    ///   - url: `ws://host:port/path?query` or `wss://…`.
    ///   - headers: extra request headers, e.g. `Authorization: Bearer …`.
    ///   - tls: how to check a `wss://` server.
    ///   - loop: the loop to run on; without one the client starts its own and stops it when the connection ends.
    /// - Throws: ``TransportError`` for a bad URL, a refused or failed connection, TLS failure, or a refused
    ///   upgrade (the problem names the HTTP status and reason).
    public static func connect(
        to url: String, headers: HTTPHeaders = HTTPHeaders(), tls: TLSClientConfiguration = TLSClientConfiguration(),
        options: WebSocketOptions = WebSocketOptions(), loop: EventLoop? = nil, handler: Handler
    ) throws(TransportError) -> WebSocketClient {
        try connect(to: url, headers: headers, tls: tls, options: options, loop: loop, handler: handler, addresses: nil)
    }

    /// `connect`, to `addresses` (socket addresses, as `Socket.resolve` gives them) instead of those the URL's
    /// host resolves to when given.
    static func connect(
        to url: String, headers: HTTPHeaders = HTTPHeaders(), tls: TLSClientConfiguration = TLSClientConfiguration(),
        options: WebSocketOptions = WebSocketOptions(), loop: EventLoop? = nil, handler: Handler,
        addresses given: [[UInt8]]?
    ) throws(TransportError) -> WebSocketClient {
        let address: WebSocketURL
        do {
            address = try WebSocketURL(url)
        } catch {
            throw TransportError(place: "websocket URL", problem: error.problem)
        }
        var tlsContext: TLSContext?
        if address.secure { tlsContext = try TLSContext.client(tls) }
        let ownLoop = loop == nil
        let runLoop: EventLoop
        if let loop { runLoop = loop } else { runLoop = try EventLoop(name: "clubroom-client") }
        if runLoop.inLoop {
            throw TransportError(place: "websocket connect \(url)", problem: "called on the loop's own thread")
        }
        var addresses = given ?? []
        do throws(TransportError) {
            if given == nil { addresses = try Socket.resolve(host: address.host, port: address.port, passive: false) }
        } catch {
            if ownLoop { runLoop.shutdown() }
            throw error
        }
        // A name with several addresses (the nodes of a cluster, say): each is tried in turn while connects
        // fail before reaching a server, the one that answered last time first, each but the last for at most
        // `addressConnectTimeout`.
        let key = "\(address.host):\(address.port)"
        let ordered = AddressMemory.shared.ordered(addresses, for: key)
        var failure = TransportError(place: "connect \(key)", problem: "no address")
        for (index, socketAddress) in ordered.enumerated() {
            let last = index == ordered.count - 1
            var attemptOptions = options
            if !last { attemptOptions.connectTimeout = min(options.connectTimeout, addressConnectTimeout) }
            do {
                let client = try attempt(
                    socketAddress, address: address, url: url, headers: headers, tlsContext: tlsContext,
                    options: attemptOptions, loop: runLoop, ownLoop: ownLoop, last: last, handler: handler)
                if ordered.count > 1 { AddressMemory.shared.remember(socketAddress, for: key) }
                return client
            } catch {
                failure = error
                guard !last, error.place.hasPrefix("connect ") else { break }
            }
        }
        if ownLoop { runLoop.shutdown() }
        throw failure
    }

    /// How long a connect to one of several addresses may take before the next is tried.
    static let addressConnectTimeout: Duration = .seconds(3)

    /// One connection attempt to one address: connect, TLS, upgrade. Only the last attempt, or one that opened,
    /// stops a loop the client started itself when its connection ends.
    private static func attempt(
        _ socketAddress: [UInt8], address: WebSocketURL, url: String, headers: HTTPHeaders, tlsContext: TLSContext?,
        options: WebSocketOptions, loop runLoop: EventLoop, ownLoop: Bool, last: Bool, handler: Handler
    ) throws(TransportError) -> WebSocketClient {
        let descriptor = try Socket.startConnect(to: socketAddress, place: "connect \(address.host):\(address.port)")
        let stream: ByteStream
        do {
            stream =
                try tlsContext.map { context throws(TransportError) in
                    try TLSStream(context: context, descriptor: descriptor, clientHost: address.host)
                } ?? PlainStream(descriptor: descriptor)
        } catch {
            PlainStream(descriptor: descriptor).close()
            throw error
        }

        let outcome = Mutex<TransportError??>(nil)
        let settled = DispatchSemaphore(value: 0)
        let opened = Atomic<Bool>(false)
        var events = ConnectionEvents()
        events.open = { _ in
            opened.store(true, ordering: .releasing)
            outcome.withLock { $0 = .some(nil) }
            settled.signal()
        }
        events.failedBeforeOpen = { error in
            outcome.withLock { $0 = .some(error) }
            settled.signal()
        }
        events.message = { handler.onMessage($1) }
        events.close = { handler.onClose($1, $2) }
        events.roundTrip = { handler.onRoundTrip($1) }
        events.finished = { _ in
            if ownLoop, last || opened.load(ordering: .acquiring) { runLoop.shutdown() }
        }

        // The key is a nonce, not a secret: should libcrypto have no entropy source, the system generator will do.
        let nonce = (try? SecureRandom.bytes(16)) ?? (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        let key = WebSocketHandshake.key(fromRandomBytes: nonce)
        let request = WebSocketHandshake.requestBytes(
            host: address.hostHeader, target: address.target, key: key, headers: headers)
        let expectedAccept = WebSocketHandshake.acceptKey(forKey: key, sha1: SHA1.digest)
        let connection = WebSocketConnection(
            loop: runLoop, descriptor: descriptor, remoteAddress: "\(address.hostHeader)", role: .client,
            stream: stream, isTLS: address.secure, connecting: true, options: options, events: events)
        runLoop.execute {
            do throws(TransportError) {
                try connection.start(clientRequest: (request, expectedAccept))
            } catch {
                connection.events.failedBeforeOpen(error)
                connection.terminate()
            }
        }
        let waitMilliseconds = Int(options.handshakeTimeout.inMilliseconds) + 2000
        if settled.wait(timeout: .now() + .milliseconds(waitMilliseconds)) == .timedOut {
            connection.close(code: .goingAway, reason: "")
            throw TransportError(place: "websocket connect \(url)", problem: "timed out", cause: .timedOut)
        }
        if case .some(.some(let error)) = outcome.withLock({ $0 }) { throw error }
        return WebSocketClient(connection: connection)
    }

    /// Connects like ``connect(to:headers:tls:options:loop:handler:)`` and delivers what arrives as an
    /// `AsyncStream` instead of callbacks; the stream finishes after the `.closed` event.
    public static func connectWithEvents(
        to url: String, headers: HTTPHeaders = HTTPHeaders(), tls: TLSClientConfiguration = TLSClientConfiguration(),
        options: WebSocketOptions = WebSocketOptions(), loop: EventLoop? = nil
    ) throws(TransportError) -> (WebSocketClient, AsyncStream<WebSocketClientEvent>) {
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketClientEvent.self)
        let client = try connect(
            to: url, headers: headers, tls: tls, options: options, loop: loop,
            handler: Handler(
                onMessage: { continuation.yield(.message($0)) },
                onClose: { code, reason in
                    continuation.yield(.closed(code, reason))
                    continuation.finish()
                }))
        return (client, stream)
    }

    /// The smoothed round-trip time of the connection's pings; `nil` until the first pong.
    public var roundTripTime: Duration? { connection.roundTripTime }

    /// Sends a text message (from any thread).
    public func send(text: String) { connection.send(text: text) }

    /// Sends a binary message (from any thread).
    public func send(binary: [UInt8]) { connection.send(binary: binary) }

    /// Sends a binary message worth sending only now (audio on the WebSocket path), from any thread: dropped
    /// rather than queued once more than ``WebSocketOptions/maxRealTimeBacklog`` bytes wait for the server (see
    /// ``WebSocketConnection/send(realTime:)``).
    public func send(realTime binary: [UInt8]) { connection.send(realTime: binary) }

    /// Messages sent with ``send(realTime:)`` that were dropped because too much was waiting for the server.
    public var droppedRealTimeCount: Int { connection.droppedRealTimeCount }

    /// Starts the closing handshake; the close callback reports `code` and `reason`.
    public func close(code: WebSocketCloseCode = .normal, reason: String = "") {
        connection.close(code: code, reason: reason)
    }
}
