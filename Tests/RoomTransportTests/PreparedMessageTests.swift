import Foundation
import Glibc
import RoomTesting
import RoomTransport
import Testing
import WebSocket

/// A message framed once for many peers, and the drain notice a sender uses to stop queueing for a slow reader.
@Suite(.ownThread) struct PreparedMessageTests {
    @Test func aSlowReaderIsBackloggedUntilItReadsAndThenDrainingIsReported() throws {
        let events = Recorder<String>()
        let block = [UInt8](repeating: 9, count: 64 * 1024)
        let prepared = PreparedMessage(binary: block)
        let server = try WebSocketServer(
            port: 0,
            handler: WebSocketServer.Handler(onMessage: { connection, _ in
                // On the loop thread, so each send is queued at once: fill until the peer stops taking bytes.
                var sent = 0
                while !connection.isBacklogged && sent < 10_000 {
                    connection.send(prepared)
                    sent += 1
                }
                events.record("backlogged \(connection.isBacklogged) after \(sent)")
                connection.whenDrained {
                    events.record("drained")
                    connection.send(PreparedMessage(text: "after"))
                    // Nothing waits now, so a second notice comes at once.
                    connection.whenDrained { events.record("drained at once") }
                }
            }))
        defer { server.shutdown() }
        let slow = try RawSocket(port: server.port)
        try slow.upgrade(path: "/rooms/a")
        slow.send(WebSocketMessage.text("go").encoded(maskingKey: [1, 2, 3, 4]))
        let first = events.wait(for: 1)
        #expect(first.count == 1)
        let sent = Int(first.first?.split(separator: " ").last ?? "") ?? 0
        #expect(first.first?.hasPrefix("backlogged true after ") == true)
        #expect(sent > 0 && sent < 10_000)
        // Nobody reads: nothing is drained.
        #expect(events.wait(for: 2, seconds: 0.3).count == 1)

        var decoder = WebSocketDecoder(role: .client, maxMessageSize: 1024 * 1024)
        var messages: [WebSocketMessage] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while messages.last != .text("after") {
            let count = recv(slow.descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            decoder.feed(buffer[0..<count])
            while let message = try decoder.next() {
                // The server's pings may come in between if the machine is slow; only data counts here.
                if case .ping = message { continue }
                messages.append(message)
            }
        }
        #expect(messages.count == sent + 1)
        #expect(messages.dropLast().allSatisfy { $0 == .binary(block) })
        #expect(messages.last == .text("after"))
        #expect(events.wait(for: 3) == [first[0], "drained", "drained at once"])
    }

    @Test func aClientMasksAPreparedMessageAsAnyOther() throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(recorder: serverEvents)
        defer { server.shutdown() }
        let (client, events) = try connectClient("ws://127.0.0.1:\(server.port)/rooms/a")
        defer { client.close() }
        client.connection.send(PreparedMessage(text: "framed once"))
        #expect(events.wait(for: 1) == [.message(.text("framed once"))])
        #expect(serverEvents.wait(for: 2).contains(.message(.text("framed once"))))
    }
}
