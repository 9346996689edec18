import Foundation
import RoomProtocol
import RoomTesting
import RoomTransport
import StrictJSON
import Synchronization
import Testing
import WebSocket

/// Many listeners on one event loop, joined straight over WebSocket with tokens signed by the server's secret.
final class ListenerCrowd {
    let loop: EventLoop
    private(set) var clients: [WebSocketClient] = []

    init(server: ServerProcess, count: Int, room: String = "lobby") throws {
        loop = try EventLoop(name: "test-crowd")
        let now = Int64(Date().timeIntervalSince1970)
        var options = WebSocketOptions()
        options.maxMessageSize = ControlLimits.maxServerMessageBytes
        for index in 0..<count {
            let identity = "listener-\(index)"
            let token = try server.signed(
                TokenClaims(
                    subject: identity, name: "Listener \(index)", room: room, role: "audience", expiresAt: now + 3600,
                    notBefore: now - 60))
            var headers = HTTPHeaders()
            headers.add("Authorization", "Bearer \(token)")
            clients.append(
                try WebSocketClient.connect(
                    to: server.url(room: room), headers: headers, options: options, loop: loop,
                    handler: WebSocketClient.Handler()))
        }
    }

    func leave() {
        for client in clients { client.close(code: .normal, reason: "left") }
        usleep(100_000)
        loop.shutdown()
    }
}

@Suite(.ownThread, .serialized) struct BigRoomTests {
    /// A room's snapshot grows with its crowd: at 600 peers it is past 64 KiB, and a newcomer still joins.
    @Test func aNewcomerJoinsARoomOfSixHundred() throws {
        let server = try ServerProcess()
        defer { server.stopAndClean() }
        let crowd = try ListenerCrowd(server: server, count: 600)
        defer { crowd.leave() }
        let host = try server.bot(try server.token("ana", role: "host", name: "Ana"))
        defer { host.kill() }
        let joined = host.output.wait(from: 0, timeout: 30) { $0.contains(#""event":"joined""#) }
        let line = try #require(joined.map { host.output.all[$0] }, "no joined event; stderr \(host.errors.all)")
        #expect(line.utf8.count > 64 * 1024)
        let object = try #require(
            try? StrictJSONParser(maxBytes: ControlLimits.maxServerMessageBytes).parse(line),
            "the bot's joined line is not JSON")
        guard case .object(let fields) = object, case .array(let peers)? = fields["peers"] else {
            Issue.record("no peers in \(line.prefix(200))")
            return
        }
        #expect(peers.count == 601)
        #expect(!host.output.all.contains { $0.contains("invalid_json") })
        // A message the bot cannot read is logged on stderr, no longer printed as an error event.
        #expect(!host.errors.all.contains { $0.contains("clubroom: ignored") }, "\(host.errors.all)")
    }
}
