import Foundation
import RoomTesting
import RoomTransport
import Testing
import WebSocket

@Suite(.ownThread) struct EchoTests {
    @Test func textAndBinaryEchoThenClientClose() throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(recorder: serverEvents)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/lobby?token=abc")
        client.send(text: "héllo ✓")
        client.send(binary: [0, 1, 2, 255])
        let big = String(repeating: "x", count: 60_000)
        client.send(text: big)
        #expect(
            events.wait(for: 3) == [
                .message(.text("héllo ✓")), .message(.binary([0, 1, 2, 255])), .message(.text(big)),
            ])
        client.close(code: .normal, reason: "bye")
        #expect(events.wait(for: 4).last == .closed(1000, "bye"))
        let seen = serverEvents.wait(for: 5)
        #expect(seen.first == .opened("/rooms/lobby?token=abc"))
        #expect(seen.last == .closed(1000, "bye"))
    }

    @Test func serverCloseCodeReachesClient() throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        client.send(text: "close 4000 room ended")
        #expect(events.wait(for: 1) == [.closed(4000, "room ended")])
    }

    @Test func oversizeMessageClosesWith1009() throws {
        var options = WebSocketOptions()
        options.maxMessageSize = 1000
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        client.send(binary: [UInt8](repeating: 1, count: 1001))
        #expect(events.wait(for: 1) == [.closed(1009, "message larger than 1000 bytes")])
        #expect(serverEvents.wait(for: 2).last == .closed(1009, "message larger than 1000 bytes"))
    }

    @Test func rejectedUpgradeThrowsWithStatus() throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        #expect(throws: TransportError.self) { try connectClient("ws://127.0.0.1:\(server.port)/forbidden") }
        do {
            _ = try connectClient("ws://127.0.0.1:\(server.port)/forbidden")
        } catch let error as TransportError {
            #expect(error.problem.contains("403"))
        }
    }

    @Test func connectionRefusedThrows() throws {
        let server = try startEchoServer()
        let port = server.port
        server.shutdown()
        #expect(throws: TransportError.self) { try connectClient("ws://127.0.0.1:\(port)/") }
    }

    @Test func pingsKeepAnAnsweringPeerAlive() throws {
        var options = WebSocketOptions()
        options.pingInterval = .milliseconds(50)
        options.idleTimeout = .milliseconds(1000)
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a", options: options)
        usleep(2_500_000)
        client.send(text: "still here")
        #expect(events.wait(for: 1) == [.message(.text("still here"))])
        #expect(serverEvents.all.count == 2)
    }

    @Test func aPongAnsweringOurPingReportsTheRoundTrip() throws {
        var options = WebSocketOptions()
        options.firstPingDelay = .milliseconds(100)
        let server = try startEchoServer()
        defer { server.shutdown() }
        let samples = Recorder<Duration>()
        let client = try WebSocketClient.connect(
            to: "ws://127.0.0.1:\(server.port)/rooms/a", options: options,
            handler: WebSocketClient.Handler(onRoundTrip: { samples.record($0) }))
        defer { client.close() }
        let reported = samples.wait(for: 1)
        #expect(reported.count == 1)
        #expect(reported.allSatisfy { $0 > .zero })
        #expect(client.roundTripTime == reported.last)
    }

    @Test func slowReaderIsClosedWithACloseFrameAndOthersCarryOn() throws {
        var options = WebSocketOptions()
        options.maxWriteBufferSize = 256 * 1024
        options.closeTimeout = .milliseconds(300)
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let slow = try RawSocket(port: server.port)
        try slow.upgrade(path: "/rooms/a")
        slow.send(WebSocket.WebSocketMessage.text("flood").encoded(maskingKey: [1, 2, 3, 4]))
        let seen = serverEvents.wait(for: 3)
        let reason = "peer reads too slowly: over 262144 bytes waiting"
        #expect(seen.last == .closed(1008, reason))
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        client.send(text: "fine")
        #expect(events.wait(for: 1) == [.message(.text("fine"))])
        // When the slow reader does read, it finds whole messages, then the close frame: the messages that had
        // not begun were dropped, not cut.
        var decoder = WebSocketDecoder(role: .client, maxMessageSize: 1024 * 1024)
        decoder.feed(slow.readAll(seconds: 5))
        var messages: [WebSocketMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        #expect(messages.last == .close(code: .policyViolation, reason: reason))
        #expect(messages.dropLast().allSatisfy { $0 == .binary([UInt8](repeating: 7, count: 64 * 1024)) })
        #expect(decoder.bufferedByteCount == 0)
    }

    /// Audio sent to a peer whose link carries less than it is sent: what the link cannot take is dropped, not
    /// queued, so the peer is never closed for it and what waits for it stays within the real-time backlog.
    @Test func realTimeMessagesToASlowReaderAreDroppedNotQueued() throws {
        var options = WebSocketOptions()
        options.maxWriteBufferSize = 256 * 1024
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let slow = try RawSocket(port: server.port)
        try slow.upgrade(path: "/rooms/a")
        // 20 MB, far more than the kernel's buffers and the write buffer's limit together.
        slow.send(WebSocket.WebSocketMessage.text("stream 20000").encoded(maskingKey: [1, 2, 3, 4]))
        #expect(serverEvents.wait(for: 3, seconds: 1).count == 2, "the slow peer was closed: \(serverEvents.all)")
        var decoder = WebSocketDecoder(role: .client, maxMessageSize: 1024 * 1024)
        decoder.feed(slow.readAll(seconds: 3))
        var messages: [WebSocketMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        guard case .text(let report)? = messages.last else {
            Issue.record("no report after the stream: \(messages.count) messages")
            return
        }
        let figures = report.split(separator: " ").compactMap { Int($0) }
        try #require(figures.count == 2, "\(report)")
        // What waited for the peer never passed the backlog by more than one message.
        #expect(figures[0] <= options.maxRealTimeBacklog + 1004)
        #expect(figures[1] > 0)
        let delivered = messages.dropLast()
        #expect(delivered.count + figures[1] == 20_000)
        #expect(delivered.allSatisfy { if case .binary(let bytes) = $0 { bytes.count == 1000 } else { false } })
        #expect(!messages.contains { if case .close = $0 { true } else { false } })
    }

    /// A message for many (`sendLater`) is only queued by the call: nothing of it is written until the loop's next
    /// turn, and a message sent at once afterwards follows it, in order.
    @Test func messagesSentLaterAreQueuedThenWrittenInOrderBeforeWhatFollows() throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        defer { client.close() }
        client.send(text: "later 100")
        let received = events.wait(for: 101)
        let expected = (0..<100).map { ClientEvent.message(.text("later \($0)")) }
        #expect(Array(received.prefix(100)) == expected)
        // All 100 frames waited when the call returned: 2 bytes of header and "later N" each.
        let queued = (0..<100).reduce(0) { $0 + 2 + "later \($1)".utf8.count }
        #expect(received.last == .message(.text("queued \(queued)")))
        #expect(received.count == 101)
    }

    /// A peer that closes is sent nothing more of what waited for it and was not begun: the close is answered at
    /// once (a crowd leaving together is not sent the announcements of each other's departures).
    @Test func aPeerThatClosesIsSentNothingMoreOfWhatWaitedForIt() throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(recorder: serverEvents)
        defer { server.shutdown() }
        let peer = try RawSocket(port: server.port)
        try peer.upgrade(path: "/rooms/a")
        // In one write: the server reads both frames together, queues 200 messages for later, then sees the close.
        peer.send(
            WebSocket.WebSocketMessage.text("hold 200").encoded(maskingKey: [1, 2, 3, 4])
                + WebSocket.WebSocketMessage.close(code: .normal, reason: "bye").encoded(maskingKey: [5, 6, 7, 8]))
        var decoder = WebSocketDecoder(role: .client, maxMessageSize: 1024 * 1024)
        decoder.feed(peer.readAll(seconds: 3))
        var messages: [WebSocketMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        #expect(messages == [.close(code: .normal, reason: "")])
        #expect(serverEvents.wait(for: 3).last == .closed(1000, "bye"))
    }

    /// A peer reading a huge message slowly, for longer than the idle timeout: the timer counts every byte the
    /// peer sends, so a peer that pings on its own while it reads, as every connection of ours does, is not
    /// closed in the middle of the message; one that sends nothing of its own (its pong would wait behind the
    /// message) is closed as silent.
    @Test(arguments: [true, false])
    func aSlowReaderInTheMiddleOfAHugeMessageIsClosedOnlyWhenItSaysNothing(pings: Bool) throws {
        var options = WebSocketOptions()
        options.idleTimeout = .milliseconds(1000)
        options.closeTimeout = .milliseconds(300)
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let reader = try RawSocket(port: server.port)
        try reader.upgrade(path: "/rooms/a")
        let size = 2 * 1024 * 1024
        reader.send(WebSocket.WebSocketMessage.text("big \(size)").encoded(maskingKey: [1, 2, 3, 4]))
        // About 640 KB a second: the message takes the reader over 3 s, three idle timeouts.
        let expected = 10 + size  // the frame's header and payload
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(reader.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var lastPing = ContinuousClock.now
        let started = ContinuousClock.now
        while bytes.count < expected, ContinuousClock.now - started < .seconds(10) {
            let count = recv(reader.descriptor, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count > 0 { bytes += buffer[0..<count] }
            if pings, ContinuousClock.now - lastPing > .milliseconds(300) {
                lastPing = ContinuousClock.now
                reader.send(WebSocket.WebSocketMessage.ping([1]).encoded(maskingKey: [5, 6, 7, 8]))
            }
            usleep(50_000)
        }
        #expect(ContinuousClock.now - started > .seconds(2), "the read was not slow: the test measures nothing")
        let closes = serverEvents.all.filter { if case .closed = $0 { true } else { false } }
        // The silent reader's close frame follows the message.
        if !pings { bytes += reader.readAll(seconds: 1) }
        var decoder = WebSocketDecoder(role: .client, maxMessageSize: 4 * 1024 * 1024)
        decoder.feed(bytes)
        var data: [WebSocketMessage] = []
        var closedBy: WebSocketMessage?
        while let message = try decoder.next() {
            switch message {
            case .binary, .text: data.append(message)
            case .close: closedBy = message
            case .ping, .pong: break
            }
        }
        #expect(data == [.binary([UInt8](repeating: 9, count: size))])
        if pings {
            #expect(closes.isEmpty)
            #expect(closedBy == nil)
        } else {
            // The message is finished before the close frame, however long the peer takes to read it while it
            // reads (`aCloseDuringALongMessageWaitsForTheMessageWhileThePeerReads`).
            #expect(closes == [.closed(1001, "nothing received for 1000 ms")])
            #expect(closedBy == .close(code: .goingAway, reason: "nothing received for 1000 ms"))
        }
    }

    enum CloseCause: String, CaseIterable { case idle, slowReader }

    /// A close that starts while a long message is still going out (the peer fell silent, 1001, or let too much
    /// wait behind it, 1008): the message is finished, as slowly as the peer reads it, and then the close frame
    /// follows. The message is far larger than what the kernel's buffers hold, and the peer reads it over several
    /// close timeouts.
    @Test(arguments: CloseCause.allCases)
    func aCloseDuringALongMessageWaitsForTheMessageWhileThePeerReads(cause: CloseCause) throws {
        var options = WebSocketOptions()
        options.idleTimeout = .milliseconds(500)
        options.closeTimeout = .milliseconds(1000)
        options.maxWriteBufferSize = 256 * 1024
        // However slowly a busy machine lets the reader read, the limit is not what ends it.
        options.closeLingerLimit = .seconds(120)
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let reader = try RawSocket(port: server.port, receiveBuffer: 32 * 1024)
        try reader.upgrade(path: "/rooms/a")
        let size = 16_000_000
        var asked = WebSocket.WebSocketMessage.text("big \(size)").encoded(maskingKey: [1, 2, 3, 4])
        // Messages queued behind the big one past the write buffer's bound: a slow reader.
        if cause == .slowReader {
            asked += WebSocket.WebSocketMessage.text("flood").encoded(maskingKey: [5, 6, 7, 8])
        }
        reader.send(asked)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 32 * 1024)
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(reader.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let started = ContinuousClock.now
        // At most about 3 MB a second, in small reads, until the server ends the stream: the message takes
        // several close timeouts to read (the kernel's buffers hold about 4 MB of it).
        while ContinuousClock.now - started < .seconds(100) {
            let count = recv(reader.descriptor, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count > 0 { bytes += buffer[0..<count] }
            if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK { break }
            usleep(10_000)
        }
        // Longer than the two close timeouts after which the connection used to end whatever the reader did.
        #expect(ContinuousClock.now - started > .seconds(2), "the read was not slow: the test measures nothing")
        var decoder = WebSocketDecoder(role: .client, maxMessageSize: 16 * 1024 * 1024)
        decoder.feed(bytes)
        var data: [WebSocketMessage] = []
        var closedBy: WebSocketMessage?
        while let message = try decoder.next() {
            switch message {
            case .binary, .text: data.append(message)
            case .close: closedBy = message
            case .ping, .pong: break
            }
        }
        // Compared by size and content, so that a failure does not print 12 MB.
        let sizes = data.map { message -> Int in
            guard case .binary(let bytes) = message, bytes.allSatisfy({ $0 == 9 }) else { return -1 }
            return bytes.count
        }
        let elapsed = ContinuousClock.now - started
        #expect(sizes == [size], "read \(bytes.count) bytes in \(elapsed)")
        switch cause {
        case .idle:
            #expect(closedBy == .close(code: .goingAway, reason: "nothing received for 500 ms"))
        case .slowReader:
            #expect(
                closedBy == .close(code: .policyViolation, reason: "peer reads too slowly: over 262144 bytes waiting"))
        }
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func aMessageLargerThanTheWriteBufferIsSentWhole() throws {
        var options = WebSocketOptions()
        options.maxMessageSize = 2 * 1024 * 1024
        options.maxWriteBufferSize = 64 * 1024
        let server = try startEchoServer(options: options)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a", options: options)
        let big = (0..<(1024 * 1024 + 7)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        client.send(binary: big)
        client.send(text: "after")
        #expect(events.wait(for: 2) == [.message(.binary(big)), .message(.text("after"))])
    }

    @Test func aMessageOverTheSendingLimitEndsInACloseFrame() throws {
        var options = WebSocketOptions()
        options.maxSentMessageSize = 1000
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        client.send(binary: [UInt8](repeating: 1, count: 1000))
        client.send(binary: [UInt8](repeating: 2, count: 1001))
        let reason = "a message of 1001 bytes is over the limit of 1000 bytes"
        #expect(
            events.wait(for: 2) == [.message(.binary([UInt8](repeating: 1, count: 1000))), .closed(1011, reason)])
        #expect(serverEvents.wait(for: 4).last == .closed(1011, reason))
    }

    /// Autobahn|Testsuite case 6.4.1 over a socket: the second fragment cannot be valid UTF-8, so the server
    /// closes with 1007 without waiting for the third.
    @Test func invalidTextInAFragmentIsRefusedBeforeTheMessageEnds() throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(recorder: serverEvents)
        defer { server.shutdown() }
        let raw = try RawSocket(port: server.port)
        try raw.upgrade(path: "/rooms/a")
        let key: [UInt8] = [1, 2, 3, 4]
        raw.send(
            WebSocketFrame(fin: false, opcode: .text, payload: [0xCE, 0xBA, 0xE1, 0xBD, 0xB9]).encoded(
                maskingKey: key))
        raw.send(
            WebSocketFrame(fin: false, opcode: .continuation, payload: [0xF4, 0x90, 0x80, 0x80]).encoded(
                maskingKey: key))
        let reply = raw.readAll(seconds: 5)
        let reason = Array("text message is not valid UTF-8".utf8)
        #expect(reply == [0x88, UInt8(2 + reason.count), 0x03, 0xEF] + reason)
        #expect(serverEvents.wait(for: 2).last == .closed(1007, "text message is not valid UTF-8"))
    }

    @Test func silentPeerIsClosedAfterIdleTimeout() throws {
        var options = WebSocketOptions()
        options.pingInterval = .seconds(60)
        options.idleTimeout = .milliseconds(200)
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(options: options, recorder: serverEvents)
        defer { server.shutdown() }
        let silent = try RawSocket(port: server.port)
        try silent.upgrade(path: "/rooms/a")
        #expect(serverEvents.wait(for: 2).last == .closed(1001, "nothing received for 200 ms"))
    }

    @Test(
        arguments: [
            ([0x81, 0x05] + Array("hello".utf8), 1002),  // unmasked client frame
            ([0xC1, 0x80, 1, 2, 3, 4], 1002),  // reserved bit set
            ([0x83, 0x80, 1, 2, 3, 4], 1002),  // unknown opcode
            ([0x81, 0x82, 0, 0, 0, 0, 0xC3, 0x28], 1007),  // invalid UTF-8
        ] as [([UInt8], UInt16)])
    func badFrameClosesOnlyThatConnection(frame: [UInt8], code: UInt16) throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(recorder: serverEvents)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        let raw = try RawSocket(port: server.port)
        try raw.upgrade(path: "/rooms/b")
        raw.send(frame)
        let reply = raw.readAll(seconds: 5)
        #expect(Array(reply.prefix(4)) == [0x88, UInt8(reply.count - 2), UInt8(code >> 8), UInt8(code & 0xFF)])
        client.send(text: "unaffected")
        #expect(events.wait(for: 1) == [.message(.text("unaffected"))])
    }
}

@Suite(.ownThread) struct ClientStreamTests {
    @Test func eventsArriveAsAnAsyncStream() async throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        let (client, events) = try WebSocketClient.connectWithEvents(to: "ws://127.0.0.1:\(server.port)/rooms/s")
        client.send(text: "one")
        client.send(text: "close 4003 done")
        var seen: [WebSocketClientEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen == [.message(.text("one")), .closed(WebSocketCloseCode(4003), "done")])
    }
}

@Suite(.ownThread) struct LoopLifetimeTests {
    @Test func stoppingASharedLoopReportsItsConnectionsClosed() throws {
        let server = try startEchoServer()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "test-stop")
        let events = Recorder<ClientEvent>()
        let client = try WebSocketClient.connect(
            to: "ws://127.0.0.1:\(server.port)/rooms/a", loop: loop,
            handler: .init(onClose: { events.record(.closed($0.rawValue, $1)) }))
        loop.shutdown()
        #expect(events.wait(for: 1) == [.closed(1006, "event loop stopped")])
        client.send(text: "dropped after the loop stopped")
        #expect(client.connection.bufferedByteCount == 0)
    }
}
