import RoomCore
import StrictJSON
import Testing

@testable import RoomProtocol

/// Links as people paste them: both kinds, every spelling the format allows, and every way to get one wrong.
@Suite struct ClubroomLinkTests {
    let token = "eyJhbGciOiJIUzI1NiJ9.eyJ1c2UiOiJpbnZpdGUifQ.c2ln-_"

    @Test func roomAndServerLinksAndAddresses() throws {
        let room = try ClubroomLink.parse("wss://rooms.example.org/rooms/lobby#invite=\(token)")
        #expect(room.server == ServerAddress(secure: true, host: "rooms.example.org", port: 443))
        #expect(room.room == "lobby" && room.invite == token)
        #expect(room.url == "wss://rooms.example.org/rooms/lobby")

        let server = try ClubroomLink.parse("ws://127.0.0.1:7480/rooms#invite=\(token)")
        #expect(server.room == nil && server.invite == token && server.url == "ws://127.0.0.1:7480/rooms")

        for address in [
            "ws://127.0.0.1:7480", "ws://127.0.0.1:7480/", "ws://127.0.0.1:7480/rooms", "ws://127.0.0.1:7480/rooms/",
        ] {
            let parsed = try ClubroomLink.parse(address)
            #expect(
                parsed.room == nil && parsed.invite == nil && parsed.url == "ws://127.0.0.1:7480/rooms", "\(address)")
        }
        let proxied = try ClubroomLink.parse("wss://example.org:8443/clubroom/rooms/jazz")
        #expect(proxied.server.prefix == "/clubroom" && proxied.room == "jazz")
        #expect(proxied.url == "wss://example.org:8443/clubroom/rooms/jazz")
        let v6 = try ClubroomLink.parse("ws://[::1]:7480/rooms/a")
        #expect(v6.server.host == "::1" && v6.url == "ws://[::1]:7480/rooms/a")
    }

    @Test func whatAChatAddsAroundALinkIsLeftOut() throws {
        let plain = "wss://rooms.example.org/rooms#invite=\(token)"
        for pasted in [
            "  \(plain)\n", "<\(plain)>", "\"\(plain)\"", "'\(plain)'", "\(plain).", "\(plain),", "<\(plain)>.",
            "\"\(plain).\"",
        ] {
            #expect(try ClubroomLink.parse(pasted).invite == token, "\(pasted)")
        }
    }

    /// A link copied from a screen that wrapped it (the room screen's event pane indents the lines after the
    /// first) comes with line breaks and spaces around them: they are left out. A space within a line is not.
    @Test func aLinkWrappedOverLinesIsReadWhole() throws {
        let plain = "wss://rooms.example.org/rooms/jazz#invite=\(token)"
        let cut1 = plain.index(plain.startIndex, offsetBy: 30)
        let cut2 = plain.index(plain.startIndex, offsetBy: 60)
        let (first, second, third) = (plain[..<cut1], plain[cut1..<cut2], plain[cut2...])
        for pasted in [
            "\(first)\n  \(second)\n  \(third)", "  \(first) \r\n\t\(second)\n\(third)\n",
            "'\(first)\n   \(second)\(third)'",
        ] {
            let link = try ClubroomLink.parse(pasted)
            #expect(link.invite == token && link.room == "jazz", "\(pasted)")
        }
        #expect(throws: LinkError(.badCharacter)) { try ClubroomLink.parse("\(first) \(second)\n\(third)") }
        #expect(throws: LinkError(.badCharacter)) { try ClubroomLink.parse("\(first)\u{2028}\(second)\(third)") }
    }

    @Test func aLinkIsWrittenTheWayItIsRead() throws {
        let address = ServerAddress(secure: true, host: "rooms.example.org", port: 443, prefix: "/c")
        #expect(address.link(room: nil, invite: token) == "wss://rooms.example.org/c/rooms#invite=\(token)")
        #expect(address.link(room: "jazz", invite: token) == "wss://rooms.example.org/c/rooms/jazz#invite=\(token)")
        #expect(
            try ClubroomLink.parse(address.link(room: "jazz", invite: token))
                == ClubroomLink(server: address, room: "jazz", invite: token))
        #expect(ServerAddress(secure: false, host: "127.0.0.1", port: 7480).displayName == "127.0.0.1:7480")
        #expect(address.displayName == "rooms.example.org/c")
    }

    @Test(arguments: [
        ("", LinkError.Problem.empty),
        ("https://rooms.example.org/rooms#invite=a.b.c", .webAddress),
        ("rooms.example.org/rooms", .scheme),
        ("wss://rooms.example.org/rooms?token=a.b.c", .query),
        ("wss:///rooms", .noHost),
        ("wss://ana@rooms.example.org/rooms", .userInfo),
        ("wss://rooms.example.org:99999/rooms", .badPort),
        ("wss://rooms.example.org:/rooms", .badPort),
        ("wss://rooms.example.org/lobby", .path),
        ("wss://rooms.example.org/rooms/a/b", .path),
        ("wss://rooms.example.org//rooms", .path),
        ("wss://rooms.example.org/rooms/caf%C3%A9", .roomName("caf%C3%A9")),
        ("wss://rooms.example.org/rooms#token=a.b.c", .fragment),
        ("wss://rooms.example.org/rooms#invite=", .emptyToken),
        ("wss://rooms.example.org/rooms#invite=a.b.c!", .badToken),
        ("wss://rooms.example.org/rooms #invite=a.b.c", .badCharacter),
    ])
    func aMalformedLinkSaysWhatIsWrong(text: String, problem: LinkError.Problem) {
        #expect(throws: LinkError(problem)) { try ClubroomLink.parse(text) }
    }

    @Test func everyProblemIsASentenceAboutTheLink() {
        let problems: [LinkError.Problem] = [
            .empty, .tooLong, .badCharacter, .webAddress, .scheme, .query, .noHost, .userInfo, .badPort, .path,
            .roomName("x y"), .fragment, .emptyToken, .badToken,
        ]
        for problem in problems {
            let text = LinkError(problem).description
            #expect(text.hasPrefix("This is not a Clubroom link: ") && text.hasSuffix("."), "\(text)")
        }
    }

    /// The parser takes any text: cut anywhere, a link is read or refused, never a crash.
    @Test func everyPrefixOfALinkIsReadOrRefused() {
        let link = "wss://rooms.example.org:8443/c/rooms/jazz#invite=\(token)"
        for length in 0...link.count {
            _ = try? ClubroomLink.parse(String(link.prefix(length)))
        }
        #expect(throws: LinkError(.tooLong)) {
            try ClubroomLink.parse("ws://a/rooms#invite=" + String(repeating: "a", count: 7000))
        }
    }
}

@Suite struct InviteTokenTests {
    let key: [UInt8] = Array(repeating: 5, count: 32)
    func authenticator(_ key: [UInt8]) -> TokenAuthenticator {
        { message in
            // Any 32-byte function of key and message will do for the codec's own checks; the real HMAC is tested
            // with libcrypto in CryptoTests.
            var tag = [UInt8](repeating: 0, count: 32)
            for (index, byte) in (key + message).enumerated() { tag[index % 32] = tag[index % 32] &* 31 &+ byte }
            return tag
        }
    }

    @Test func anInviteCarriesItsKeyIDAndNoOne() throws {
        let claims = InviteClaims(
            role: "audience", room: nil, id: "abc", expiresAt: 2000, notBefore: 1000, issuedAt: 1000)
        #expect(claims.json == #"{"use":"invite","role":"audience","jti":"abc","iat":1000,"nbf":1000,"exp":2000}"#)
        let token = try RoomToken.signInvite(claims, keyID: "k1", authenticator: authenticator(key))
        let header = String(decoding: Base64URL.decode(String(token.split(separator: ".")[0]))!, as: UTF8.self)
        #expect(header == #"{"alg":"HS256","typ":"JWT","kid":"k1"}"#)
        #expect(RoomToken.looksLikeInvite(token))
        let verified = try RoomToken.verifyCredential(
            token, keyID: "k1", now: 1500, isKnownRole: { _ in true }, authenticator: authenticator(key))
        #expect(verified == .invite(claims))
    }

    @Test func theChecksRunInOrder() throws {
        let claims = InviteClaims(role: "audience", room: "jazz", id: "abc", expiresAt: 2000, notBefore: 1000)
        let token = try RoomToken.signInvite(claims, keyID: "k1", authenticator: authenticator(key))
        func verify(
            _ token: String, keyID: String = "k1", now: Int64 = 1500, key: [UInt8]? = nil
        ) throws(TokenError) -> TokenCredential {
            try RoomToken.verifyCredential(
                token, keyID: keyID, now: now, isKnownRole: { $0 == "audience" },
                authenticator: authenticator(key ?? self.key))
        }
        #expect(throws: TokenError.wrongServer) { try verify(token, keyID: "k2") }
        #expect(throws: TokenError.badSignature) { try verify(token, key: Array(repeating: 6, count: 32)) }
        #expect(throws: TokenError.expired(expiresAt: 2000, now: 2030)) { try verify(token, now: 2030) }
        #expect(throws: TokenError.notYetValid(notBefore: 1000, now: 969)) { try verify(token, now: 969) }
        let dj = try RoomToken.signInvite(
            InviteClaims(role: "dj", room: nil, id: "d", expiresAt: 2000, notBefore: 1000), keyID: "k1",
            authenticator: authenticator(key))
        #expect(throws: TokenError.unknownRole("dj")) { try verify(dj) }
        // A room token without a key id still verifies, as a person's.
        let person = try RoomToken.sign(
            TokenClaims(subject: "ana", name: "Ana", room: "jazz", role: "audience", expiresAt: 2000, notBefore: 1000),
            authenticator: authenticator(key))
        guard case .person(let read) = try verify(person) else {
            Issue.record("not a person's token")
            return
        }
        #expect(read.subject == "ana" && !RoomToken.looksLikeInvite(person))
    }

    @Test func anInviteThatNamesSomeoneIsRefused() throws {
        let header = Base64URL.encode(Array(RoomToken.inviteHeaderJSON(keyID: "k1").utf8))
        let body = Base64URL.encode(Array(#"{"use":"invite","role":"audience","sub":"ana","nbf":1,"exp":9999}"#.utf8))
        let signature = Base64URL.encode(authenticator(key)(Array((header + "." + body).utf8))!)
        #expect(throws: TokenError.malformed("an invite names no one: it has a \"sub\" claim")) {
            try RoomToken.verifyCredential(
                header + "." + body + "." + signature, keyID: "k1", now: 100, isKnownRole: { _ in true },
                authenticator: authenticator(key))
        }
    }

    @Test func guestNamesTravelAsPercentEncodedUTF8() {
        for name in ["Hana Lee", "Zoë", "李小龍", "👩‍💻 dev", "a%b/c"] {
            let encoded = GuestHeaders.encodeName(name)
            #expect(encoded.allSatisfy { $0.isASCII && !$0.isWhitespace }, "\(encoded)")
            #expect(GuestHeaders.decodeName(encoded) == name)
        }
        #expect(GuestHeaders.encodeName("Hana Lee") == "Hana%20Lee")
        #expect(GuestHeaders.decodeName("%E2%82") == nil)
        #expect(GuestHeaders.decodeName("%G0") == nil)
        #expect(GuestHeaders.decodeKey(Base64URL.encode(Array(repeating: 1, count: 32)))?.count == 32)
        #expect(GuestHeaders.decodeKey(Base64URL.encode(Array(repeating: 1, count: 31))) == nil)
        #expect(GuestHeaders.decodeKey(nil) == nil)
    }
}

/// The directory's messages, decoded whole, split at every byte and truncated, as every codec is.
@Suite struct DirectoryCodecTests {
    let listing = RoomListing(
        room: "jazz", topic: "Late night jazz", stage: [.init(name: "Eli", role: .host)], onStage: 1, listeners: 12,
        raisedHands: 2, startedAt: 1_764_414_000_000)

    @Test func messagesSurviveARoundTrip() throws {
        let messages: [DirectoryMessage] = [
            .rooms([listing], seq: 3), .rooms([], seq: 0),
            .changed([.added(listing, .started), .added(listing, .listed), .updated(listing)], seq: 4),
            .changed(ListingDeparture.allCases.map { .removed(room: "jazz", $0) }, seq: 5),
            .changed([.updated(listing)], seq: 9, since: 4), .changed([], seq: 10, since: 0),
            .error(code: .rateLimited, message: "slow down"),
            .refused(code: .conflict, message: "taken", id: "open-1"),
        ]
        for message in messages {
            #expect(try DirectoryCodec.decodeMessage(DirectoryCodec.encode(message)) == message)
        }
        #expect(try DirectoryCodec.decodeRequest(DirectoryCodec.encode(.list)) == .list)
        #expect(
            String(decoding: DirectoryCodec.encode(.changed([], seq: 10, since: 7)), as: UTF8.self)
                == #"{"type":"rooms_changed","seq":10,"since":7,"changes":[]}"#)
        // An error and a refusal are one message, `error`, the refusal with the id of the request it answers.
        #expect(
            String(decoding: DirectoryCodec.encode(.error(code: .rateLimited, message: "slow down")), as: UTF8.self)
                == #"{"type":"error","code":"rate_limited","message":"slow down"}"#)
        #expect(
            String(
                decoding: DirectoryCodec.encode(.refused(code: .conflict, message: "taken", id: "open-1")),
                as: UTF8.self)
                == #"{"type":"error","code":"conflict","message":"taken","id":"open-1"}"#)
    }

    /// A change follows the message before it in number, or the one its `since` names; a list follows anything.
    @Test func whatFollowsWhat() {
        #expect(DirectoryMessage.changed([], seq: 5).follows(4))
        #expect(!DirectoryMessage.changed([], seq: 5).follows(3))
        #expect(DirectoryMessage.changed([], seq: 9, since: 3).follows(3))
        #expect(!DirectoryMessage.changed([], seq: 9, since: 3).follows(8))
        #expect(DirectoryMessage.rooms([], seq: 9).follows(2))
    }

    @Test func hostileMessagesAreRefusedCleanly() {
        let cases: [(String, ControlDecodeError)] = [
            (
                #"{"type":"rooms","seq":1,"rooms":[{"name":"a b","topic":"","stage":[],"on_stage":0,"listeners":0,"raised_hands":0,"started_at":1}]}"#,
                ControlDecodeError(.badRequest, "the field \"name\" is not a room name")
            ),
            (
                #"{"type":"rooms","seq":-1,"rooms":[]}"#,
                ControlDecodeError(.badRequest, "the field \"seq\" must be between 0 and 9223372036854775807")
            ),
            (
                #"{"type":"rooms_changed","seq":1,"changes":[{"change":"moved","name":"a"}]}"#,
                ControlDecodeError(.badRequest, "unknown change \"moved\"")
            ),
            (
                #"{"type":"rooms_changed","seq":1,"changes":[{"change":"removed","why":"bored","name":"a"}]}"#,
                ControlDecodeError(.badRequest, "unknown reason \"bored\" for a room removed")
            ),
            (
                #"{"type":"rooms_changed","seq":4,"since":4,"changes":[]}"#,
                ControlDecodeError(.badRequest, "the field \"since\" must be below \"seq\"")
            ),
            (
                #"{"type":"rooms_changed","seq":4,"since":-1,"changes":[]}"#,
                ControlDecodeError(.badRequest, "the field \"since\" must be below \"seq\"")
            ),
            (
                #"{"type":"rooms_changed","seq":4,"since":"3","changes":[]}"#,
                ControlDecodeError(.badRequest, "the field \"since\" must be an integer")
            ),
            (
                #"{"type":"rooms","seq":1,"seq":2,"rooms":[]}"#,
                ControlDecodeError(.duplicateKey, "the key \"seq\" appears twice at byte 24")
            ),
            (
                #"{"type":"rooms","seq":1,"rooms":[{"name":"a","topic":"","stage":[],"on_stage":0,"listeners":-5,"raised_hands":0,"started_at":1}]}"#,
                ControlDecodeError(.badRequest, "the field \"listeners\" must be between 0 and 2147483647")
            ),
        ]
        for (text, error) in cases {
            #expect(throws: error) { try DirectoryCodec.decodeMessage(Array(text.utf8)) }
        }
        let nine = (0..<9).map { #"{"name":"n\#($0)","role":"speaker"}"# }.joined(separator: ",")
        #expect(throws: ControlDecodeError(.badRequest, "\"stage\" names more than 8 people")) {
            try DirectoryCodec.decodeMessage(
                Array(
                    #"{"type":"rooms","seq":1,"rooms":[{"name":"a","topic":"","stage":[\#(nine)],"on_stage":9,"listeners":0,"raised_hands":0,"started_at":1}]}"#
                        .utf8))
        }
        #expect(
            throws: ControlDecodeError(
                .unknownType,
                "unknown message type \"join\"; the directory answers only \"list\" and \"open_room\"")
        ) {
            try DirectoryCodec.decodeRequest(Array(#"{"type":"join"}"#.utf8))
        }
        #expect(throws: ControlDecodeError(.badRequest, "JSON larger than 1024 bytes")) {
            try DirectoryCodec.decodeRequest(
                Array((#"{"type":"list","x":""# + String(repeating: "a", count: 1100) + #""}"#).utf8))
        }
    }

    @Test func everyPrefixIsRefusedAndEveryCorruptionIsReadOrRefused() throws {
        let bytes = DirectoryCodec.encode(
            .changed([.added(listing, .started), .removed(room: "rust", .empty)], seq: 9))
        for length in 0..<bytes.count {
            #expect(throws: ControlDecodeError.self) { try DirectoryCodec.decodeMessage(bytes[0..<length]) }
        }
        for index in bytes.indices {
            for replacement: UInt8 in [0x00, 0x22, 0x5C, 0x7D, 0xFF] {
                var corrupted = bytes
                corrupted[index] = replacement
                _ = try? DirectoryCodec.decodeMessage(corrupted)
            }
        }
        #expect(
            try DirectoryCodec.decodeMessage(bytes)
                == .changed([.added(listing, .started), .removed(room: "rust", .empty)], seq: 9))
    }
}
