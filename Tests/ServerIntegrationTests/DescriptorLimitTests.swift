import Foundation
import RoomProtocol
import RoomTesting
import RoomTransport
import Testing
import WebSocket

/// A server that runs out of file descriptors refuses new connections at once, clearly, and says so in its log
/// once per burst; it never leaves a join waiting.
@Suite(.ownThread) struct DescriptorLimitTests {
    @Test func outOfDescriptorsAJoinIsRefusedAtOnceAndTheBurstLoggedOnce() throws {
        // About 22 descriptors are the server's own (files, sockets, the event loop): 40 leaves room for ~18
        // connections.
        let server = try ServerProcess(launcher: ["/bin/sh", "-c", "ulimit -n 40 && exec \"$@\"", "sh"])
        defer { server.stopAndClean() }
        let loop = try EventLoop(name: "test-crowd")
        defer { loop.shutdown() }
        let now = Int64(Date().timeIntervalSince1970)
        func connect(_ index: Int) throws -> WebSocketClient {
            var headers = HTTPHeaders()
            let claims = TokenClaims(
                subject: "p\(index)", name: "P\(index)", room: "lobby", role: "audience", expiresAt: now + 3600,
                notBefore: now - 60)
            headers.add("Authorization", "Bearer " + (try server.signed(claims)))
            var options = WebSocketOptions()
            options.maxMessageSize = ControlLimits.maxServerMessageBytes
            return try WebSocketClient.connect(
                to: server.url(), headers: headers, options: options, loop: loop, handler: WebSocketClient.Handler())
        }
        var clients: [WebSocketClient] = []
        defer { for client in clients { client.close() } }
        var refusal: TransportError?
        let started = ContinuousClock.now
        for index in 0..<60 {
            do {
                clients.append(try connect(index))
            } catch let error as TransportError {
                refusal = error
                break
            }
        }
        #expect(ContinuousClock.now - started < .seconds(8), "no connection waited out its handshake timeout")
        #expect(clients.count >= 5 && clients.count < 40, "\(clients.count) connected")
        #expect(
            refusal?.problem
                == "websocket handshake: server refused the upgrade: 503 Service Unavailable: the server is out of "
                + "file descriptors; try again later (HTTP 503)", "\(String(describing: refusal))")
        // A second refusal in the same burst is not logged again. A descriptor the server held only for a moment
        // may have come free since the first refusal, so a join or two may still get in before it.
        var second: TransportError?
        for index in 1000..<1010 where second == nil {
            do {
                clients.append(try connect(index))
            } catch let error as TransportError {
                second = error
            }
        }
        #expect(second?.problem == refusal?.problem, "\(String(describing: second))")
        // The log comes through a pipe and may follow the refusal: the first line is waited for.
        #expect(
            waitUntil(limit: 10, every: 0.05) {
                !server.logLines(containing: "out of file descriptors (this process may open 40)").isEmpty
            })
        let exhausted = server.logLines(containing: "out of file descriptors (this process may open 40)")
        #expect(exhausted.count == 1, "\(exhausted)")
        // Room again: the next join is accepted and the end of the burst is logged with its count.
        for client in clients.suffix(3) { client.close() }
        clients.removeLast(3)
        var again: WebSocketClient?
        var refused = 2
        for _ in 0..<50 where again == nil {
            again = try? connect(2000)
            if again == nil {
                refused += 1
                usleep(100_000)
            }
        }
        #expect(again != nil)
        again?.close()
        // The burst is over once a connection is accepted a second after the last refusal.
        usleep(1_100_000)
        let after = try? connect(3000)
        #expect(after != nil)
        after?.close()
        let recovered = server.log.wait(timeout: 5) { $0.contains("accepting connections again") }
        #expect(recovered != nil)
        if let recovered {
            #expect(
                server.log.all[recovered].hasSuffix(
                    "accepting connections again; \(refused) refused while out of file descriptors"))
        }
    }
}
