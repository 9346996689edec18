import Foundation
import RoomCore
import Testing

@testable import RoomProtocol

/// The default role table, written out here so the protocol's tests need no resources.
let protocolRoles = try! RoleTable.parse(
    Data(
        #"""
        {"version": 1, "roles": [
          {"name": "host", "label": "host", "rank": 0, "onStage": true, "permissions": ["publish_audio", "raise_hand", "chat", "invite", "move", "mute_others", "remove", "set_topic", "end_room"]},
          {"name": "moderator", "label": "mod", "rank": 1, "onStage": true, "permissions": ["publish_audio", "raise_hand", "chat", "invite", "move", "mute_others", "remove", "set_topic"]},
          {"name": "speaker", "label": "speaker", "rank": 2, "onStage": true, "permissions": ["publish_audio", "chat"]},
          {"name": "audience", "label": "listener", "rank": 3, "onStage": false, "permissions": ["raise_hand", "chat"]}
        ]}
        """#.utf8), source: "test")

@Suite struct ControlCodecTests {
    @Test func decodesARequestWithItsID() throws {
        let message = try ControlCodec.decodeClient(#"{"type":"set_role","id":"a1","peer":"chen","role":"speaker"}"#)
        #expect(message == ClientMessage(.setRole("chen", "speaker"), id: .string("a1")))
    }

    @Test func encodesRequestsCompactlyInFieldOrder() {
        let bytes = ControlCodec.encode(ClientMessage(.chat("hi \"you\"", to: .role("speaker")), id: .integer(9)))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"type":"chat","id":9,"text":"hi \"you\"","to":{"role":"speaker"}}"#)
    }

    @Test func everyRequestSurvivesARoundTrip() throws {
        let requests: [ClientRequest] = [
            .raiseHand, .lowerHand, .invite("eli"), .acceptInvite,
            .declineInvite, .withdrawInvite("eli"), .setRole("a", "moderator"), .stepDown, .setMute(true),
            .setMute(false), .setMicWorking(false), .setMicWorking(true), .muteAll, .lowerHandOf("eli"), .clearHands,
            .setPlaying(true), .setPlaying(false),
            .setHandsAllowed(false), .setHandsAllowed(true),
            .mutePeer("b"), .remove("c", reason: "why"), .remove("c", reason: nil),
            .remove("d", reason: nil, withdrawLink: true), .remove("e", reason: "spam", ban: true), .setTopic("t"),
            .endRoom(reason: ""), .endRoom(reason: nil),
            .chat("x", to: .everyone), .chat("y", to: .peer("p")), .chat("z", to: .role("r")),
            .leave, .setListed(false), .setListed(true), .createLink(role: .speaker, ttl: 3600),
            .createLink(role: .audience, ttl: 60, maxUses: 5), .listLinks,
            .revokeLink("w_Lk0L9Zv5U"), .revokeLink(ClientRequest.allLinks), .setLocked(true), .setLocked(false),
            .listBans, .unban("guest-5a1c0d1e2f3a4b5c"),
            .admitWaiting("Eve"), .denyWaiting("guest-5a1c0d1e2f3a4b5c"),
            .react(.clap), .react(.thumbsUp), .react(.laugh), .react(.heart), .react(.wave),
            .startRecording, .stopRecording, .recorderError("the recorder could not write: No space left on device"),
            .stats, .startStream("radio"), .stopStream("radio"),
            .streamStatus("Streaming to radio stopped: the server refused the password."),
        ]
        #expect(Set(requests.map(\.typeName)) == Set(ClientRequest.typeNames))
        for request in requests {
            let message = ClientMessage(request, id: .integer(1))
            #expect(try ControlCodec.decodeClient(ControlCodec.encode(message)) == message)
        }
    }

    /// A peer whose microphone does not work says so with `mic_failed`; a working one carries no such field, so
    /// a peer's bytes stay as they were for everyone else.
    @Test func aFailedMicrophoneIsAFieldOnlyWhileItFails() throws {
        let failing = Peer(id: "chen", name: "Chen", role: .speaker, joinedAt: 1, micWorking: false)
        #expect(
            String(
                decoding: ControlCodec.encode(ServerMessage(.peerJoined(AnnouncedPeer(failing)), seq: 4)), as: UTF8.self
            )
                == #"{"type":"peer_joined","seq":4,"peer":{"id":"chen","name":"Chen","role":"speaker","muted":true,"hand_raised_at":null,"joined_at":1,"level":0,"mic_failed":true}}"#
        )
        var working = failing
        working.micWorking = true
        #expect(
            !String(
                decoding: ControlCodec.encode(ServerMessage(.peerJoined(AnnouncedPeer(working)), seq: 4)), as: UTF8.self
            )
            .contains("mic_failed"))
        #expect(
            ControlCodec.encode(ClientMessage(.setMicWorking(false)))
                == Array(#"{"type":"set_mic","working":false}"#.utf8))
    }

    /// A reason the request leaves out is not sent, and reads back as absent rather than empty.
    @Test func anAbsentReasonIsLeftOut() throws {
        #expect(
            ControlCodec.encode(ClientMessage(.remove("gus", reason: nil)))
                == Array(#"{"type":"remove","peer":"gus"}"#.utf8))
        #expect(try ControlCodec.decodeClient(#"{"type":"end_room"}"#) == ClientMessage(.endRoom(reason: nil)))
        #expect(
            try ControlCodec.decodeClient(#"{"type":"end_room","reason":""}"#) == ClientMessage(.endRoom(reason: "")))
    }

    @Test func everyEventSurvivesARoundTrip() throws {
        let peer = AnnouncedPeer(
            Peer(id: "名前", name: "Ana 🎙", role: .host, muted: false, handRaisedAt: 5, joinedAt: 1, level: 100),
            invitation: Invitation(by: "bo", at: 4), stepUp: .host)
        let failing = AnnouncedPeer(Peer(id: "chen", name: "Chen", role: .speaker, micWorking: false))
        let events: [WireEvent] = [
            .joined(
                JoinedSnapshot(
                    room: "r", selfID: "名前", peers: [peer], topic: "t",
                    chat: [ChatMessage(from: "a", fromName: "a", text: "b", to: .peer("c"), sentAt: 3)],
                    roles: protocolRoles, resumed: true, tokenRole: .host)),
            .peerJoined(peer), .peersJoined([peer, peer]), .peerLeft(peer: "a", reason: .disconnected),
            .peerLeft(peer: "a", reason: .left), .peersLeft([Departure("a", .left), Departure("b", .disconnected)]),
            .roleChanged(peer: "a", role: "speaker", by: "b", stepUp: nil),
            .roleChanged(peer: "a", role: "audience", by: "a", stepUp: "host"), .handRaised(peer: "a", at: 7),
            .handLowered(peer: "a", by: "a"),
            .muteChanged(peer: "a", muted: true, by: "b"), .micChanged(peer: "a", working: false),
            .micChanged(peer: "a", working: true), .peerJoined(failing),
            .speakers(levels: [SpeakerLevel(peer: "a", level: 3)]),
            .reaction(
                ReactionBurst(
                    counts: [.init(.clap, 12), .init(.heart, 1)], senders: [.init("a", .clap), .init("名前", .heart)])),
            .networkQuality([
                PeerQuality(peer: "a", score: 4, lossPercent: 2, jitterMilliseconds: 12, rttMilliseconds: 40),
                PeerQuality(peer: "b", score: 0, lossPercent: 100, jitterMilliseconds: 0, rttMilliseconds: 0),
            ]),
            .chat(ChatMessage(from: "a", fromName: "Ana", text: "hi", sentAt: 9)), .invited(peer: "a", by: "b", at: 9),
            .inviteDeclined(peer: "a", by: "a"), .inviteWithdrawn(peer: "a", by: "b"), .inviteExpired(peer: "a"),
            .askedToMute(peer: "a", by: "b"), .removed(peer: "a", by: "b", reason: "r"),
            .roomEnded(by: "b", reason: ""), .roomEnding(peer: "a", name: "Ana", at: 120_009),
            .roomEnding(peer: "a", name: "Ana", at: nil), .handsAllowed(allowed: false, by: "b"),
            .topicChanged(topic: "new", by: "b"), .error(code: .forbidden, message: "no", id: .string("x")),
            .links(
                room: "r",
                links: [
                    RoomLink(id: "a", role: .speaker, by: "b", expiresAt: 9, uses: 2, maxUses: 5, withdrawn: false),
                    RoomLink(id: "c", role: .audience, by: "", expiresAt: 8, uses: 0, maxUses: nil, withdrawn: true),
                ], withdrawn: ["c"], locked: true, id: .integer(4)),
        ]
        for (index, event) in events.enumerated() {
            let message = ServerMessage(
                event,
                seq: ["error", "links", "network_quality", "reaction"].contains(event.typeName) ? nil : Int64(index))
            #expect(try ControlCodec.decodeServer(ControlCodec.encode(message)) == message)
        }
    }

    /// `react` takes one of the five emoji or its ASCII fallback; the wire always says the emoji.
    @Test func aReactionIsOneOfFiveEmojiOrItsFallback() throws {
        #expect(try ControlCodec.decodeClient(#"{"type":"react","emoji":"👏"}"#) == ClientMessage(.react(.clap)))
        #expect(try ControlCodec.decodeClient(#"{"type":"react","emoji":"<3"}"#) == ClientMessage(.react(.heart)))
        #expect(
            String(decoding: ControlCodec.encode(ClientMessage(.react(.wave))), as: UTF8.self)
                == #"{"type":"react","emoji":"✋"}"#)
        for text in [#"{"type":"react","emoji":"🎉"}"#, #"{"type":"react"}"#, #"{"type":"react","emoji":1}"#] {
            #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeClient(text) }
        }
        do {
            _ = try ControlCodec.decodeClient(#"{"type":"react","emoji":"🎉"}"#)
            Issue.record("an unknown reaction was accepted")
        } catch {
            #expect(error.code == .badRequest)
            #expect(error.message == #""emoji" is not a reaction; send one of 👏 👍 😂 ❤️ ✋"#)
        }
        let zero = #"{"type":"reaction","counts":[{"emoji":"👏","count":0}],"senders":[]}"#
        #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(zero) }
    }

    /// `network_quality`: the loss is a fraction on the wire and a percentage in the program; a score, loss or
    /// delay out of range is a bad message.
    @Test func networkQualityIsReadStrictly() throws {
        func decode(_ entry: String) throws -> ServerMessage {
            try ControlCodec.decodeServer(Array(#"{"type":"network_quality","peers":[\#(entry)]}"#.utf8))
        }
        #expect(
            try decode(#"{"peer":"a","score":2,"loss":0.125,"jitter_ms":30,"rtt_ms":90}"#)
                == ServerMessage(
                    .networkQuality([
                        PeerQuality(peer: "a", score: 2, lossPercent: 13, jitterMilliseconds: 30, rttMilliseconds: 90)
                    ]), seq: nil))
        #expect(
            try decode(#"{"peer":"a","score":5,"loss":0,"jitter_ms":0,"rtt_ms":0}"#).event
                == .networkQuality([
                    PeerQuality(peer: "a", score: 5, lossPercent: 0, jitterMilliseconds: 0, rttMilliseconds: 0)
                ]))
        for bad in [
            #"{"peer":"a","score":6,"loss":0,"jitter_ms":0,"rtt_ms":0}"#,
            #"{"peer":"a","score":3,"loss":1.5,"jitter_ms":0,"rtt_ms":0}"#,
            #"{"peer":"a","score":3,"loss":"0","jitter_ms":0,"rtt_ms":0}"#,
            #"{"peer":"a","score":3,"loss":0,"jitter_ms":-1,"rtt_ms":0}"#,
            #"{"peer":"","score":3,"loss":0,"jitter_ms":0,"rtt_ms":0}"#,
            #"{"score":3,"loss":0,"jitter_ms":0,"rtt_ms":0}"#,
        ] {
            #expect(throws: ControlDecodeError.self, "\(bad)") { try decode(bad) }
        }
    }

    /// A client reads the snapshot of the largest room a server admits (10,000 peers with full-length names),
    /// far past the 64 KiB a client's own request may be; a request that size is still refused.
    @Test func aTenThousandPeerSnapshotIsReadAndALargeRequestIsNot() throws {
        let peers = (0..<10_000).map { index in
            AnnouncedPeer(
                Peer(
                    id: PeerID("listener-\(index)"),
                    name: String(repeating: "名", count: ControlLimits.maxNameCharacters),
                    role: .audience, muted: true, handRaisedAt: nil, joinedAt: 1_764_413_100_000 + Int64(index),
                    level: 0))
        }
        let message = ServerMessage(
            .joined(
                JoinedSnapshot(
                    room: "lobby", selfID: "listener-0", peers: peers, topic: "", chat: [], roles: protocolRoles,
                    resumed: false)),
            seq: 1)
        let bytes = ControlCodec.encode(message)
        #expect(bytes.count > 2_000_000)
        #expect(try ControlCodec.decodeServer(bytes) == message)

        let chat = ControlCodec.encode(ClientMessage(.chat(String(repeating: "a", count: 70_000), to: .everyone)))
        #expect(throws: ControlDecodeError(.badRequest, "JSON larger than 65536 bytes")) {
            try ControlCodec.decodeClient(chat)
        }
        let oversized =
            Array(#"{"type":"topic_changed","topic":""#.utf8)
            + [UInt8](repeating: UInt8(ascii: "a"), count: ControlLimits.maxServerMessageBytes)
            + Array(#"","by":"a"}"#.utf8)
        #expect(throws: ControlDecodeError(.badRequest, "JSON larger than 16777216 bytes")) {
            try ControlCodec.decodeServer(oversized)
        }
    }

    @Test func aBadListOfDeparturesIsRefused() {
        let cases: [(String, String)] = [
            (#"{"type":"peers_left","seq":3,"peers":[]}"#, #""peers" is empty"#),
            (
                #"{"type":"peers_left","seq":3,"peers":[{"peer":"a","reason":"bored"}]}"#,
                #"unknown leave reason "bored""#
            ),
            (#"{"type":"peers_left","seq":3,"peers":[{"peer":"","reason":"left"}]}"#, #"the field "peer" is empty"#),
            (#"{"type":"peers_left","seq":3,"peers":["a"]}"#, #""peers" must hold objects"#),
        ]
        for (text, problem) in cases {
            #expect(throws: ControlDecodeError(.badRequest, problem), "\(text)") {
                try ControlCodec.decodeServer(Array(text.utf8))
            }
        }
    }

    @Test func theSnapshotFastPathWritesTheSameBytesAsTheTree() {
        let peers = (0..<50).map { index in
            AnnouncedPeer(
                Peer(
                    id: PeerID("p\(index) \"q\""), name: "Name \(index) 名前 \\ \"x\"",
                    role: index % 2 == 0 ? .audience : .speaker, muted: index % 3 == 0,
                    handRaisedAt: index % 4 == 0 ? Int64(index) : nil, joinedAt: Int64(index * 7), level: index % 101),
                invitation: index % 5 == 0 ? Invitation(by: "ana", at: Int64(index)) : nil,
                stepUp: index == 1 ? .host : nil)
        }
        for resumed in [false, true] {
            let snapshot = JoinedSnapshot(
                room: "lobby", selfID: "p1 \"q\"", peers: peers, topic: "a \\ topic",
                chat: [ChatMessage(from: "a", fromName: "A", text: "b", to: .role("speaker"), sentAt: 3)],
                roles: protocolRoles, resumed: resumed, tokenRole: resumed ? .host : nil)
            for seq: Int64? in [nil, 42] {
                let message = ServerMessage(.joined(snapshot), seq: seq)
                #expect(ControlCodec.encode(message) == ControlCodec.json(message).encoded)
            }
        }
    }

    @Test func duplicateKeysAreRefusedWithTheirOwnCode() {
        #expect(throws: ControlDecodeError(.duplicateKey, "the key \"type\" appears twice at byte 19")) {
            try ControlCodec.decodeClient(#"{"type":"leave",   "type":"raise_hand"}"#)
        }
    }

    @Test func anUnknownTypeIsRefusedAndTheIDEchoed() {
        #expect(throws: ControlDecodeError(.unknownType, "unknown message type \"dance\"", id: .integer(7))) {
            try ControlCodec.decodeClient(#"{"type":"dance","id":7}"#)
        }
    }

    @Test func unknownFieldsAreIgnored() throws {
        #expect(try ControlCodec.decodeClient(#"{"type":"raise_hand","emoji":"✋"}"#) == ClientMessage(.raiseHand))
    }

    @Test func aDifferentVersionIsRefused() throws {
        #expect(
            throws: ControlDecodeError(
                .unsupportedVersion,
                "protocol version 2 is not supported; this server speaks version 1", id: .string("q"))
        ) {
            try ControlCodec.decodeClient(#"{"v":2,"type":"leave","id":"q"}"#)
        }
        #expect(try ControlCodec.decodeClient(#"{"v":1,"type":"leave"}"#) == ClientMessage(.leave))
    }

    @Test(arguments: [
        (#"[]"#, ErrorCode.invalidJSON),
        (#"{"id":1}"#, .badRequest),
        (#"{"type":5}"#, .badRequest),
        (#"{"type":"invite"}"#, .badRequest),
        (#"{"type":"invite","peer":""}"#, .badRequest),
        (#"{"type":"invite","peer":7}"#, .badRequest),
        (#"{"type":"set_mute","muted":"yes"}"#, .badRequest),
        (#"{"type":"chat","text":"x","to":{"peer":"a","role":"b"}}"#, .badRequest),
        (#"{"type":"chat","text":"x","to":"everyone"}"#, .badRequest),
        (#"{"type":"leave","id":1.5}"#, .badRequest),
        (#"{"type":"leave""#, .invalidJSON),
    ])
    func malformedRequestsAreRefusedWithACode(_ text: String, _ code: ErrorCode) {
        do {
            _ = try ControlCodec.decodeClient(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == code, "\(text): \(error)")
        }
    }

    /// A field that is absent or null is missing; one of another type says what it must be, whether the request
    /// needs it or may leave it out.
    @Test(arguments: [
        (#"{"type":"set_topic"}"#, "the field \"text\" is missing"),
        (#"{"type":"set_topic","text":null}"#, "the field \"text\" is missing"),
        (#"{"type":"set_topic","text":7}"#, "the field \"text\" must be a string"),
        (#"{"type":"set_mute"}"#, "the field \"muted\" is missing"),
        (#"{"type":"set_mute","muted":1}"#, "the field \"muted\" must be true or false"),
        (#"{"type":"end_room","reason":false}"#, "the field \"reason\" must be a string"),
        (#"{"type":"remove","peer":"a","ban":"yes"}"#, "the field \"ban\" must be true or false"),
        (#"{"type":"create_link","role":"speaker","ttl":"1h"}"#, "the field \"ttl\" must be an integer"),
        (#"{"type":"create_link","role":"speaker","max_uses":2.5}"#, "the field \"max_uses\" must be an integer"),
        (#"{"type":"create_link","ttl":60}"#, "the field \"role\" is missing"),
        (#"{"type":"leave","v":"1"}"#, "the field \"v\" must be an integer"),
    ])
    func aBadFieldIsNamedWithWhatItMustBe(_ text: String, _ message: String) {
        #expect(throws: ControlDecodeError(.badRequest, message)) { try ControlCodec.decodeClient(text) }
    }

    @Test func stringsAreBounded() throws {
        let longest = String(repeating: "é", count: ControlLimits.maxChatCharacters)
        #expect(
            try ControlCodec.decodeClient(ControlCodec.encode(ClientMessage(.chat(longest, to: .everyone))))
                == ClientMessage(.chat(longest, to: .everyone)))
        let tooLong = ClientMessage(.chat(longest + "e", to: .everyone))
        #expect(throws: ControlDecodeError(.badRequest, "the field \"text\" is longer than 2000 characters")) {
            try ControlCodec.decodeClient(ControlCodec.encode(tooLong))
        }
        let longID = ClientMessage(.leave, id: .string(String(repeating: "i", count: 65)))
        #expect(throws: ControlDecodeError(.badRequest, "\"id\" is longer than 64 bytes")) {
            try ControlCodec.decodeClient(ControlCodec.encode(longID))
        }
        let longPeer = ClientMessage(.invite(PeerID(String(repeating: "p", count: 129))))
        #expect(throws: ControlDecodeError(.badRequest, "the field \"peer\" is longer than 128 bytes")) {
            try ControlCodec.decodeClient(ControlCodec.encode(longPeer))
        }
    }

    /// Every proper prefix of a message is refused cleanly, and every single-byte change either decodes or is
    /// refused with a code: never a crash.
    @Test func truncatedAndCorruptedMessagesFailCleanly() throws {
        for example in try DocExample.all() {
            let bytes = Array(example.text.utf8)
            for length in 0..<bytes.count {
                let prefix = bytes[0..<length]
                switch example.side {
                case .client: #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeClient(prefix) }
                case .server: #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(prefix) }
                case .lobby: #expect(throws: ControlDecodeError.self) { try DirectoryCodec.decodeRequest(prefix) }
                case .directory: #expect(throws: ControlDecodeError.self) { try DirectoryCodec.decodeMessage(prefix) }
                }
            }
            for index in bytes.indices where index % 3 == 0 {
                for replacement: UInt8 in [0x00, 0x22, 0x7B, 0x5C, 0xFF, 0x31] {
                    var corrupted = bytes
                    corrupted[index] = replacement
                    _ = try? ControlCodec.decodeClient(corrupted)
                    _ = try? ControlCodec.decodeServer(corrupted)
                    _ = try? DirectoryCodec.decodeRequest(corrupted)
                    _ = try? DirectoryCodec.decodeMessage(corrupted)
                }
            }
        }
    }
}
