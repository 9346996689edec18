import Foundation
import RoomAppRuntime
import RoomClient
import RoomTransport
import Testing

/// A server that closes normally (1000) when the client did not ask to leave: the client says so, rather than
/// "You left the room.", and does not try again.
@Suite struct ServerCloseTests {
    @Test func aNormalCloseByTheServerIsNotALeave() throws {
        let server = try WebSocketServer(
            host: "127.0.0.1", port: 0, tls: nil, options: WebSocketOptions(),
            handler: WebSocketServer.Handler(onOpen: { $0.close(code: .normal, reason: "maintenance") }))
        defer { server.shutdown() }
        let recorder = SessionRecorder()
        let session = try RoomSession(url: "ws://127.0.0.1:\(server.port)/rooms/lobby", token: "t") {
            recorder.record($0)
        }
        defer { session.shutdown() }
        session.start()
        let ended = recorder.wait {
            if case .ended = $0 { return true }
            return false
        }
        #expect(ended == .ended(.closedByServer(reason: "maintenance")))
        #expect(!recorder.all.contains { if case .reconnecting = $0 { true } else { false } })
        #expect(
            SessionConnection.describe(.closedByServer(reason: "maintenance"))
                == "The server closed the connection (maintenance). Join again to come back.")
        #expect(SessionConnection.describe(.left) == "You left the room.")
        #expect(BotExitStatus(.closedByServer(reason: "maintenance")) == .left)
    }
}
