import Foundation
import RoomCore
import StrictJSON
import Testing

@testable import RoomProtocol

/// The examples of `docs/protocol.md`, read from the file so that the document cannot drift from the code.
struct DocExample: CustomStringConvertible {
    enum Side { case client, server, lobby, directory }
    var side: Side
    var text: String
    var line: Int

    var description: String { "docs/protocol.md:\(line)" }

    static func all() throws -> [DocExample] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        var examples: [DocExample] = []
        var current: (side: Side, line: Int, lines: [String])?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let open = current {
                if line == "```" {
                    examples.append(
                        DocExample(side: open.side, text: open.lines.joined(separator: "\n"), line: open.line))
                    current = nil
                } else {
                    current?.lines.append(String(line))
                }
            } else if line == "```json client" {
                current = (.client, index + 1, [])
            } else if line == "```json server" {
                current = (.server, index + 1, [])
            } else if line == "```json lobby" {
                current = (.lobby, index + 1, [])
            } else if line == "```json directory" {
                current = (.directory, index + 1, [])
            }
        }
        return examples
    }
}

/// Compares JSON values with object members in any order.
func sameJSON(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.object(let left), .object(let right)):
        guard Set(left.keys) == Set(right.keys), left.keys.count == right.keys.count else { return false }
        return left.members.allSatisfy { member in right[member.key].map { sameJSON(member.value, $0) } ?? false }
    case (.array(let left), .array(let right)):
        return left.count == right.count && zip(left, right).allSatisfy(sameJSON)
    default:
        return lhs == rhs
    }
}

@Suite struct DocExamplesTests {
    @Test func theDocumentHasExamplesForEveryMessageType() throws {
        let examples = try DocExample.all()
        let parser = StrictJSONParser()
        func types(_ side: DocExample.Side) throws -> Set<String> {
            Set(
                try examples.filter { $0.side == side }.compactMap { example -> String? in
                    guard case .object(let object) = try parser.parse(example.text),
                        case .string(let type)? = object["type"]
                    else { return nil }
                    return type
                })
        }
        #expect(try types(.client) == Set(ClientRequest.typeNames))
        #expect(
            try types(.server)
                == [
                    "joined", "peer_joined", "peers_joined", "peer_left", "peers_left", "role_changed", "hand_raised",
                    "hand_lowered",
                    "mute_changed", "mic_changed", "playing_changed",
                    "speakers", "network_quality", "reaction", "chat", "invited", "invite_declined", "invite_withdrawn",
                    "invite_expired",
                    "asked_to_mute", "removed", "room_ended", "room_ending", "hands_allowed",
                    "topic_changed", "listing_changed", "recording", "invite_link", "links", "bans", "knock", "waiting",
                    "error", "stats", "streaming",
                ])
        #expect(try types(.lobby) == ["list", "open_room"])
        #expect(try types(.directory) == ["lobby", "rooms", "rooms_changed", "error", "room_opened"])
    }

    @Test(arguments: try DocExample.all())
    func everyExampleDecodesAndEncodesBackToItself(_ example: DocExample) throws {
        let source = try StrictJSONParser().parse(example.text)
        let encoded: JSONValue
        switch example.side {
        case .client:
            encoded = ControlCodec.json(try ControlCodec.decodeClient(example.text))
        case .server:
            encoded = ControlCodec.json(try ControlCodec.decodeServer(example.text))
        case .lobby:
            encoded = try StrictJSONParser().parse(
                DirectoryCodec.encode(try DirectoryCodec.decodeRequest(Array(example.text.utf8))))
        case .directory:
            encoded = DirectoryCodec.json(try DirectoryCodec.decodeMessage(Array(example.text.utf8)))
        }
        #expect(sameJSON(source, encoded), "\(example): encodes as \(encoded.encodedString)")
    }
}
