import Foundation
import Glibc
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Testing

/// The text a valid chat and topic after the burst carry: every front end must show them.
let chatAfterBurst = "still here after the burst"
let topicAfterBurst = "Topic after the burst"

/// A room whose server, after a valid `joined`, sends a burst of what a client cannot use: unknown, unreadable,
/// wrongly typed and out-of-order events (a second `joined` speaking another protocol, a `peer_left` for the
/// client itself, a stale `room_ended`), a 100 KB chat, bogus `media` and `media_key`, a 100,000-deep `[`; then
/// a valid chat and topic.
@Sendable func burstingRoom(_ connection: WebSocketConnection) {
    let peers = [
        AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .audience, joinedAt: 1)),
        AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1)),
    ]
    func snapshot(protocolVersion: Int64) -> WireEvent {
        .joined(
            JoinedSnapshot(
                room: "lobby", protocolVersion: protocolVersion, selfID: "eli", peers: peers, topic: "Before",
                chat: [], roles: shippedRoles, resumed: false))
    }
    HostileServer.send(connection, snapshot(protocolVersion: 1), seq: 100)
    usleep(300_000)
    connection.send(text: #"{"type":"frobnicate","seq":101}"#)
    connection.send(text: "{not json")
    connection.send(text: #"{"type":"chat","seq":"x","from":5,"name":[],"text":{},"at":"now"}"#)
    HostileServer.send(connection, snapshot(protocolVersion: 2), seq: 103)
    HostileServer.send(connection, .peerLeft(peer: "eli", reason: .left), seq: 104)
    HostileServer.send(connection, .peersLeft([Departure("eli", .disconnected)]), seq: 105)
    HostileServer.send(connection, .roomEnded(by: "ana", reason: "stale"), seq: 50)
    HostileServer.send(
        connection,
        .chat(ChatMessage(from: "ana", fromName: "Ana", text: String(repeating: "x", count: 2000), sentAt: 5)),
        seq: 106, raw: [String(repeating: "x", count: 2000): String(repeating: "y", count: 100_000)])
    connection.send(text: #"{"type":"media","udp":{"host":"","port":-1},"ssrc":"x","send_key":"!!","room_key":5}"#)
    connection.send(text: #"{"type":"media_key","room_key":"@@@","epoch":"z"}"#)
    connection.send(text: String(repeating: "[", count: 100_000))
    usleep(300_000)
    HostileServer.send(
        connection, .chat(ChatMessage(from: "ana", fromName: "Ana", text: chatAfterBurst, sentAt: 6)), seq: 200)
    HostileServer.send(connection, .topicChanged(topic: topicAfterBurst, by: "ana"), seq: 201)
}

/// What each front end writes to its log for the burst: one line a kind, the first one's.
let ignoredLines = [
    "clubroom: ignored a message from the server of a type it does not know",
    "clubroom: ignored a message from the server that it cannot read",
    "clubroom: ignored a second joined snapshot from the server on one connection",
    "clubroom: ignored the server's word that this client left",
    "clubroom: ignored a media message from the server that it cannot use",
]

func checkLog(_ log: String, _ front: String) {
    let lines = log.split(separator: "\n").filter { $0.hasPrefix("clubroom: ignored") }
    for line in ignoredLines {
        #expect(lines.filter { $0.hasPrefix(line) }.count == 1, "\(front) logged \(line) not once: \(lines)")
    }
    #expect(lines.count == ignoredLines.count, "\(front): \(lines)")
}

/// Every front end (the room screen in tmux, `--plain`, the bot) sent that burst stays in the room, shows the
/// valid chat and topic after it, and logs each kind of what it ignored once: only a well-formed, in-order
/// `removed` or `room_ended` ends a session.
@Suite(.ownThread, .serialized) struct HostileBurstTests {
    @Test(.timeLimit(.minutes(1))) func theRoomScreenSurvivesABurstOfMalformedEvents() throws {
        guard let tmuxPath = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first(where: FileManager.default.fileExists)
        else {
            Issue.record("tmux is not installed; the screen test needs it (apt-get install tmux)")
            return
        }
        let server = try HostileServer(script: burstingRoom)
        defer { server.shutdown() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-burst-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: state) }
        let socket = "clubroom-burst-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        func tmux(_ arguments: String...) -> String { spawnAndWait(tmuxPath, ["-L", socket] + arguments).output }
        defer { _ = tmux("kill-server") }
        let command =
            "XDG_STATE_HOME=\(state.path) \(try clubroomBinary().path) join \(server.url) --token t --output null "
            + "--input null; echo EXITED $?; sleep 60"
        _ = tmux("new-session", "-d", "-s", "burst", "-x", "100", "-y", "30", command)
        var screen = ""
        let shown = (0..<150).contains { _ in
            usleep(100_000)
            screen = tmux("capture-pane", "-p", "-t", "burst")
            return screen.contains("Ana: \(chatAfterBurst)") && screen.contains("\"\(topicAfterBurst)\"")
        }
        #expect(shown, "the valid chat and topic are not on the screen:\n\(screen)")
        usleep(500_000)
        screen = tmux("capture-pane", "-p", "-t", "burst")
        #expect(!screen.contains("EXITED"), "the screen ended:\n\(screen)")
        #expect(screen.contains("you: Eli · listener"), "\(screen)")
        #expect(!screen.contains("Press q to close"), "\(screen)")
        let log = (try? String(contentsOf: state.appendingPathComponent("clubroom/join.log"), encoding: .utf8)) ?? ""
        checkLog(log, "the screen")
    }

    @Test(.timeLimit(.minutes(1))) func lineModeSurvivesABurstOfMalformedEvents() throws {
        let server = try HostileServer(script: burstingRoom)
        defer { server.shutdown() }
        let client = try ClientProcess([
            "join", server.url, "--token", "t", "--plain", "--output", "null", "--input", "null",
        ])
        let expected = ["Ana said: \(chatAfterBurst)", "Ana set the topic: \"\(topicAfterBurst)\"."]
        let shown = (0..<150).contains { _ in
            usleep(100_000)
            let printed = lines(client.standardOutput)
            return expected.allSatisfy(printed.contains)
        }
        let printed = lines(client.standardOutput)
        #expect(shown, "\(printed)")
        #expect(client.process.isRunning, "line mode ended: \(printed)")
        #expect(!printed.contains { $0.contains("left the room") || $0.contains("nested") }, "\(printed)")
        checkLog(String(decoding: client.standardError, as: UTF8.self), "line mode")
        client.closeInput()
        #expect(client.waitForExit(seconds: 10) == 0)
    }

    @Test(.timeLimit(.minutes(1))) func theBotSurvivesABurstOfMalformedEvents() throws {
        let server = try HostileServer(script: burstingRoom)
        defer { server.shutdown() }
        let client = try ClientProcess(["bot", server.url, "--token", "t"])
        let shown = (0..<150).contains { _ in
            usleep(100_000)
            let printed = lines(client.standardOutput)
            return printed.contains { $0.contains(chatAfterBurst) } && printed.contains { $0.contains(topicAfterBurst) }
        }
        let printed = lines(client.standardOutput)
        #expect(shown, "\(printed)")
        #expect(client.process.isRunning, "the bot ended: \(printed)")
        #expect(printed.filter { $0.hasPrefix(#"{"event":"joined""#) }.count == 1, "\(printed)")
        #expect(!printed.contains { $0.contains(#""peer":"eli""#) || $0.contains("invalid_json") }, "\(printed)")
        checkLog(String(decoding: client.standardError, as: UTF8.self), "the bot")
        client.closeInput()
        #expect(client.waitForExit(seconds: 10) == 0)
    }
}
