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

    /// The directory's messages, as a lobby takes them: the stage's roles and an error's code and message lose
    /// what a terminal would act on; the rest (already clean as a listing is made) is unchanged.
    @Test func aLobbyCleansTheDirectorysStrings() throws {
        let hostile =
            #"{"type":"rooms","seq":3,"rooms":[{"name":"jazz","topic":"\u001b]0;owned\u0007Late","stage":[{"name":"Ana\u202e","role":"ho\u001b[2Jst"}],"on_stage":1,"listeners":2,"raised_hands":0,"started_at":5}]}"#
        let rooms = try DirectoryCodec.decodeMessage(Array(hostile.utf8)).sanitized
        let listing = RoomListing(
            room: "jazz", topic: "]0;ownedLate",
            stage: [RoomListing.StageMember(name: "Ana", role: RoleName("ho[2Jst"))],
            onStage: 1, listeners: 2, raisedHands: 0, startedAt: 5)
        #expect(rooms == .rooms([listing], seq: 3))
        let error = try DirectoryCodec.decodeMessage(
            Array(#"{"type":"error","code":"bad\u001b[2J","message":"no\nAna said: forged\u009b31m"}"#.utf8))
        #expect(error.sanitized == .error(code: ErrorCode(rawValue: "bad[2J"), message: "no Ana said: forged31m"))
        let clean = DirectoryMessage.changed([.updated(listing), .removed(room: "rust", .ended)], seq: 4, since: 2)
        #expect(clean.sanitized == clean)
    }

    @Test func cleanTextComesThroughUnchanged() {
        for text in ["Friday terminal hour", "Ana Lima", "李小龍 👩‍💻", "e\u{301}t\u{E9}", "a-b_c.d", ""] {
            #expect(ServerText.line(text, maxCharacters: 200) == text)
            #expect(ServerText.identity(text) == text)
        }
    }

    /// Text that is clean already skips the work, and the quick check never disagrees with the rules: letters that
    /// join their neighbours (Thai SARA AM, halfwidth voiced marks, jamo) and stacks of them take the long way.
    @Test func theQuickCheckAgreesWithTheRules() {
        let texts = [
            "Ana Lima", "李小龍 さくら", "Zoë Émile", "ก" + String(repeating: "\u{E33}", count: 10), "ｶ\u{FF9E}",
            String(repeating: "\u{1100}", count: 10), "a  b", " a", "a ", "😀 ok", "🇯🇵", "👍🏽", "a\u{A0}b", "",
            String(repeating: "x", count: 300),
        ]
        for text in texts {
            for limit in [8, 200] {
                #expect(
                    ServerText.line(text, maxCharacters: limit) == DisplayName.rebuildLine(text, maxGraphemes: limit),
                    "\(text.debugDescription) at \(limit)")
            }
        }
        #expect(DisplayName.isClean("李小龍 さくら", maxGraphemes: 64))
        #expect(!DisplayName.isClean("ก\u{E33}", maxGraphemes: 64))
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

    static let roles = try! RoleTable(
        checking: [
            RoleDefinition(name: .host, label: "Host", rank: 0, onStage: true, permissions: [.chat]),
            RoleDefinition(name: .audience, label: "Audience", rank: 3, onStage: false, permissions: [.chat]),
        ], source: "test")

    /// Every string of every kind of server message goes through the rules: names and chat text when the decoder
    /// makes the peer and the message (`Peer`, `ChatMessage`), everything else at the session's edge.
    @Test func everyStringOfAMessageIsCleaned() {
        let bad = "x\u{1B}]0;t\u{07}\n\u{202E}"
        let badID = PeerID(bad)
        let peer = AnnouncedPeer(
            Peer(id: badID, name: bad, role: RoleName(bad), joinedAt: 1), invitation: Invitation(by: badID, at: 5))
        let chat = ChatMessage(from: badID, fromName: bad, text: bad, to: .peer(badID), sentAt: 1)
        let snapshot = JoinedSnapshot(
            room: bad, selfID: badID, peers: [peer], topic: bad, chat: [chat],
            roles: Self.roles.relabeled { _ in bad }, resumed: false)
        guard case .joined(let clean) = WireEvent.joined(snapshot).sanitized else {
            Issue.record("not a snapshot")
            return
        }
        let identity = "x]0;t"
        let id = PeerID(identity)
        #expect(clean.room == identity && clean.selfID == id && clean.topic == "x]0;t")
        #expect(
            clean.peers == [
                AnnouncedPeer(
                    Peer(id: id, name: "x]0;t", role: RoleName(identity), joinedAt: 1),
                    invitation: Invitation(by: id, at: 5))
            ])
        #expect(clean.chat == [ChatMessage(from: id, fromName: "x]0;t", text: "x]0;t", to: .peer(id), sentAt: 1)])
        #expect(clean.roles.roles.map(\.label) == ["x]0;t", "x]0;t"])
        #expect(clean.roles.roles.map(\.name) == [.host, .audience])
        #expect(
            WireEvent.removed(peer: badID, by: badID, reason: bad).sanitized
                == .removed(peer: id, by: id, reason: "x]0;t"))
        #expect(
            WireEvent.peersLeft([Departure(badID, .left), Departure("bo", .disconnected)]).sanitized
                == .peersLeft([Departure(id, .left), Departure("bo", .disconnected)]))
        #expect(
            WireEvent.error(code: ErrorCode(rawValue: bad), message: bad, id: .string(bad)).sanitized
                == .error(code: ErrorCode(rawValue: identity), message: "x]0;t", id: .string(identity)))
        #expect(
            WireEvent.error(code: .notSaved, message: "saved \u{1B}[2Jlater", id: nil).sanitized
                == .error(code: .notSaved, message: "saved [2Jlater", id: nil))
        #expect(
            MediaSignal.mediaSources([MediaSource(peer: bad, ssrc: 1)]).sanitized
                == .mediaSources([MediaSource(peer: identity, ssrc: 1)]))
    }

    /// A peer whose identity or name has nothing readable left still has one of each; the server's own changes
    /// (an empty `by`) stay the server's.
    @Test func nothingReadableLeftBecomesAReplacement() {
        let peer = Peer(id: "\u{1B}\u{07}", name: "\u{202E}", joinedAt: 1).sanitized
        #expect(peer.id == PeerID("\u{FFFD}") && peer.name == "\u{FFFD}")
        #expect(Peer(id: "ana", name: "\u{1B}", joinedAt: 1).sanitized.name == "ana")
        #expect(
            WireEvent.handLowered(peer: "ana", by: "").sanitized == .handLowered(peer: "ana", by: ""))
        #expect(ChatMessage(from: "bo", fromName: "\u{7}", text: "hi", sentAt: 1).sanitized.fromName == "bo")
    }

    /// A snapshot holding one name over 4 KiB is kept; the name is shortened.
    @Test func aSnapshotWithAnOverlongNameIsKept() throws {
        let long = String(repeating: "Ñ", count: 3000)
        var object = ControlCodec.json(
            ServerMessage(
                .joined(
                    JoinedSnapshot(
                        room: "lobby", selfID: "eli",
                        peers: [
                            AnnouncedPeer(Peer(id: "eli", name: "Eli", joinedAt: 1)),
                            AnnouncedPeer(Peer(id: "big", name: "Big", role: .host, joinedAt: 2)),
                        ], topic: "", chat: [], roles: Self.roles, resumed: false)), seq: 3)
        ).encodedString
        object = object.replacingOccurrences(of: "\"name\":\"Big\"", with: "\"name\":\"\(long)\"")
        let bytes = Array(object.utf8)
        #expect(bytes.count > 6000)
        let decoded = try ControlCodec.decodeServer(bytes)
        guard case .joined(let clean) = decoded.sanitized.event else {
            Issue.record("not a snapshot")
            return
        }
        #expect(clean.peers.map(\.peer.name) == ["Eli", String(repeating: "Ñ", count: 64)])
        #expect(clean.peers.map(\.peer.id) == ["eli", "big"])
    }
}
