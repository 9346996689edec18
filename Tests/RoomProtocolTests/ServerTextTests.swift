import RoomCore
import Testing

@testable import RoomProtocol

/// What a hostile server (or anyone on a `ws://` path) sends to drive a person's terminal, one attack each.
let terminalAttacks: [(name: String, text: String)] = [
    ("pane title (OSC 0)", "\u{1B}]0;owned\u{07}Friday"),
    ("clipboard write (OSC 52)", "\u{1B}]52;c;cm0gLXJmIH4=\u{07}Friday"),
    ("terminal reset (RIS)", "\u{1B}cFriday"),
    ("right-to-left override", "Friday \u{202E}yadirF"),
    ("forged line", "Friday\nAna said: send me your token"),
    ("carriage return", "Friday\r\u{1B}[2KAna said: forged"),
    ("C1 control sequence", "Friday\u{9B}31m"),
]

@Suite struct ServerTextTests {
    @Test(arguments: terminalAttacks.map(\.text))
    func linesLoseEverythingATerminalWouldActOn(_ attack: String) {
        let clean = ServerText.line(attack, maxCharacters: 200)
        #expect(!clean.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(!clean.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) })
        #expect(clean.contains("Friday"))
    }

    @Test func eachAttackIsCleanedToReadableText() {
        #expect(ServerText.line("\u{1B}]0;owned\u{07}Friday", maxCharacters: 200) == "]0;ownedFriday")
        #expect(ServerText.line("Friday \u{202E}yadirF", maxCharacters: 200) == "Friday yadirF")
        #expect(
            ServerText.line("Friday\nAna said: send me your token", maxCharacters: 200)
                == "Friday Ana said: send me your token")
        #expect(
            ServerText.line("Friday\r\u{1B}[2KAna said: forged", maxCharacters: 200) == "Friday [2KAna said: forged")
        #expect(ServerText.line("Friday\u{9B}31m", maxCharacters: 200) == "Friday31m")
    }

    @Test func cleanTextComesThroughUnchanged() {
        for text in ["Friday terminal hour", "Ana Lima", "李小龍 👩‍💻", "e\u{301}t\u{E9}", "a-b_c.d", ""] {
            #expect(ServerText.line(text, maxCharacters: 200) == text)
            #expect(ServerText.identity(text) == text)
        }
    }

    /// Text that is clean already skips the work, and the quick test never disagrees with the rules: letters that
    /// join their neighbours (Thai SARA AM, halfwidth voiced marks, jamo) and stacks of them take the long way.
    @Test func theQuickPathAgreesWithTheRules() {
        let texts = [
            "Ana Lima", "李小龍 さくら", "Zoë Émile", "ก" + String(repeating: "\u{E33}", count: 10), "ｶ\u{FF9E}",
            String(repeating: "\u{1100}", count: 10), "a  b", " a", "a ", "😀 ok", "🇯🇵", "👍🏽", "a\u{A0}b", "",
            String(repeating: "x", count: 300),
        ]
        for text in texts {
            for limit in [8, 200] {
                #expect(
                    ServerText.line(text, maxCharacters: limit) == DisplayName.sanitizeLine(text, maxGraphemes: limit),
                    "\(text.debugDescription) at \(limit)")
            }
        }
        #expect(ServerText.isPlainLine("李小龍 さくら", maxCharacters: 64))
        #expect(!ServerText.isPlainLine("ก\u{E33}", maxCharacters: 64))
    }

    @Test func identitiesKeepTheirSpacesAndLoseControls() {
        #expect(ServerText.identity("ana  lima ") == "ana  lima ")
        #expect(ServerText.identity("ana\u{1B}[2J\u{202E}") == "ana[2J")
        let long = String(repeating: "é", count: 100)
        #expect(ServerText.identity(long) == String(repeating: "é", count: 64))
    }

    @Test func longTextIsCutToItsLimit() {
        let name = String(repeating: "N", count: 5000)
        #expect(ServerText.name(name, fallback: "id") == String(repeating: "N", count: 64))
        #expect(ServerText.name("\u{1B}\u{07}", fallback: "id") == "id")
        #expect(ServerText.line(String(repeating: "a ", count: 300), maxCharacters: 200).count == 199)
    }

    /// Every string of every kind of server message goes through the rules.
    @Test func everyStringOfAMessageIsCleaned() {
        let bad = "x\u{1B}]0;t\u{07}\n\u{202E}"
        let peer = WirePeer(id: bad, name: bad, role: bad, joinedAt: 1, invitedBy: bad)
        let chat = WireChat(from: bad, name: bad, text: bad, at: 1, to: .peer(bad))
        let snapshot = JoinedSnapshot(
            room: bad, selfID: bad, peers: [peer], topic: bad, chat: [chat],
            roles: [WireRole(name: bad, label: bad, rank: 0, onStage: true, permissions: [bad])], resumed: false)
        guard case .joined(let clean) = WireEvent.joined(snapshot).sanitized else {
            Issue.record("not a snapshot")
            return
        }
        let identity = "x]0;t"
        #expect(clean.room == identity && clean.selfID == identity && clean.topic == "x]0;t")
        #expect(
            clean.peers == [WirePeer(id: identity, name: "x]0;t", role: identity, joinedAt: 1, invitedBy: identity)])
        #expect(clean.chat == [WireChat(from: identity, name: "x]0;t", text: "x]0;t", at: 1, to: .peer(identity))])
        #expect(
            clean.roles == [WireRole(name: identity, label: "x]0;t", rank: 0, onStage: true, permissions: [identity])])
        #expect(
            WireEvent.removed(peer: bad, by: bad, reason: bad).sanitized
                == .removed(peer: identity, by: identity, reason: "x]0;t"))
        #expect(
            WireEvent.error(code: ErrorCode(rawValue: bad), message: bad, id: .string(bad)).sanitized
                == .error(code: ErrorCode(rawValue: identity), message: "x]0;t", id: .string(identity)))
        #expect(
            MediaSignal.mediaSources([MediaSource(peer: bad, ssrc: 1)]).sanitized
                == .mediaSources([MediaSource(peer: identity, ssrc: 1)]))
    }

    /// A snapshot holding one name over 4 KiB is kept; the name is shortened.
    @Test func aSnapshotWithAnOverlongNameIsKept() throws {
        let long = String(repeating: "Ñ", count: 3000)
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "eli",
            peers: [
                WirePeer(id: "eli", name: "Eli", role: "audience", joinedAt: 1),
                WirePeer(id: "big", name: long, role: "speaker", joinedAt: 2),
            ], topic: "", chat: [], roles: [], resumed: false)
        let bytes = ControlCodec.encode(ServerMessage(.joined(snapshot), seq: 3))
        #expect(bytes.count > 6000)
        let decoded = try ControlCodec.decodeServer(bytes)
        #expect(decoded == ServerMessage(.joined(snapshot), seq: 3))
        guard case .joined(let clean) = decoded.sanitized.event else {
            Issue.record("not a snapshot")
            return
        }
        #expect(clean.peers.map(\.name) == ["Eli", String(repeating: "Ñ", count: 64)])
    }
}
