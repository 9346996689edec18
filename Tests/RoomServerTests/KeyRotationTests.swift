import Foundation
import Glibc
import MediaServer
import MediaTransport
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization
import Testing

@testable import RoomServer

/// A room's key rotation when the random generator fails: the room's audio stops and the log says why, instead
/// of going on under the key whoever left still holds.
@Suite struct KeyRotationTests {
    /// The media messages each client of the test heard, in order.
    final class Heard: Sendable {
        private let signals = Mutex<[Int: [MediaSignal]]>([:])
        func record(_ signal: MediaSignal, client: Int) { signals.withLock { $0[client, default: []].append(signal) } }
        func of(_ client: Int) -> [MediaSignal] { signals.withLock { $0[client] ?? [] } }
    }

    @Test func aRotationWithoutRandomBytesStopsTheRoomsAudioAndSaysSo() throws {
        let opened = Mutex<[WebSocketConnection]>([])
        let server = try WebSocketServer(
            host: "127.0.0.1", port: 0, tls: nil, options: WebSocketOptions(),
            handler: WebSocketServer.Handler(onOpen: { connection in opened.withLock { $0.append(connection) } }))
        defer { server.shutdown() }
        let heard = Heard()
        var clients: [WebSocketClient] = []
        defer { for client in clients { client.close() } }
        for index in 0..<2 {
            clients.append(
                try WebSocketClient.connect(
                    to: "ws://127.0.0.1:\(server.port)/rooms/r",
                    handler: WebSocketClient.Handler(onMessage: { payload in
                        if case .text(let text) = payload, let signal = try? MediaSignalCodec.decode(text) {
                            heard.record(signal, client: index)
                        }
                    })))
            #expect(wait { opened.withLock { $0.count } == index + 1 })
        }
        let connections = opened.withLock { $0 }

        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let log = ServerLog(minimum: .info, descriptor: ends[1])
        let forwarder = try MediaForwarder(binding: .loopback(port: 0))
        let randomWorks = Mutex(true)
        let media = ServerMedia(
            forwarder: forwarder, configuration: MediaConfiguration(), log: log,
            randomKey: { randomWorks.withLock { $0 } ? ServerMedia.secureRandomKey() : nil })
        let (ana, bo) = (PeerID("ana"), PeerID("bo"))
        media.joined(ana, room: "r", mayPublish: false, connection: connections[0])
        media.joined(bo, room: "r", mayPublish: false, connection: connections[1])
        #expect(wait { heard.of(0).count == 1 && heard.of(1).count == 1 })
        guard case .media(let first)? = heard.of(0).first else {
            Issue.record("no media offer: \(heard.of(0))")
            return
        }
        #expect(first.epoch == 1)

        // Bo leaves while the generator fails: no new key can be made.
        randomWorks.withLock { $0 = false }
        var outcome = Outcome()
        outcome.deliveries = [Delivery(to: .everyone, ServerMessage(.peerLeft(peer: bo, reason: .left), seq: nil))]
        media.consume(outcome, in: "r")
        close(ends[1])
        let text = String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self)
        #expect(
            text.contains(
                "ERROR room r: no random bytes for a new room key (OpenSSL's generator failed); the room's audio "
                    + "stops, since whoever left still holds the old key"), "\(text)")

        // Ana is not handed anything under the old key, and her flow is gone: the next join starts the room's
        // audio again under a new key, epoch 1, not under the key Bo holds.
        randomWorks.withLock { $0 = true }
        media.joined(ana, room: "r", mayPublish: false, connection: connections[0])
        #expect(wait { heard.of(0).count == 2 })
        let after = heard.of(0)
        #expect(!after.contains { if case .mediaKey = $0 { true } else { false } }, "\(after)")
        guard case .media(let second)? = after.last else {
            Issue.record("no second media offer: \(after)")
            return
        }
        #expect(second.epoch == 1)
        #expect(second.roomKey != first.roomKey)
    }

    private func wait(_ condition: () -> Bool) -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
