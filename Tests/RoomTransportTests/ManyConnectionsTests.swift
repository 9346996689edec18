import Foundation
import RoomProtocol
import RoomTesting
import RoomTransport
import Synchronization
import Testing

@Suite(.ownThread) struct ManyConnectionsTests {
    /// A thousand clients on one shared client loop, held open together against one server loop.
    @Test func aThousandConnectionsOnOneLoop() throws {
        // Two thousand descriptors: no test whose code waits with select(2) may run meanwhile.
        try DescriptorTurns.alone { try thousandConnections() }
    }

    func thousandConnections() throws {
        let serverEvents = Recorder<ServerEvent>()
        let server = try startEchoServer(recorder: serverEvents)
        defer { server.shutdown() }
        let loop = try EventLoop(name: "test-clients")
        defer { loop.shutdown() }
        let echoes = Recorder<String>()
        var clients: [WebSocketClient] = []
        for index in 0..<1000 {
            clients.append(
                try WebSocketClient.connect(
                    to: "ws://127.0.0.1:\(server.port)/rooms/many", loop: loop,
                    handler: .init(onMessage: { payload in
                        if case .text(let text) = payload { echoes.record(text) }
                    })))
            if index % 100 == 99 { #expect(server.connectionCount == index + 1) }
        }
        for (index, client) in clients.enumerated() { client.send(text: "n\(index)") }
        let received = echoes.wait(for: 1000, seconds: 30)
        #expect(Set(received) == Set((0..<1000).map { "n\($0)" }))
        for client in clients { client.close() }
        let closes = serverEvents.wait(for: 3000, seconds: 30).filter {
            if case .closed(1000, _) = $0 { return true } else { return false }
        }
        #expect(closes.count == 1000)
    }
}
