import ClusterState
import Foundation
import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// What nodes exchange through Redis, byte for byte: a stream entry's input and a room's copy (its checkpoint)
/// are compared with the checked-in documents in `Goldens/`, both ways, so that renaming a property of RoomCore
/// or RoomServer cannot change them unnoticed; a document of another format version is refused by name.
@Suite struct ClusterFormatTests {
    static let goldens = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens")

    func golden(_ name: String) throws -> [UInt8] {
        var bytes = Array(try Data(contentsOf: Self.goldens.appendingPathComponent(name)))
        // The files end with a newline, as text files do; the documents do not.
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return bytes
    }

    /// A request with an id, to a role, and a join with its SSRC: every field an input may carry.
    static let inputs: [ClusterInput] = [
        .request(
            node: "b/7", peer: "ana", id: .string("r-1"), .chat("hands up for \"jazz\"", to: .role("moderator")),
            now: 1_764_412_801_000),
        .join(
            node: "a/1", connection: 3, peer: "hana", name: "Hana", role: .host, ssrc: 0x0100_0203,
            now: 1_764_412_800_000),
        .join(
            node: "a/1", connection: 6, peer: "recorder", name: "Recorder", role: .recorder, startedBy: "hana",
            now: 1_764_412_800_500),
        .leave(
            node: "c/3",
            [(Departure(PeerID("ben"), .left), UInt64(4)), (Departure(PeerID("eve"), .disconnected), UInt64(5))],
            now: 1_764_412_802_000),
        .levels(node: "a/1", ["hana": 40, "ana": 7], now: 1_764_412_803_000),
        .join(
            node: "a/1", connection: 7, peer: "stream-radio", name: "Stream radio", role: .recorder,
            startedBy: "hana", stream: "radio", now: 1_764_412_804_000),
        .streamGaveUp(
            node: "a/1", stream: "radio", reason: "its recorder keeps failing at once (it exited with status 1)",
            now: 1_764_412_805_000),
        .recorderProblem(
            node: "a/1",
            sentence: "The recorder keeps failing at once (it exited with status 1); the recording stopped.",
            now: 1_764_412_806_000),
        .networkQuality(
            node: "b/7",
            [
                PeerQuality(peer: "hana", score: 5, lossPercent: 0, jitterMilliseconds: 3, rttMilliseconds: 22),
                PeerQuality(peer: "ana", score: 2, lossPercent: 12, jitterMilliseconds: 18, rttMilliseconds: 40),
            ], now: 1_764_412_807_000),
    ]

    /// A room whose copy holds a little of everything: peers on three nodes with SSRCs, a raised hand, an
    /// invitation, a topic, chat to everyone and to a role, a request applied and one refused, a departure.
    static func room() -> ReplicatedRoom {
        var authority = RoomAuthority(name: "jazz", roles: defaultRoles, seq: 5_000)
        authority.streamDestinations = ["radio", "hls"]
        var room = ReplicatedRoom(authority: authority)
        let inputs: [ClusterInput] = [
            .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, ssrc: 0x0100_0001, now: 1_000),
            .join(node: "b/7", connection: 1, peer: "ana", name: "Ana", role: .audience, ssrc: 0x0200_0001, now: 1_010),
            .join(node: "c/3", connection: 4, peer: "ben", name: "Ben", role: .moderator, now: 1_020),
            .join(node: "c/3", connection: 5, peer: "eve", name: "Eve", role: .audience, now: 1_025),
            .request(node: "b/7", peer: "ana", id: .integer(1), .raiseHand, now: 1_030),
            .request(node: "a/1", peer: "hana", id: .string("t"), .setTopic("late set"), now: 1_050),
            .request(node: "a/1", peer: "hana", id: nil, .invite("eve"), now: 1_060),
            .request(node: "c/3", peer: "ben", id: nil, .chat("hi", to: .everyone), now: 1_070),
            .request(
                node: "c/3", peer: "ben", id: .string("m"), .chat("mods only", to: .role("moderator")), now: 1_075),
            .request(node: "b/7", peer: "ana", id: .integer(2), .setTopic("mine"), now: 1_080),
            .leave(node: "c/3", [(Departure(PeerID("eve"), .disconnected), UInt64(5))], now: 1_090),
            .join(
                node: "a/1", connection: 6, peer: "recorder", name: "Recorder", role: .recorder, startedBy: "hana",
                now: 1_100),
            .request(node: "a/1", peer: "hana", id: .string("s"), .startStream("radio"), now: 1_110),
            .request(node: "a/1", peer: "hana", id: .string("h"), .startStream("hls"), now: 1_115),
            .join(
                node: "a/1", connection: 7, peer: "stream-radio", name: "Stream radio", role: .recorder,
                startedBy: "hana", stream: "radio", now: 1_120),
            .streamGaveUp(node: "a/1", stream: "hls", reason: "its recorder keeps failing at once", now: 1_130),
        ]
        for input in inputs { _ = room.apply(input) }
        return room
    }

    @Test func anEntrysInputIsWrittenAsItsGoldenAndReadBackFromIt() throws {
        let written = Self.inputs.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: "\n")
        let expected = String(decoding: try golden("inputs.jsonl"), as: UTF8.self)
        #expect(written == expected)
        let read = try expected.split(separator: "\n").map { try ClusterInput(decoding: Array($0.utf8)) }
        #expect(read == Self.inputs)
    }

    @Test func aRoomsCopyIsWrittenAsItsGoldenAndReadBackFromIt() throws {
        let room = Self.room()
        #expect(room.authority.peers.count == 5 && room.authority.chat.count == 2)
        #expect(room.authority.recording == RecordingState(by: "hana", since: 1_100))
        #expect(room.authority.streaming == StreamingState(to: ["radio"], since: 1_110))
        #expect(room.authority.streamPeers == ["stream-radio": "radio"])
        let expected = try golden("checkpoint.json")
        #expect(String(decoding: room.encoded(), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        let read = try ReplicatedRoom(name: "jazz", roles: defaultRoles, maxPeers: 100, decoding: expected)
        #expect(read.authority.checkpoint == room.authority.checkpoint)
        #expect(read.authority.recording == RecordingState(by: "hana", since: 1_100))
        #expect(read.authority.recorders == ["recorder"])
        #expect(read.authority.streaming == StreamingState(to: ["radio"], since: 1_110))
        #expect(read.authority.streamPeers == ["stream-radio": "radio"])
        #expect(read.homes == room.homes)
        #expect(read.encoded() == expected)
    }

    /// A copy written before streaming (without `streaming`) still reads, as a room that streams nowhere.
    @Test func aCopyWrittenBeforeStreamingStillReads() throws {
        let older = try golden("checkpoint-before-streaming.json")
        #expect(!String(decoding: older, as: UTF8.self).contains("streaming"))
        let read = try ReplicatedRoom(
            name: "jazz", roles: defaultRoles, maxPeers: 100, streamDestinations: ["radio"], decoding: older)
        #expect(read.authority.streaming == nil)
        #expect(read.authority.streamPeers.isEmpty)
        #expect(read.authority.recorders == ["recorder"])
        #expect(read.authority.streamDestinations == ["radio"])
        #expect(read.encoded() == older)
    }

    @Test func aDocumentOfAnotherVersionOrNoneIsRefusedByName() throws {
        var newer = String(decoding: Self.inputs[0].encoded(), as: UTF8.self)
        #expect(newer.hasPrefix(#"{"v":1,"#))
        newer = #"{"v":2,"# + newer.dropFirst(#"{"v":1,"#.count)
        #expect(throws: ClusterFormatError.unknownVersion(2)) { try ClusterInput(decoding: Array(newer.utf8)) }
        let room = String(decoding: Self.room().encoded(), as: UTF8.self)
        let older = "{" + room.dropFirst(#"{"v":1,"#.count)
        #expect(throws: ClusterFormatError.malformed(#"no format version ("v")"#)) {
            try ReplicatedRoom(name: "jazz", roles: defaultRoles, maxPeers: 100, decoding: Array(older.utf8))
        }
        #expect(throws: ClusterFormatError.malformed(#""departures[0].connection" must be an integer of 0 or more"#)) {
            try ClusterInput(
                decoding: Array(
                    #"{"v":1,"kind":"leave","node":"c/3","connection":0,"departures":[{"peer":"ben","reason":"left","connection":-1}],"now":1}"#
                        .utf8))
        }
        #expect(throws: ClusterFormatError.malformed(#""qualities[0].score" must be an integer from 0 to 5"#)) {
            try ClusterInput(
                decoding: Array(
                    #"{"v":1,"kind":"network_quality","node":"b/7","connection":0,"qualities":[{"peer":"ana","score":9,"lossPercent":0,"jitterMilliseconds":0,"rttMilliseconds":0}],"now":1}"#
                        .utf8))
        }
        #expect(throws: ClusterFormatError.malformed(#""qualities[0].lossPercent" must be an integer from 0 to 100"#)) {
            try ClusterInput(
                decoding: Array(
                    #"{"v":1,"kind":"network_quality","node":"b/7","connection":0,"qualities":[{"peer":"ana","score":1,"lossPercent":101,"jitterMilliseconds":0,"rttMilliseconds":0}],"now":1}"#
                        .utf8))
        }
    }

    /// A peer and a chat line read from the cluster are built through their inits: a hostile name, level or text
    /// is tamed as it is for any other.
    @Test func aPeerOrAChatLineReadFromTheClusterIsCleanedLikeAnyOther() throws {
        let peer =
            #"{"v":1,"id":"x","name":" Ana\u0000 ","role":"speaker","muted":true,"joinedAt":0,"level":-5,"micWorking":true,"playing":false}"#
        #expect(
            try ClusterFormat.peer(try ClusterFormat.read(Array(peer.utf8)))
                == Peer(id: "x", name: "Ana", role: .speaker, muted: true, joinedAt: 0, level: 0))
        let chat = #"{"v":1,"from":"a","fromName":"Ana","text":"x\u001b]0;title\u0007y","sentAt":1}"#
        #expect(try ClusterFormat.chat(try ClusterFormat.read(Array(chat.utf8))).text == "x]0;titley")
    }

    @Test func aPeerAndARequestToOnePeerReadBackAsWritten() throws {
        let peer = Peer(
            id: "x", name: "Ana", role: .host, muted: false, handRaisedAt: 7, joinedAt: 3, level: 40,
            metadata: ["bot": "true"])
        guard case .object(let object) = ClusterFormat.json(peer) else {
            Issue.record("a peer is an object")
            return
        }
        #expect(try ClusterFormat.peer(try ClusterFormat.read(ClusterFormat.document(object))) == peer)
        let request = ClusterInput.request(node: "a/1", peer: "a", id: nil, .chat("hi", to: .peer("b")), now: 9)
        #expect(try ClusterInput(decoding: request.encoded()) == request)
    }
}
