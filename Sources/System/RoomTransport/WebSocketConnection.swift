import CEventPoll
import Glibc
import Platform
import Synchronization
import WebSocket

private let connectionIDs = Atomic<Int>(0)

/// One WebSocket connection, server or client side.
///
/// `send` and `close` may be called from any thread: they run on the connection's event loop in the order each
/// thread called them. Callbacks arrive on the loop thread. The connection's own failures (bad frames, a slow
/// reader, silence) close it and are reported through the close callback; they never reach other connections.
public final class WebSocketConnection: @unchecked Sendable, Hashable, CustomStringConvertible {
    // Safe to share: everything below `request` is touched only on `loop`'s thread; the public methods hop onto
    // it, and `request` is behind a mutex.

    /// A number unique in this process.
    public let id: Int
    /// The peer's `address:port`.
    public let remoteAddress: String
    /// This end's `address:port` (server side: which of the machine's addresses the peer reached); empty when
    /// unknown.
    public let localAddress: String
    /// The loop this connection runs on.
    public let loop: EventLoop
    let requestStore = Mutex<WebSocketUpgradeRequest?>(nil)
    private let pendingWriteCount = Atomic<Int>(0)
    private let droppedRealTime = Atomic<Int>(0)
    let smoothedRoundTripNanoseconds = Atomic<Int64>(-1)

    /// Bytes queued for this peer but not yet taken by the kernel (or TLS): a hint for callers that would rather
    /// skip a message (such as a level update) than queue it behind a slow reader.
    public var bufferedByteCount: Int { pendingWriteCount.load(ordering: .relaxed) }

    /// Messages sent with `send(realTime:)` that were dropped because too much was waiting for this peer.
    public var droppedRealTimeCount: Int { droppedRealTime.load(ordering: .relaxed) }

    /// The round-trip time from a ping to its pong, smoothed (each new sample weighs 1/4); `nil` until the first
    /// pong answers a ping.
    public var roundTripTime: Duration? {
        let value = smoothedRoundTripNanoseconds.load(ordering: .relaxed)
        return value < 0 ? nil : .nanoseconds(value)
    }

    /// The upgrade request the client sent (server side), once parsed.
    public var request: WebSocketUpgradeRequest? { requestStore.withLock { $0 } }

    enum State { case connecting, tlsHandshake, awaitingHead, open, closing, draining, closed }

    let role: WebSocketRole
    var events: ConnectionEvents
    var state: State
    private let descriptor: Int32
    let stream: ByteStream
    let options: WebSocketOptions
    private let isTLS: Bool
    var decoder: WebSocketDecoder
    var headBuffer: [UInt8] = []
    private var writeBuffer: [UInt8] = []
    private var writeOffset = 0
    /// Where each queued message starts in `writeBuffer`, oldest first, from `messageStartsHead` on; one at or
    /// past `writeOffset` has not begun, so a slow reader's close can drop it whole.
    private var messageStarts: [Int] = []
    private var messageStartsHead = 0
    private var writeWantsReadable = false
    var readWantsWritable = false
    private var registeredWritable = false
    private var shutdownSent = false
    /// Bytes handed to the stream since the connection began.
    private var bytesWritten = 0
    /// When the closing began (the close frame queued, or the draining started), while the connection closes.
    private var closeStarted: Int64?
    /// What was still going out to the peer at the last look of a closing connection: bytes written so far, and
    /// bytes the kernel held unacknowledged. A change between two looks is the peer's progress.
    private var closeProgress = (written: 0, unacknowledged: 0)
    var opened = false
    private var closeReported = false
    var lastReceived: Int64
    var lastPing: Int64 {
        didSet { loop.tick(noLaterThan: lastPing + options.pingInterval.inMilliseconds) }
    }
    /// When the handshake, the closing handshake or the draining gives up, by the state.
    var deadline: Int64 {
        didSet { loop.tick(noLaterThan: deadline + 1) }
    }
    /// When a TCP connect still under way gives up (a client's connection), and how long that is.
    private let connectDeadline: Int64
    private let connectMilliseconds: Int64
    private var pingCounter: UInt64 = 0
    /// The payload of the ping awaiting its pong and when it went out.
    var outstandingPing: (payload: [UInt8], sentAt: ContinuousClock.Instant)?
    var clientRequest: (bytes: [UInt8], expectedAccept: String)?
    /// Told once everything queued has been handed to the kernel (see ``whenDrained(_:)``).
    private var drained: (() -> Void)?

    init(
        loop: EventLoop, descriptor: Int32, remoteAddress: String, localAddress: String = "", role: WebSocketRole,
        stream: ByteStream, isTLS: Bool, connecting: Bool, options: WebSocketOptions, events: ConnectionEvents
    ) {
        self.id = connectionIDs.add(1, ordering: .relaxed).newValue
        self.loop = loop
        self.descriptor = descriptor
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.role = role
        self.stream = stream
        self.isTLS = isTLS
        self.options = options
        self.events = events
        self.decoder = WebSocketDecoder(role: role, maxMessageSize: options.maxMessageSize)
        self.state = connecting ? .connecting : (isTLS ? .tlsHandshake : .awaitingHead)
        let now = EventLoop.now()
        lastReceived = now
        lastPing = now
        deadline = now + options.handshakeTimeout.inMilliseconds
        connectMilliseconds = min(options.connectTimeout, options.handshakeTimeout).inMilliseconds
        connectDeadline = now + connectMilliseconds
    }

    public static func == (lhs: WebSocketConnection, rhs: WebSocketConnection) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public var description: String { "connection \(id) (\(remoteAddress))" }

    // MARK: Public, any thread.

    /// Sends a text message; dropped once the connection is closing.
    public func send(text: String) { perform { $0.sendOnLoop(.text(text)) } }

    /// Sends a binary message; dropped once the connection is closing.
    public func send(binary: [UInt8]) { perform { $0.sendOnLoop(.binary(binary)) } }

    /// Sends a binary message that is worth sending only now (audio): when more than
    /// ``WebSocketOptions/maxRealTimeBacklog`` bytes already wait to be written to this peer, it is dropped
    /// (and counted in ``droppedRealTimeCount``) instead of queued behind them.
    public func send(realTime binary: [UInt8]) {
        perform { connection in
            guard connection.writeBuffer.count - connection.writeOffset <= connection.options.maxRealTimeBacklog else {
                if connection.state == .open { connection.droppedRealTime.add(1, ordering: .relaxed) }
                return
            }
            connection.sendOnLoop(.binary(binary))
        }
    }

    /// Sends a message framed once for many connections; dropped once the connection is closing.
    public func send(_ prepared: PreparedMessage) {
        // On the loop (a server sending to its many peers), at once and without a task for each.
        guard loop.inLoop else {
            loop.execute { [self] in sendOnLoop(prepared) }
            return
        }
        sendOnLoop(prepared)
    }

    /// Queues a message framed once for many connections and writes it when the loop next finds this socket
    /// writable (its next turn), not now: a message to a crowd then costs the sender only the copying, and the
    /// writes to each peer are spread over the loop's turns with its other work (reading requests, answering
    /// them) between them. Whatever is sent to this connection afterwards follows it, in order. Dropped once the
    /// connection is closing; the limits are those of ``send(_:)``. Meant for the loop thread (elsewhere it is queued
    /// there first).
    public func sendLater(_ prepared: PreparedMessage) {
        guard loop.inLoop else {
            loop.execute { [self] in sendOnLoop(prepared, writeNow: false) }
            return
        }
        sendOnLoop(prepared, writeNow: false)
    }

    private func sendOnLoop(_ prepared: PreparedMessage, writeNow: Bool = true) {
        if role == .server {
            sendOnLoop(frame: prepared.serverFrame, payloadSize: prepared.payloadByteCount, writeNow: writeNow)
        } else {
            sendOnLoop(prepared.message)
        }
    }

    /// Whether bytes queued earlier are still waiting for the kernel to take them: the peer reads more slowly
    /// than this side writes. Loop thread only (exact there, unlike ``bufferedByteCount``).
    public var isBacklogged: Bool { writeOffset < writeBuffer.count }

    /// Calls `callback` on the loop thread as soon as nothing queued waits any more: at once when nothing does,
    /// otherwise when the kernel has taken the last queued byte. Once; a later call replaces an earlier one that
    /// has not run. Never called once the connection has ended. Loop thread only.
    public func whenDrained(_ callback: @escaping () -> Void) {
        guard state != .closed else { return }
        if writeOffset < writeBuffer.count {
            drained = callback
        } else {
            drained = nil
            callback()
        }
    }

    /// Starts the closing handshake; the close callback reports `code` and `reason` at once.
    public func close(code: WebSocketCloseCode = .normal, reason: String = "") {
        perform { $0.closeOnLoop(code: code, reason: reason) }
    }

    private func perform(_ work: @escaping @Sendable (WebSocketConnection) -> Void) {
        if loop.inLoop {
            work(self)
        } else {
            loop.execute { [self] in work(self) }
        }
    }

    // MARK: Loop thread only.

    /// Registers with the loop and starts the handshake appropriate to the state.
    func start(clientRequest request: (bytes: [UInt8], expectedAccept: String)? = nil) throws(TransportError) {
        clientRequest = request
        try loop.register(descriptor, self, writable: state == .connecting)
        registeredWritable = state == .connecting
        if state == .tlsHandshake { driveTLSHandshake() }
    }

    func sendOnLoop(_ message: WebSocketMessage) {
        guard state == .open else { return }
        let size: Int
        switch message {
        case .text(let text): size = text.utf8.count
        case .binary(let bytes): size = bytes.count
        case .ping, .pong, .close: size = 0
        }
        if size > options.maxSentMessageSize {
            closeOnLoop(
                code: .internalError,
                reason: "a message of \(size) bytes is over the limit of \(options.maxSentMessageSize) bytes")
            return
        }
        enqueue(message.encoded(maskingKey: role == .client ? Self.maskingKey() : nil))
    }

    /// Sends a frame already encoded as this side sends it (server side: unmasked).
    private func sendOnLoop(frame: [UInt8], payloadSize: Int, writeNow: Bool = true) {
        guard state == .open else { return }
        if payloadSize > options.maxSentMessageSize {
            closeOnLoop(
                code: .internalError,
                reason: "a message of \(payloadSize) bytes is over the limit of \(options.maxSentMessageSize) bytes")
            return
        }
        enqueue(frame, writeNow: writeNow)
    }

    func closeOnLoop(code: WebSocketCloseCode, reason: String) {
        switch state {
        case .open:
            let sentCode = code.isSendable ? code : .normal
            enqueue(WebSocketMessage.close(code: sentCode, reason: reason).encoded(maskingKey: maskIfClient()))
            report(code, reason)
            guard state == .open else { return }
            state = .closing
            startClosing()
        case .connecting, .tlsHandshake, .awaitingHead:
            failBeforeOpen("closed before the handshake finished")
        case .closing, .draining, .closed:
            break
        }
    }

    /// Ends the connection at once, without a closing handshake (server shutdown, overflow).
    func terminate() {
        guard state != .closed else { return }
        state = .closed
        drained = nil
        loop.unregister(descriptor)
        stream.close()
        events.finished(self)
    }

    static func maskingKey() -> [UInt8] {
        let value = UInt32.random(in: 0...UInt32.max)
        return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    func maskIfClient() -> [UInt8]? { role == .client ? Self.maskingKey() : nil }

    func report(_ code: WebSocketCloseCode, _ reason: String) {
        guard opened, !closeReported else { return }
        closeReported = true
        events.close(self, code, reason)
    }

    /// Where a connect that failed while its TCP connect was under way says it failed: nothing reached the
    /// server, so another of its addresses may be tried (`WebSocketClient`).
    static func tcpConnectPlace(_ address: String) -> String { "connect \(address)" }

    func failBeforeOpen(_ problem: String, cause: TransportError.Cause = .other) {
        guard state != .closed else { return }
        if !opened {
            let place =
                state == .connecting ? Self.tcpConnectPlace(remoteAddress) : "websocket connect \(remoteAddress)"
            events.failedBeforeOpen(TransportError(place: place, problem: problem, cause: cause))
        }
        report(.abnormalClosure, problem)
        terminate()
    }

    func lost(_ problem: String) {
        switch state {
        case .connecting, .tlsHandshake, .awaitingHead: failBeforeOpen(problem)
        case .open, .closing:
            report(.abnormalClosure, problem)
            terminate()
        case .draining, .closed: terminate()
        }
    }

    func beginDraining() {
        guard state != .closed, state != .draining else { return }
        state = .draining
        startClosing()
        flush()
    }

    /// Starts a closing stage's timer, and the closing's own clock the first time.
    private func startClosing() {
        let now = EventLoop.now()
        deadline = now + options.closeTimeout.inMilliseconds
        guard closeStarted == nil else { return }
        closeStarted = now
        closeProgress = (bytesWritten, Socket.unacknowledgedByteCount(descriptor))
    }

    /// A closing stage's timer ran out: when something is still going out to the peer (the rest of a message,
    /// the close frame, or bytes the kernel holds that the peer has not taken) and the peer took some of it
    /// since the last look, the stage goes on for another close timeout, within the linger limit. Returns the
    /// new deadline, or nil to move on.
    private func closingDeadlineExtended(now: Int64) -> Int64? {
        guard let started = closeStarted else { return nil }
        let limit = started + options.closeLingerLimit.inMilliseconds
        let unacknowledged = Socket.unacknowledgedByteCount(descriptor)
        let waiting = writeBuffer.count - writeOffset + unacknowledged
        let progressed =
            bytesWritten > closeProgress.written || unacknowledged < closeProgress.unacknowledged
        closeProgress = (bytesWritten, unacknowledged)
        guard waiting > 0, progressed, now < limit else { return nil }
        return min(now + options.closeTimeout.inMilliseconds, limit)
    }

    func updateInterest() {
        guard state != .closed else { return }
        let wanted = state == .connecting || writeOffset < writeBuffer.count || readWantsWritable
        if wanted != registeredWritable {
            registeredWritable = wanted
            loop.update(descriptor, writable: wanted)
        }
    }

    /// Queues a frame and writes what is queued now, or (`writeNow` false) once the loop reports the socket
    /// writable.
    func enqueue(_ bytes: [UInt8], writeNow: Bool = true) {
        guard state != .closed else { return }
        let waiting = unstartedByteCount()
        if waiting > 0 && waiting + bytes.count > options.maxWriteBufferSize {
            closeSlowReader()
            return
        }
        messageStarts.append(writeBuffer.count)
        writeBuffer.append(contentsOf: bytes)
        guard writeNow else {
            pendingWriteCount.store(writeBuffer.count - writeOffset, ordering: .relaxed)
            updateInterest()
            return
        }
        flush()
    }

    /// Bytes of the queued messages not begun yet.
    private func unstartedByteCount() -> Int {
        while messageStartsHead < messageStarts.count && messageStarts[messageStartsHead] < writeOffset {
            messageStartsHead += 1
        }
        guard messageStartsHead < messageStarts.count else { return 0 }
        return writeBuffer.count - messageStarts[messageStartsHead]
    }

    /// A peer that lets too much wait: the messages not begun are dropped, the one being written is finished so
    /// the framing stays whole, and a close frame (1008) follows it; the close timeout bounds the wait.
    private func closeSlowReader() {
        let reason = "peer reads too slowly: over \(options.maxWriteBufferSize) bytes waiting"
        guard state == .open else {
            report(.policyViolation, reason)
            terminate()
            return
        }
        dropUnstartedMessages()
        writeBuffer.append(
            contentsOf: WebSocketMessage.close(code: .policyViolation, reason: reason).encoded(
                maskingKey: maskIfClient()))
        state = .closing
        startClosing()
        report(.policyViolation, reason)
        flush()
    }

    /// Drops the queued messages not begun yet; the one being written stays, so the framing stays whole.
    func dropUnstartedMessages() {
        _ = unstartedByteCount()
        if messageStartsHead < messageStarts.count {
            writeBuffer.removeSubrange(messageStarts[messageStartsHead]...)
        }
        messageStarts.removeAll()
        messageStartsHead = 0
        pendingWriteCount.store(writeBuffer.count - writeOffset, ordering: .relaxed)
    }

    private func flush() {
        while writeOffset < writeBuffer.count && state != .closed {
            let step = writeBuffer.withUnsafeBytes { raw in
                stream.write(UnsafeRawBufferPointer(rebasing: raw[writeOffset...]))
            }
            switch step {
            case .bytes(let count):
                writeOffset += count
                bytesWritten += count
            case .wouldBlock: break
            case .endOfStream: lost("peer closed the connection")
            case .failed(let problem): lost(problem)
            }
            if case .bytes = step { continue }
            break
        }
        pendingWriteCount.store(writeBuffer.count - writeOffset, ordering: .relaxed)
        guard state != .closed else { return }
        if writeOffset == writeBuffer.count {
            // Room for usual messages is kept; a big one's (a snapshot) is given back, so thousands of idle
            // connections stay small.
            writeBuffer.removeAll(keepingCapacity: writeBuffer.capacity <= 4096)
            writeOffset = 0
            messageStarts.removeAll(keepingCapacity: messageStarts.capacity <= 64)
            messageStartsHead = 0
            if state == .draining && !shutdownSent {
                shutdownSent = true
                stream.shutdownWrite()
            }
        } else if writeOffset > 64 * 1024 && writeOffset > writeBuffer.count / 2 {
            _ = unstartedByteCount()
            let begun = writeOffset
            messageStarts = messageStarts[messageStartsHead...].map { $0 - begun }
            messageStartsHead = 0
            writeBuffer.removeFirst(begun)
            writeOffset = 0
        }
        updateInterest()
        if writeOffset == writeBuffer.count, let callback = drained {
            drained = nil
            callback()
        }
    }

}

extension WebSocketConnection: EventLoopHandler {
    func handle(events bits: UInt32) {
        switch state {
        case .closed:
            return
        case .connecting:
            let error = Socket.pendingError(descriptor)
            if error != 0 {
                failBeforeOpen(String(cString: strerror(error)), cause: TransportError.Cause(errno: error))
            } else if bits & (EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                if isTLS {
                    state = .tlsHandshake
                    driveTLSHandshake()
                } else {
                    state = .awaitingHead
                    sendClientRequest()
                    updateInterest()
                }
            }
        case .tlsHandshake:
            driveTLSHandshake()
        case .awaitingHead, .open, .closing, .draining:
            let readable = EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue | EPOLLRDHUP.rawValue
            if bits & readable != 0 || (readWantsWritable && bits & EPOLLOUT.rawValue != 0) { readAvailable() }
            if state != .closed && bits & EPOLLOUT.rawValue != 0 { flush() }
        }
    }

    func loopStopping() {
        if state == .connecting || state == .tlsHandshake || state == .awaitingHead {
            failBeforeOpen("event loop stopped")
        } else {
            report(.abnormalClosure, "event loop stopped")
            terminate()
        }
    }

    func tick(nowMilliseconds now: Int64) -> Int64? {
        checkDeadlines(now: now)
        switch state {
        case .connecting: return min(connectDeadline, deadline) + 1
        case .tlsHandshake, .awaitingHead, .closing, .draining: return deadline + 1
        case .open:
            return min(
                lastReceived + options.idleTimeout.inMilliseconds + 1, lastPing + options.pingInterval.inMilliseconds)
        case .closed: return nil
        }
    }

    private func checkDeadlines(now: Int64) {
        switch state {
        case .connecting where now > connectDeadline:
            failBeforeOpen("no answer to the connect within \(connectMilliseconds) ms", cause: .connectTimedOut)
        case .connecting, .tlsHandshake, .awaitingHead:
            if now > deadline { failBeforeOpen("handshake timed out", cause: .timedOut) }
        case .open:
            if now - lastReceived > options.idleTimeout.inMilliseconds {
                let reason = "nothing received for \(options.idleTimeout.inMilliseconds) ms"
                enqueue(WebSocketMessage.close(code: .goingAway, reason: reason).encoded(maskingKey: maskIfClient()))
                report(.goingAway, reason)
                beginDraining()
            } else if now - lastPing >= options.pingInterval.inMilliseconds {
                lastPing = now
                pingCounter += 1
                let payload = (0..<8).map { UInt8(truncatingIfNeeded: pingCounter >> (56 - 8 * UInt64($0))) }
                outstandingPing = (payload, ContinuousClock.now)
                enqueue(WebSocketMessage.ping(payload).encoded(maskingKey: maskIfClient()))
            }
        case .closing, .draining:
            // Either closing stage lasts while the peer still takes what is written; then closing goes on to drain,
            // and draining ends the connection.
            guard now > deadline else { break }
            if let extended = closingDeadlineExtended(now: now) {
                deadline = extended
            } else if state == .closing {
                beginDraining()
            } else {
                terminate()
            }
        case .closed:
            break
        }
    }
}
