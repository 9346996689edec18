import Foundation
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Synchronization
import Testing

@testable import RoomClient

/// A room server that cannot confirm a chat the first time: it answers the first copy of each chat `unconfirmed`,
/// applies the second (the chat event goes out once) and answers any later copy `already_applied`, as a cluster
/// does for a request whose outcome it lost. It records every chat it received with its id.
final class UnconfirmingServer: Sendable {
    final class Chats: Sendable {
        let list = Mutex<[(text: String, id: RequestID?)]>([])
    }

    let server: WebSocketServer
    private let chats = Chats()

    /// Every chat received, in order, with its id.
    var received: [(text: String, id: RequestID?)] { chats.list.withLock { $0 } }

    init() throws {
        let chats = self.chats
        server = try WebSocketServer(
            host: "127.0.0.1", port: 0,
            handler: WebSocketServer.Handler(
                onOpen: { connection in
                    let peers = [
                        AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .audience, joinedAt: 1)),
                        AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1)),
                    ]
                    HostileServer.send(
                        connection,
                        .joined(
                            JoinedSnapshot(
                                room: "lobby", selfID: "eli", peers: peers, topic: "", chat: [], roles: shippedRoles,
                                resumed: false)),
                        seq: 1)
                },
                onMessage: { connection, payload in
                    guard case .text(let text) = payload,
                        let message = try? ControlCodec.decodeClient(Array(text.utf8)),
                        case .chat(let said, _) = message.request
                    else { return }
                    let copies = chats.list.withLock { list -> Int in
                        list.append((said, message.id))
                        return list.filter { $0.id == message.id }.count
                    }
                    switch copies {
                    case 1:
                        HostileServer.send(
                            connection,
                            .error(code: .unconfirmed, message: "could not confirm", id: message.id), seq: nil)
                    case 2:
                        HostileServer.send(
                            connection, .chat(ChatMessage(from: "eli", fromName: "Eli", text: said, sentAt: 2)),
                            seq: 2)
                    default:
                        HostileServer.send(
                            connection, .error(code: .alreadyApplied, message: "applied", id: message.id), seq: nil)
                    }
                }))
    }

    var url: String { "ws://127.0.0.1:\(server.port)/rooms/lobby" }

    func shutdown() { server.shutdown() }
}

/// `clubroom bot` and the session under `clubroom join` send a request the server could not confirm again under
/// the same id, and show its chat once, with no error.
@Suite(.ownThread, .serialized) struct RequestRetryTests {
    @Test(.timeLimit(.minutes(1))) func theBotSendsAnUnconfirmedChatAgainUnderTheSameIdAndShowsItOnce() throws {
        let server = try UnconfirmingServer()
        defer { server.shutdown() }
        let bot = try clubroomBinary().path
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: [
                "-c", #"(echo '{"cmd":"chat","text":"hello"}'; sleep 3) | "$0" bot "$1" --token t"#, bot, server.url,
            ])
        let result = try child.finish(seconds: 30)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(result.status == 0, "\(result.standardOutput)\n\(result.standardError)")
        let chats = lines.filter { $0.contains(#""event":"chat""#) }
        #expect(chats.count == 1, "\(lines)")
        #expect(chats.first?.contains(#""text":"hello""#) == true)
        #expect(!lines.contains { $0.contains(#""event":"error""#) }, "\(lines)")
        let received = server.received
        #expect(received.count == 2, "\(received)")
        #expect(received.map(\.text) == ["hello", "hello"])
        #expect(received[0].id != nil && received[0].id == received[1].id)
    }

    @Test(.timeLimit(.minutes(1))) func plainModeSendsAnUnconfirmedChatAgainUnderTheSameIdAndSaysItOnce() throws {
        let server = try UnconfirmingServer()
        defer { server.shutdown() }
        let client = try clubroomBinary().path
        // The line is typed a second after start, once the room is on screen.
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: [
                "-c",
                #"(sleep 1; echo 'hello there'; sleep 3) | "$0" join "$1" --token t --plain --output null --input null"#,
                client, server.url,
            ])
        let result = try child.finish(seconds: 30)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("hello there") }.count == 1, "\(lines) \(result.standardError)")
        #expect(!lines.contains { $0.lowercased().contains("confirm") || $0.contains("went through") }, "\(lines)")
        let received = server.received
        #expect(received.count == 2, "\(received)")
        #expect(received.allSatisfy { $0.text == "hello there" })
        #expect(received[0].id != nil && received[0].id == received[1].id)
    }

    @Test(.timeLimit(.minutes(1))) func theSessionUnderJoinRetriesUnderTheSameIdAndPassesOnNoError() throws {
        let server = try UnconfirmingServer()
        defer { server.shutdown() }
        let events = Mutex<[SessionEvent]>([])
        let session = try RoomSession(url: server.url, token: "t") { event in events.withLock { $0.append(event) } }
        session.start()
        defer { session.shutdown() }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !session.isConnected || events.withLock({ $0.isEmpty }) { usleep(10_000) }
        #expect(session.send(.chat("hi", to: .everyone)))
        // The retry goes out 0.5 s after the unconfirmed answer; another request's id is the session's next.
        while Date() < deadline, server.received.count < 2 { usleep(10_000) }
        usleep(300_000)
        let received = server.received
        #expect(received.count == 2)
        #expect(received.first?.id == received.last?.id)
        guard case .string(let id)? = received.first?.id else {
            Issue.record("the session gives every request an id: \(received)")
            return
        }
        #expect(id.hasSuffix("-1") && id.count == 12)
        let messages = events.withLock { $0 }.compactMap { event -> WireEvent? in
            if case .message(let message) = event { return message.event }
            return nil
        }
        #expect(messages.filter { if case .chat = $0 { true } else { false } }.count == 1)
        #expect(!messages.contains { if case .error = $0 { true } else { false } }, "\(messages)")
    }
}
