import ClubroomResources
import Foundation
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Testing
import WebSocket

/// The pieces of the attacks: escape sequences that change the pane's title, write the clipboard (OSC 52) and
/// reset the terminal, a right-to-left override, and a raw newline that forges a line of its own.
let setTitle = "\u{1B}]0;owned\u{07}"
let writeClipboard = "\u{1B}]52;c;cm0gLXJmIH4=\u{07}"
let resetTerminal = "\u{1B}c"
let rightToLeft = "\u{202E}"
let forgedLine = "\nAna said: send me your token"

/// The shipped role table, which a server's snapshot must carry for a client to accept it.
let shippedRoles = try! RoleTable.load(contentsOf: ClubroomResources.rolesURL)

/// A room whose server attacks through every string it sends: names (one of them over 4 KiB), the topic, chat,
/// an error, a removal's reason and the close reason.
@Sendable func attackingRoom(_ connection: WebSocketConnection) {
    let raw = [
        "ANA": "Ana" + setTitle, "BIG": String(repeating: "B", count: 5000),
        "LONG": String(repeating: "L", count: 4500),
        "CHAT": "hi\r\u{1B}[2Kforged\u{9B}31m",
    ]
    let peers = [
        AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .audience, joinedAt: 1)),
        AnnouncedPeer(Peer(id: "ana", name: "ANA", role: .host, muted: false, joinedAt: 1)),
        AnnouncedPeer(Peer(id: "big", name: "BIG", role: .speaker, joinedAt: 1)),
    ]
    let topic = writeClipboard + "Friday" + resetTerminal + " hour" + rightToLeft + "ruoh"
    HostileServer.send(
        connection,
        .joined(
            JoinedSnapshot(
                room: "lobby", selfID: "eli", peers: peers, topic: topic, chat: [], roles: shippedRoles,
                resumed: false)),
        seq: 1, raw: raw)
    HostileServer.send(
        connection, .peerJoined(AnnouncedPeer(Peer(id: "long", name: "LONG", role: .audience, joinedAt: 2))), seq: 2,
        raw: raw)
    HostileServer.send(connection, .topicChanged(topic: "Topic" + forgedLine, by: "ana"), seq: 3)
    HostileServer.send(
        connection, .chat(ChatMessage(from: "ana", fromName: "ANA", text: "CHAT", sentAt: 5)), seq: 4, raw: raw)
    HostileServer.send(connection, .error(code: .forbidden, message: setTitle + "no" + forgedLine, id: nil), seq: nil)
    HostileServer.send(
        connection, .removed(peer: "eli", by: "ana", reason: resetTerminal + rightToLeft + "bye" + forgedLine), seq: 5)
    connection.close(code: WebSocketCloseCode(4012), reason: setTitle + "removed" + forgedLine)
}

/// A server that refuses the join with a close reason full of escapes.
@Sendable func refusingRoom(_ connection: WebSocketConnection) {
    // A code the client has no sentence of its own for, so it quotes the server's reason.
    connection.close(code: WebSocketCloseCode(4099), reason: setTitle + rightToLeft + "bad token" + forgedLine)
}

func lines(_ data: Data) -> [String] {
    String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// `clubroom join --plain` and `clubroom bot` against servers that try to drive the person's terminal. Nothing
/// they send may reach the output as sent: every server string is cleaned where the client decodes it.
@Suite(.ownThread, .serialized) struct HostileServerTests {
    @Test(.timeLimit(.minutes(1))) func plainModePrintsNothingAServerCouldDriveTheTerminalWith() throws {
        let server = try HostileServer(script: attackingRoom)
        defer { server.shutdown() }
        let client = try ClientProcess([
            "join", server.url, "--token", "t", "--plain", "--output", "null", "--input", "null",
        ])
        let status = client.waitForExit(seconds: 20)
        let output = String(decoding: client.standardOutput, as: UTF8.self)
        #expect(status == 0, "\(output)")
        #expect(unsafeScalars(in: output).isEmpty, "unsafe characters reached the terminal: \(output.debugDescription)")
        let printed = lines(client.standardOutput)
        let expected = [
            // The snapshot is kept although one name is over 4 KiB.
            "You joined lobby as Eli (listener). 3 people here: 2 on stage, 0 raised hands, 1 listening. "
                + "Topic: \"]52;c;cm0gLXJmIH4=Fridayc hourruoh\". Type /help for the commands.",
            String(repeating: "L", count: 64) + " joined.",
            "Ana]0;owned set the topic: \"Topic Ana said: send me your token\".",
            "Ana]0;owned said: hi [2Kforged31m",
            "]0;ownedno Ana said: send me your token.",
            "Ana]0;owned removed you from the room: cbye Ana said: send me your token.",
        ]
        for line in expected { #expect(printed.contains(line), "missing \(line.debugDescription) in \(printed)") }
        // The removal, just told, ends the program without a second sentence about it.
        #expect(printed.last == expected.last, "\(printed)")
        // The forged text only ever appears inside the line it was smuggled into.
        #expect(!printed.contains { $0.hasPrefix("Ana said:") }, "\(printed)")
    }

    @Test(.timeLimit(.minutes(1))) func theBotPrintsNothingAServerCouldDriveTheTerminalWith() throws {
        let server = try HostileServer(script: attackingRoom)
        defer { server.shutdown() }
        let client = try ClientProcess(["bot", server.url, "--token", "t"])
        let status = client.waitForExit(seconds: 20)
        let output = String(decoding: client.standardOutput, as: UTF8.self)
        #expect(status == 3, "the bot was removed: \(output)")
        #expect(unsafeScalars(in: output).isEmpty, "unsafe characters in the bot's output: \(output.debugDescription)")
        var events: [String: [String: Any]] = [:]
        for line in lines(client.standardOutput) {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
            try #require(unsafeScalars(in: decodedStrings(object).joined()).isEmpty, "unsafe text in \(line)")
            events[object["event"] as? String ?? ""] = object
        }
        let peers = try #require(events["joined"]?["peers"] as? [[String: Any]], "no joined line: \(output)")
        #expect(
            peers.compactMap { $0["name"] as? String } == ["Eli", "Ana]0;owned", String(repeating: "B", count: 64)])
        #expect(events["joined"]?["topic"] as? String == "]52;c;cm0gLXJmIH4=Fridayc hourruoh")
        #expect(events["topic_changed"]?["topic"] as? String == "Topic Ana said: send me your token")
        #expect(events["chat"]?["text"] as? String == "hi [2Kforged31m")
        #expect(events["error"]?["message"] as? String == "]0;ownedno Ana said: send me your token")
        #expect(events["removed"]?["reason"] as? String == "cbye Ana said: send me your token")
    }

    @Test(.timeLimit(.minutes(1))) func aRefusalsCloseReasonIsCleanedInPlainModeAndTheBot() throws {
        let server = try HostileServer(script: refusingRoom)
        defer { server.shutdown() }
        let plain = try ClientProcess([
            "join", server.url, "--token", "t", "--plain", "--output", "null", "--input", "null",
        ])
        #expect(plain.waitForExit(seconds: 20) == 1)
        let said =
            "The server refused to let you in (4099: ]0;ownedbad token Ana said: send me your token)."
        #expect(lines(plain.standardOutput) == [said])
        #expect(lines(plain.standardError) == ["clubroom join: " + said])

        let bot = try ClientProcess(["bot", server.url, "--token", "t"])
        #expect(bot.waitForExit(seconds: 20) == 6)
        #expect(
            lines(bot.standardOutput) == [
                #"{"event":"error","code":"refused","message":"the server refused the connection (4099): ]0;ownedbad token Ana said: send me your token"}"#
            ])
    }

    @Test(.timeLimit(.minutes(1))) func anUpgradeRefusalsStatusLineIsCleaned() throws {
        let response = Array(
            "HTTP/1.1 403 \u{202E}Forbidden\u{9B}31m\u{2028}Ana said: hi\r\nContent-Length: 0\r\n\r\n".utf8)
        let server = try RawHTTPServer(response: response)
        defer { server.shutdown() }
        let plain = try ClientProcess([
            "join", server.url, "--token", "t", "--plain", "--output", "null", "--input", "null",
        ])
        #expect(plain.waitForExit(seconds: 20) == 1)
        let output = String(decoding: plain.standardOutput + plain.standardError, as: UTF8.self)
        #expect(output.contains("403 Forbidden31m Ana said: hi"), "\(output.debugDescription)")
        #expect(unsafeScalars(in: output).isEmpty, "\(output.debugDescription)")
        #expect(!lines(plain.standardOutput + plain.standardError).contains { $0.hasPrefix("Ana said") })
    }
}

/// Every string in a decoded JSON value.
func decodedStrings(_ value: Any) -> [String] {
    switch value {
    case let text as String: [text]
    case let array as [Any]: array.flatMap(decodedStrings)
    case let object as [String: Any]: object.keys.map { $0 } + object.values.flatMap(decodedStrings)
    default: []
    }
}
