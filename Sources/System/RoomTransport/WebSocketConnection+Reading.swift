import CEventPoll
import Crypto
import Glibc
import Platform
import Synchronization
import WebSocket

// The read side of a connection, on its loop's thread: TLS handshake, the HTTP upgrade (either role), frames in.
extension WebSocketConnection {
    func driveTLSHandshake() {
        switch stream.handshake() {
        case .bytes:
            readWantsWritable = false
            state = .awaitingHead
            sendClientRequest()
            updateInterest()
            readAvailable()
        case .wouldBlock(let wantsWrite):
            readWantsWritable = wantsWrite
            updateInterest()
        case .endOfStream: failBeforeOpen("peer closed the connection during the TLS handshake")
        case .failed(let problem): failBeforeOpen(problem, cause: stream.failureCause)
        }
    }

    func sendClientRequest() {
        guard role == .client, let request = clientRequest else { return }
        enqueue(request.bytes)
    }

    func readAvailable() {
        for _ in 0..<16 {
            guard state != .closed else { return }
            let buffer = loop.readBuffer
            switch stream.read(into: buffer) {
            case .bytes(let count):
                lastReceived = EventLoop.now()
                received(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count])))
            case .wouldBlock(let wantsWrite):
                if readWantsWritable != wantsWrite {
                    readWantsWritable = wantsWrite
                    updateInterest()
                }
                return
            case .endOfStream:
                lost("connection closed without a close frame")
                return
            case .failed(let problem):
                lost(problem)
                return
            }
        }
        // Bounded so one busy peer cannot starve the others; come back after this round of events, since TLS may
        // hold decrypted bytes that epoll cannot see.
        loop.execute { [self] in
            if state != .closed { readAvailable() }
        }
    }

    func received(_ bytes: [UInt8]) {
        switch state {
        case .awaitingHead:
            headBuffer.append(contentsOf: bytes)
            do {
                guard let length = try WebSocketHandshake.headLength(in: headBuffer, maxHeadSize: options.maxHeadSize)
                else { return }
                let head = Array(headBuffer[0..<length])
                let rest = Array(headBuffer[length...])
                headBuffer = []
                if role == .server {
                    try upgradeServer(head: head, rest: rest)
                } else {
                    try upgradeClient(head: head, rest: rest)
                }
            } catch {
                if role == .server {
                    enqueue(WebSocketHandshake.rejectResponseBytes(status: error.status, reason: error.problem))
                    beginDraining()
                } else {
                    failBeforeOpen(error.description, cause: .httpStatus(error.status))
                }
            }
        case .open, .closing:
            decoder.feed(bytes)
            processFrames()
        case .connecting, .tlsHandshake, .draining, .closed:
            break
        }
    }

    private func upgradeServer(head: [UInt8], rest: [UInt8]) throws(WebSocketHandshakeError) {
        let request = try WebSocketUpgradeRequest.parse(head: head)
        requestStore.withLock { $0 = request }
        let decision = events.upgrade?(request, self) ?? .accept
        guard state == .awaitingHead else { return }
        switch decision {
        case .accept:
            let accept = WebSocketHandshake.acceptKey(forKey: request.key, sha1: SHA1.digest)
            enqueue(WebSocketHandshake.acceptResponseBytes(acceptKey: accept))
            becomeOpen(rest: rest)
        case .reject(let status, let reason):
            enqueue(WebSocketHandshake.rejectResponseBytes(status: status, reason: reason))
            beginDraining()
        }
    }

    private func upgradeClient(head: [UInt8], rest: [UInt8]) throws(WebSocketHandshakeError) {
        let response = try WebSocketUpgradeResponse.parse(head: head)
        do {
            try response.validate(expectedAccept: clientRequest?.expectedAccept ?? "")
        } catch {
            // A refusal's plain-text body says why (a server out of descriptors, a wrong path): keep what arrived
            // with the head, made safe to print.
            let length = min(Int(response.headers["Content-Length"] ?? "") ?? 0, 200, rest.count)
            let body = String(decoding: rest.prefix(length), as: UTF8.self).unicodeScalars.filter { scalar in
                scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value)
                    && !(0x202A...0x202E).contains(scalar.value) && !(0x2066...0x2069).contains(scalar.value)
            }
            let reason = String(String.UnicodeScalarView(body)).split(separator: " ").joined(separator: " ")
            guard response.status != 101, !reason.isEmpty else { throw error }
            throw WebSocketHandshakeError(status: error.status, error.problem + ": " + reason)
        }
        becomeOpen(rest: rest)
    }

    private func becomeOpen(rest: [UInt8]) {
        guard state == .awaitingHead else { return }
        state = .open
        opened = true
        let now = EventLoop.now()
        lastPing = now
        if let first = options.firstPingDelay {
            lastPing = now - options.pingInterval.inMilliseconds + max(0, first.inMilliseconds)
        }
        lastReceived = now
        // The idle deadline starts now; the ping's, set above, is told to the loop by `lastPing`.
        loop.tick(noLaterThan: now + options.idleTimeout.inMilliseconds + 1)
        events.open(self)
        if state == .open && !rest.isEmpty {
            decoder.feed(rest)
            processFrames()
        }
    }

    /// Measures the round trip when a pong echoes the outstanding ping; unsolicited or stale pongs are ignored.
    private func answered(_ payload: [UInt8]) {
        guard let ping = outstandingPing, ping.payload == payload else { return }
        outstandingPing = nil
        let sample = ContinuousClock.now - ping.sentAt
        let nanoseconds = max(1, sample.inNanoseconds)
        let previous = smoothedRoundTripNanoseconds.load(ordering: .relaxed)
        let smoothed = previous < 0 ? nanoseconds : previous + (nanoseconds - previous) / 4
        smoothedRoundTripNanoseconds.store(smoothed, ordering: .relaxed)
        events.roundTrip(self, .nanoseconds(smoothed))
    }

    private func processFrames() {
        while state == .open || state == .closing {
            let message: WebSocketMessage?
            do {
                message = try decoder.next()
            } catch {
                if state == .open {
                    enqueue(
                        WebSocketMessage.close(code: error.closeCode, reason: error.problem).encoded(
                            maskingKey: maskIfClient()))
                }
                report(error.closeCode, error.problem)
                beginDraining()
                return
            }
            guard let message else { return }
            switch message {
            case .text(let text): if state == .open { events.message(self, .text(text)) }
            case .binary(let bytes): if state == .open { events.message(self, .binary(bytes)) }
            case .ping(let payload):
                if state == .open { enqueue(WebSocketMessage.pong(payload).encoded(maskingKey: maskIfClient())) }
            case .pong(let payload): if state == .open { answered(payload) }
            case .close(let code, let reason):
                if state == .open {
                    // The peer has left: what waits for it and is not begun would only be read to be ignored
                    // (a crowd leaving at once is sent nothing more of the announcements of each other's
                    // departures). The one being written is finished, so the framing stays whole.
                    dropUnstartedMessages()
                    enqueue(WebSocketMessage.close(code: code, reason: "").encoded(maskingKey: maskIfClient()))
                    report(code ?? .noStatusReceived, reason)
                }
                beginDraining()
            }
        }
    }
}
