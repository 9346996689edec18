import Foundation
import RoomCore
import RoomProtocol
import StrictJSON

/// The strict JSON parser and the three codecs built on it: client messages, server messages, media messages.
enum JSONChecks {
    // MARK: Strict JSON

    /// Input: a byte choosing the depth limit, then the text.
    static func strictJSON(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let depth = choices.pick([1, 2, 4, 16, 32])
        let text = choices.rest
        let parser = StrictJSONParser(maxDepth: depth, maxBytes: 64 * 1024)
        let value: JSONValue
        do {
            value = try parser.parse(text)
        } catch {
            try expect(error.offset >= 0 && error.offset <= text.count, "error offset \(error.offset) of \(text.count)")
            return
        }
        try expect(nesting(value) <= depth, "a value nested \(nesting(value)) deep passed a limit of \(depth)")
        let encoded = value.encoded
        let again: JSONValue
        do {
            again = try StrictJSONParser(maxDepth: depth, maxBytes: .max).parse(encoded)
        } catch {
            throw FuzzFailure("the encoding \(value.encodedString) of accepted JSON is refused: \(error)")
        }
        try expect(again == value, "\(value.encodedString) parses back as \(again.encodedString)")
        try expect(again.encoded == encoded, "encoding is not stable: \(again.encodedString)")
        // What the strict parser accepts, any RFC 8259 parser accepts.
        let foundation = try? JSONSerialization.jsonObject(with: Data(text), options: [.fragmentsAllowed])
        try expect(foundation != nil, "Foundation refuses JSON the strict parser accepted")
    }

    static func nesting(_ value: JSONValue) -> Int {
        switch value {
        case .array(let elements): 1 + (elements.map(nesting).max() ?? 0)
        case .object(let object): 1 + (object.members.map { nesting($0.value) }.max() ?? 0)
        default: 0
        }
    }

    // MARK: Client messages

    static func clientMessages(_ input: [UInt8]) throws(FuzzFailure) {
        guard let message = try decodedOrRefused(input, "a message", ControlCodec.decodeClient) else {
            return
        }
        try expectStableRoundTrip(
            message, "\(message)", maxBytes: ControlLimits.maxFrameBytes, encode: ControlCodec.encode,
            decode: ControlCodec.decodeClient)
    }

    // MARK: Server messages

    static func serverMessages(_ input: [UInt8]) throws(FuzzFailure) {
        guard let message = try decodedOrRefused(input, "a message", ControlCodec.decodeServer) else {
            return
        }
        let encoded = ControlCodec.encode(message)
        try expect(
            encoded == ControlCodec.json(message).encoded,
            "the \(message.event.typeName) writer differs from the JSON tree")
        do {
            let again = try ControlCodec.decodeServer(encoded)
            try expect(again == message, "\(message.event.typeName) encodes to a message read as \(again)")
        } catch {
            throw FuzzFailure("the encoding of \(message.event.typeName) is refused: \(error)")
        }

        // The client's edge: everything a person could see is safe, cleaning twice changes nothing, and a
        // message that was clean already comes through as it was.
        let clean = message.sanitized
        try expect(clean.sanitized == clean, "cleaning \(message.event.typeName) twice changes it")
        // The quick check for text that is clean already agrees with the rules it stands for.
        for text in strings(of: message) {
            for limit in [64, 2000] where DisplayName.isClean(text, maxGraphemes: limit) {
                let rule = DisplayName.rebuildLine(text, maxGraphemes: limit)
                try expect(
                    rule == text,
                    "\(text.debugDescription) passes the quick check, the rules make it \(rule.debugDescription)")
            }
        }
        for text in strings(of: clean) {
            try expect(isSafe(text), "unsafe text survives cleaning: \(text.debugDescription)")
        }
        let cleanJSON = ControlCodec.encode(clean)
        do {
            let decodedClean = try ControlCodec.decodeServer(cleanJSON)
            try expect(decodedClean == clean, "a cleaned \(message.event.typeName) does not round-trip")
        } catch {
            throw FuzzFailure("a cleaned \(message.event.typeName) is refused: \(error)")
        }
        try checkMapping(clean)
    }

    /// What a client's store receives: `peers_joined` and `peers_left` become one action per peer, in order,
    /// numbered up to the message's own number; an `error` keeps its code (`not_saved` among them) and text.
    static func checkMapping(_ message: ServerMessage) throws(FuzzFailure) {
        let actions = message.roomActions(selfID: "ana")
        let expected: [ServerEvent]
        switch message.event {
        case .peersJoined(let peers): expected = peers.map { .peerJoined($0.peer, invitation: $0.invitation) }
        case .peersLeft(let departures): expected = departures.map { .peerLeft($0.peer) }
        case .error(let code, let text, _):
            try expect(
                message.roomEvent(selfID: "ana") == .error(code: code.rawValue, message: text),
                "the error \(code) reaches the store changed")
            if code == .notSaved { try expect(code.rawValue == "not_saved", "not_saved is spelled \(code.rawValue)") }
            return
        default: return
        }
        try expect(actions.count == expected.count, "\(expected.count) peers become \(actions.count) actions")
        let last = message.seq ?? 0
        for (index, action) in actions.enumerated() {
            let number = UInt64(max(0, last - Int64(expected.count) + 1 + Int64(index)))
            try expect(
                action == .server(expected[index], seq: number),
                "action \(index) of \(message.event.typeName) is \(action), not number \(number)")
        }
    }

    /// Whether a terminal would print `text` as it is: no control characters, line breaks, bidi controls or
    /// invisible spaces.
    static func isSafe(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { !DisplayName.isInvisibleControl($0) }
    }

    /// Every string a server message carries.
    static func strings(of message: ServerMessage) -> [String] {
        func peer(_ announced: AnnouncedPeer) -> [String] {
            let peer = announced.peer
            return [peer.id.rawValue, peer.name, peer.role.rawValue] + (announced.invitedBy.map { [$0.rawValue] } ?? [])
        }
        func chat(_ chat: ChatMessage) -> [String] {
            let target: [String] =
                switch chat.to {
                case .everyone: []
                case .peer(let peer): [peer.rawValue]
                case .role(let role): [role.rawValue]
                }
            return [chat.from.rawValue, chat.fromName, chat.text] + target
        }
        switch message.event {
        case .joined(let snapshot):
            return [snapshot.room, snapshot.selfID.rawValue, snapshot.topic] + snapshot.peers.flatMap(peer)
                + snapshot.chat.flatMap(chat) + snapshot.roles.roles.flatMap { [$0.name.rawValue, $0.label] }
        case .peerJoined(let announced): return peer(announced)
        case .peersJoined(let peers): return peers.flatMap(peer)
        case .peerLeft(let id, _), .handRaised(let id, _): return [id.rawValue]
        case .peersLeft(let departures): return departures.map(\.peer.rawValue)
        case .roleChanged(let id, let role, let by, let stepUp):
            return [id.rawValue, role.rawValue, by.rawValue] + (stepUp.map { [$0.rawValue] } ?? [])
        case .handLowered(let id, let by), .invited(let id, let by, _), .inviteDeclined(let id, let by),
            .inviteWithdrawn(let id, let by), .askedToMute(let id, let by), .muteChanged(let id, _, let by):
            return [id.rawValue, by.rawValue]
        case .inviteExpired(let id), .micChanged(let id, _), .playingChanged(let id, _): return [id.rawValue]
        case .roomEnding(let id, let name, _): return [id.rawValue, name]
        case .speakers(let levels): return levels.map(\.peer.rawValue)
        case .networkQuality(let peers): return peers.map(\.peer.rawValue)
        case .reaction(let burst): return burst.senders.map(\.peer.rawValue)
        case .chat(let message): return chat(message)
        case .removed(let id, let by, let reason): return [id.rawValue, by.rawValue, reason]
        case .roomEnded(let by, let reason): return [by.rawValue, reason]
        case .topicChanged(let topic, let by): return [topic, by.rawValue]
        case .listingChanged(_, let by), .handsAllowed(_, let by): return [by.rawValue]
        case .recording(let recording, let by, let reason):
            return [recording?.by?.rawValue, by?.rawValue, reason].compactMap { $0 }
        case .streaming(let streaming, let by, let reason):
            return (streaming?.to ?? []) + [by?.rawValue, reason].compactMap { $0 }
        case .inviteLink(let room, let role, let token, _, let id):
            if case .string(let idText)? = id { return [room, role.rawValue, token, idText] }
            return [room, role.rawValue, token]
        case .knock(let room, let knock): return [room, knock.peer.rawValue, knock.name, knock.by?.rawValue ?? ""]
        case .waiting(let room): return [room]
        case .links(let room, let links, let withdrawn, _, let id):
            let texts = [room] + links.flatMap { [$0.id, $0.role.rawValue, $0.by.rawValue] } + withdrawn
            if case .string(let idText)? = id { return texts + [idText] }
            return texts
        case .bans(let bans, let lifted, let id):
            let texts = bans.flatMap { [$0.identity.rawValue, $0.name, $0.by.rawValue, $0.reason] } + lifted
            if case .string(let idText)? = id { return texts + [idText] }
            return texts
        case .stats(let people, let id):
            let texts = people.flatMap { [$0.peer.rawValue, $0.name] }
            if case .string(let idText)? = id { return texts + [idText] }
            return texts
        case .error(let code, let text, let id):
            if case .string(let idText)? = id { return [code.rawValue, text, idText] }
            return [code.rawValue, text]
        }
    }

    // MARK: Media messages

    static func mediaSignals(_ input: [UInt8]) throws(FuzzFailure) {
        guard let text = String(validating: input, as: UTF8.self) else { return }
        let decoded: MediaSignal?
        do {
            decoded = try MediaSignalCodec.decode(text)
        } catch {
            try expect(!error.message.isEmpty, "a refusal without a message")
            return
        }
        guard let signal = decoded else { return }
        let encoded = MediaSignalCodec.encode(signal)
        do {
            _ = try StrictJSONParser(maxDepth: 4, maxBytes: .max).parse(encoded)
        } catch {
            throw FuzzFailure("the encoding of \(signal.type) is not JSON: \(error): \(encoded.debugDescription)")
        }
        let clean = signal.sanitized
        try expect(clean.sanitized == clean, "cleaning \(signal.type) twice changes it")
        if case .mediaSources(let sources) = clean {
            for source in sources { try expect(isSafe(source.peer), "unsafe peer \(source.peer.debugDescription)") }
        }
        guard encoded.utf8.count <= ControlLimits.maxFrameBytes else { return }
        do {
            let again = try MediaSignalCodec.decode(encoded)
            try expect(again == signal, "\(signal.type) encodes to a message read as \(String(describing: again))")
            try expect(again.map(MediaSignalCodec.encode) == encoded, "encoding of \(signal.type) is not stable")
        } catch {
            throw FuzzFailure("the encoding of \(signal.type) is refused: \(error)")
        }
    }

    // MARK: Seeds

    static func jsonSeeds() -> [[UInt8]] {
        let texts = [
            #"{"a":[1,2.5,-3e-2,true,false,null,"x\u00e9\ud83d\ude00\n"],"b":{"c":{}}}"#,
            #"[[[[[]]]]]"#, #"  "\/\b\f\r\t\"\\"  "#, "-0", "123456789012345678901234567890", "1E+2",
            #"{"a":1,"a":2}"#, "[1,]", #""\ud800""#, "0.5e-400",
        ]
        return texts.map { [3] + Array($0.utf8) }
    }

    static let peerAna = AnnouncedPeer(
        Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1_700_000_000_000))
    static let peerEli = AnnouncedPeer(
        Peer(
            id: "eli", name: "Eli \u{1F469}\u{200D}\u{1F4BB}", role: .audience, handRaisedAt: 1_700_000_001_000,
            joinedAt: 1_700_000_000_500, level: 42), invitation: Invitation(by: "ana", at: 1_700_000_001_500),
        stepUp: .speaker)

    static func clientSeeds() -> [[UInt8]] {
        let requests: [ClientRequest] = [
            .raiseHand, .lowerHand, .invite("eli"), .acceptInvite, .declineInvite, .setRole("eli", .speaker),
            .stepDown, .setMute(true), .setMicWorking(false), .mutePeer("bo"), .muteAll, .lowerHandOf("eli"),
            .clearHands, .setHandsAllowed(false), .remove("gus", reason: "spam"),
            .setTopic("Friday terminal hour"), .endRoom(reason: "bye"), .chat("hi \u{1F44B}", to: .everyone),
            .chat("psst", to: .peer("bo")), .chat("mods", to: .role(.moderator)), .leave,
        ]
        var seeds = requests.enumerated().map { index, request in
            ControlCodec.encode(
                ClientMessage(request, id: index % 2 == 0 ? .integer(Int64(index)) : .string("r\(index)")))
        }
        seeds.append(Array(#"{"type":"chat","v":1,"text":"x","to":{"peer":"a","role":"b"}}"#.utf8))
        seeds.append(Array(#"{"type":"set_topic","text":"a","text":"b"}"#.utf8))
        return seeds
    }

    static func serverSeeds() -> [[UInt8]] {
        let chat = ChatMessage(
            from: "ana", fromName: "Ana", text: "welcome", to: .role(.speaker), sentAt: 1_700_000_002_000)
        let events: [WireEvent] = [
            .joined(
                JoinedSnapshot(
                    room: "lobby", selfID: "eli", peers: [peerAna, peerEli], topic: "Friday terminal hour",
                    chat: [chat], roles: RoomChecks.table, resumed: true)),
            .peerJoined(peerEli), .peersJoined([peerAna, peerEli]), .peerLeft(peer: "eli", reason: .disconnected),
            .peersLeft([Departure("eli", .left), Departure("bo", .disconnected), Departure("gus", .disconnected)]),
            .roleChanged(peer: "eli", role: .speaker, by: "ana", stepUp: nil), .handRaised(peer: "eli", at: 5),
            .handLowered(peer: "eli", by: ""), .muteChanged(peer: "ana", muted: true, by: "ana"),
            .micChanged(peer: "ana", working: false), .speakers(levels: [SpeakerLevel(peer: "ana", level: 80)]),
            .chat(chat),
            .invited(peer: "eli", by: "ana", at: 1_700_000_001_500),
            .inviteDeclined(peer: "eli", by: "eli"), .inviteWithdrawn(peer: "eli", by: "ana"),
            .inviteExpired(peer: "eli"), .roleChanged(peer: "bo", role: .audience, by: "bo", stepUp: .speaker),
            .askedToMute(peer: "bo", by: "ana"),
            .removed(peer: "gus", by: "ana", reason: "spam"), .roomEnded(by: "ana", reason: "thanks"),
            .topicChanged(topic: "\u{1B}]0;owned\u{07}", by: "ana"),
            .error(code: .forbidden, message: "only hosts can end the room", id: .string("r1")),
            .error(code: .notSaved, message: "the topic is set but not saved: the disk is full", id: .integer(7)),
        ]
        return events.enumerated().map { index, event in
            ControlCodec.encode(ServerMessage(event, seq: event.typeName == "error" ? nil : Int64(index + 1)))
        }
    }

    static func mediaSeeds() -> [[UInt8]] {
        let key = (0..<30).map { UInt8($0) }
        let signals: [MediaSignal] = [
            .media(
                MediaOffer(
                    host: "127.0.0.1", port: 7481, ssrc: 305_419_896, serverSSRC: 4660, sendKey: key,
                    roomKey: key.reversed(), epoch: 1)),
            .media(
                MediaOffer(
                    host: "", port: 0, ssrc: 8, serverSSRC: 2, sendKey: key, roomKey: key, epoch: 3,
                    redPayloadType: 63)),
            .mediaKey(roomKey: key, epoch: 2), .mediaPath(.udp), .mediaPath(.websocket),
            .mediaPath(.udp, takesRED: true),
            .mediaSources([MediaSource(peer: "ana", ssrc: 1), MediaSource(peer: "b\"o\\\u{1}", ssrc: 2)]),
        ]
        return signals.map { Array(MediaSignalCodec.encode($0).utf8) }
    }
}
