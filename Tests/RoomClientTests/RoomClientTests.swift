import ClubroomResources
import RoomCore
import RoomProtocol
import Testing

@testable import RoomClient

@Suite struct BotProtocolTests {
    @Test(arguments: [
        (#"{"cmd":"raise_hand"}"#, BotCommand.request(.raiseHand, id: nil)),
        (#"{"cmd":"lower_hand","id":"x"}"#, .request(.lowerHand, id: .string("x"))),
        (#"{"cmd":"invite","peer":"eli","id":3}"#, .request(.invite("eli"), id: .integer(3))),
        (#"{"cmd":"set_role","peer":"eli","role":"speaker"}"#, .request(.setRole("eli", .speaker), id: nil)),
        (#"{"cmd":"accept_invite"}"#, .request(.acceptInvite, id: nil)),
        (#"{"cmd":"decline_invite"}"#, .request(.declineInvite, id: nil)),
        (#"{"cmd":"step_down"}"#, .request(.stepDown, id: nil)),
        (#"{"cmd":"mute","on":false}"#, .request(.setMute(false), id: nil)),
        (#"{"cmd":"mute"}"#, .request(.setMute(true), id: nil)),
        (#"{"cmd":"mute_peer","peer":"chen"}"#, .request(.mutePeer("chen"), id: nil)),
        (#"{"cmd":"remove","peer":"gus","reason":"spam"}"#, .request(.remove("gus", reason: "spam"), id: nil)),
        (#"{"cmd":"remove","peer":"gus"}"#, .request(.remove("gus", reason: nil), id: nil)),
        (#"{"cmd":"ban","peer":"gus","reason":"spam"}"#, .request(.remove("gus", reason: "spam", ban: true), id: nil)),
        (#"{"cmd":"ban","peer":"gus"}"#, .request(.remove("gus", reason: nil, ban: true), id: nil)),
        (#"{"cmd":"list_bans","id":3}"#, .request(.listBans, id: .integer(3))),
        (#"{"cmd":"stats","id":"s1"}"#, .request(.stats, id: .string("s1"))),
        (#"{"cmd":"unban","who":"Gus"}"#, .request(.unban("Gus"), id: nil)),
        (#"{"cmd":"topic","text":"t"}"#, .request(.setTopic("t"), id: nil)),
        (#"{"cmd":"end_room"}"#, .request(.endRoom(reason: nil), id: nil)),
        (#"{"cmd":"chat","text":"hi"}"#, .request(.chat("hi", to: .everyone), id: nil)),
        (#"{"cmd":"chat","text":"hi","to":"ana"}"#, .request(.chat("hi", to: .peer("ana")), id: nil)),
        (#"{"cmd":"chat","text":"hi","role":"speaker"}"#, .request(.chat("hi", to: .role(.speaker)), id: nil)),
        (#"{"cmd":"leave"}"#, .leave),
        (#"{"cmd":"play","file":"/tmp/jingle.opus"}"#, .play("/tmp/jingle.opus")),
        (#"{"cmd":"stop_play"}"#, .stopPlay),
        (#"{"cmd":"set_listed","listed":false}"#, .request(.setListed(false), id: nil)),
        (#"{"cmd":"set_hands_allowed","allowed":false}"#, .request(.setHandsAllowed(false), id: nil)),
        (#"{"cmd":"set_mic","working":false}"#, .request(.setMicWorking(false), id: nil)),
        (
            #"{"cmd":"create_link","role":"speaker","ttl":600,"id":2}"#,
            .request(.createLink(role: .speaker, ttl: 600), id: .integer(2))
        ),
        (#"{"cmd":"create_link"}"#, .request(.createLink(role: .audience, ttl: 604_800), id: nil)),
        (#"{"cmd":"react","emoji":"👏"}"#, .request(.react(.clap), id: nil)),
        (#"{"cmd":"react","emoji":"+1","id":4}"#, .request(.react(.thumbsUp), id: .integer(4))),
        (#"{"cmd":"start_recording","id":"rec-1"}"#, .request(.startRecording, id: .string("rec-1"))),
        (#"{"cmd":"stop_recording"}"#, .request(.stopRecording, id: nil)),
    ])
    func parsesEveryCommand(_ line: String, _ command: BotCommand) throws {
        #expect(try BotProtocol.parse(line) == command)
    }

    @Test(arguments: [
        ("nope", "invalid_json"),
        ("[1]", "invalid_json"),
        (#"{"cmd":"raise_hand","cmd":"leave"}"#, "invalid_json"),
        (#"{"peer":"x"}"#, "bad_command"),
        (#"{"cmd":"invite"}"#, "bad_command"),
        (#"{"cmd":"invite","peer":5}"#, "bad_command"),
        (#"{"cmd":"mute","on":"yes"}"#, "bad_command"),
        (#"{"cmd":"chat","text":"x","to":"a","role":"b"}"#, "bad_command"),
        (#"{"cmd":"set_listed","listed":"no"}"#, "bad_command"),
        (#"{"cmd":"set_hands_allowed"}"#, "bad_command"),
        (#"{"cmd":"set_mic"}"#, "bad_command"),
        (#"{"cmd":"create_link","ttl":"1d"}"#, "bad_command"),
        (#"{"cmd":"fly"}"#, "unknown_command"),
        (#"{"cmd":"play"}"#, "bad_command"),
        (#"{"cmd":"play","file":7}"#, "bad_command"),
        (#"{"cmd":"react"}"#, "bad_command"),
        (#"{"cmd":"react","emoji":"🎉"}"#, "bad_command"),
    ])
    func refusesBadLinesWithACode(_ line: String, _ code: String) {
        #expect(throws: BotCommandError.self) { try BotProtocol.parse(line) }
        do {
            _ = try BotProtocol.parse(line)
        } catch {
            #expect(error.code == code)
        }
    }

    @Test func theCommandListMatchesTheIssue() {
        #expect(
            BotProtocol.commandNames == [
                "raise_hand", "lower_hand", "invite", "set_role", "accept_invite", "decline_invite", "step_down",
                "mute", "mute_peer", "remove", "ban", "topic", "end_room", "chat", "leave", "play", "stop_play",
                "start_recording", "stop_recording", "start_stream", "stop_stream",
            ])
    }

    /// `start_recording` and `stop_recording` go to the server as the requests of those names, with the bot's id.
    @Test func recordingCommandsAreSentAsTheirRequests() throws {
        for (line, wire) in [
            (#"{"cmd":"start_recording","id":7}"#, #"{"type":"start_recording","id":7}"#),
            (#"{"cmd":"stop_recording","id":"s"}"#, #"{"type":"stop_recording","id":"s"}"#),
        ] {
            guard case .request(let request, let id) = try BotProtocol.parse(line) else {
                Issue.record("\(line) is not a request")
                continue
            }
            #expect(String(decoding: ControlCodec.encode(ClientMessage(request, id: id)), as: UTF8.self) == wire)
        }
    }

    /// The `recording` event reaches a bot's output as the other events do, and `joined` carries the recording
    /// while the room is recorded.
    @Test func recordingEventsBecomeLines() {
        let started = ServerMessage(
            .recording(RecordingState(by: "ana", since: 1_796_000_000_000), by: nil, reason: nil), seq: 7)
        #expect(
            BotProtocol.lines(for: .message(started))
                == [#"{"event":"recording","active":true,"by":"ana","since":1796000000000}"#])
        let stopped = ServerMessage(
            .recording(nil, by: nil, reason: "the recorder could not write: No space left on device"), seq: 8)
        #expect(
            BotProtocol.lines(for: .message(stopped))
                == [
                    #"{"event":"recording","active":false,"reason":"the recorder could not write: No space left on device"}"#
                ])
        let ana = AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1))
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "ana", peers: [ana], topic: "t", chat: [], roles: clientRoles, resumed: false,
            recording: RecordingState(by: "ana", since: 5))
        #expect(
            BotProtocol.lines(for: .message(ServerMessage(.joined(snapshot), seq: 4))).first?.hasSuffix(
                #""chat":[],"recording":{"active":true,"by":"ana","since":5}}"#) == true)
    }

    @Test func aReactionBecomesALineWithItsCountsAndSenders() {
        let burst = ReactionBurst(counts: [.init(.clap, 3)], senders: [.init("ana", .clap), .init("bo", .clap)])
        #expect(
            BotProtocol.lines(for: .message(ServerMessage(.reaction(burst), seq: nil)))
                == [
                    #"{"event":"reaction","counts":[{"emoji":"👏","count":3}],"senders":[{"peer":"ana","emoji":"👏"},{"peer":"bo","emoji":"👏"}]}"#
                ])
    }

    @Test func eventsBecomeLinesNamedByEvent() {
        let ana = AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1))
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "ana", peers: [ana], topic: "t", chat: [], roles: clientRoles, resumed: false)
        #expect(
            BotProtocol.lines(for: .message(ServerMessage(.joined(snapshot), seq: 4)))
                == [
                    #"{"event":"joined","room":"lobby","self":{"id":"ana","name":"Ana","role":"host","muted":false,"hand_raised_at":null,"joined_at":1,"level":0},"topic":"t","resumed":false,"peers":[{"id":"ana","name":"Ana","role":"host","muted":false,"hand_raised_at":null,"joined_at":1,"level":0}],"chat":[]}"#
                ])
        #expect(
            BotProtocol.lines(for: .reconnected(ServerMessage(.joined(snapshot), seq: 9))).first?.hasPrefix(
                #"{"event":"reconnected","room":"lobby""#) == true)
        #expect(
            BotProtocol.lines(for: .message(ServerMessage(.peerJoined(ana), seq: 5)))
                == [#"{"event":"peer_joined","peer":"ana","name":"Ana","role":"host","muted":false}"#])
        #expect(
            BotProtocol.lines(
                for: .message(ServerMessage(.roleChanged(peer: "eli", role: "speaker", by: "ana", stepUp: nil), seq: 6))
            )
                == [#"{"event":"role_changed","peer":"eli","role":"speaker","by":"ana"}"#])
        #expect(
            BotProtocol.lines(
                for: .message(ServerMessage(.error(code: .forbidden, message: "no", id: .integer(2)), seq: nil)))
                == [#"{"event":"error","code":"forbidden","message":"no","id":2}"#])
        #expect(
            BotProtocol.lines(
                for: .message(
                    ServerMessage(
                        .networkQuality([
                            PeerQuality(
                                peer: "chen", score: 4, lossPercent: 2, jitterMilliseconds: 12, rttMilliseconds: 40)
                        ]), seq: nil)))
                == [
                    #"{"event":"network_quality","peers":[{"peer":"chen","score":4,"loss":0.02,"jitter_ms":12,"rtt_ms":40}]}"#
                ])
        #expect(
            BotProtocol.lines(for: .reconnecting(attempt: 2, delay: .milliseconds(480)))
                == [#"{"event":"reconnecting","attempt":2,"delay_ms":480}"#])
        #expect(BotProtocol.lines(for: .ended(.removed)).isEmpty)
        let people = [SpeakingStat(peer: "ana", name: "Ana", milliseconds: 7_030, turns: 2, talking: false)]
        #expect(
            BotProtocol.lines(for: .message(ServerMessage(.stats(people: people, id: .string("s1")), seq: nil)))
                == [
                    #"{"event":"stats","people":[{"peer":"ana","identity":"ana","name":"Ana","seconds":7.0,"turns":2,"#
                        + #""talking":false}],"id":"s1"}"#
                ])
    }

    @Test func exitStatusesAreDistinct() {
        let ends: [SessionEnd] = [
            .left, .removed, .roomEnded, .replaced, .refused(code: 4003, reason: ""), .connectionFailed(""),
        ]
        let statuses = ends.map { BotExitStatus($0).rawValue }
        #expect(statuses == [0, 3, 4, 7, 6, 5])
    }
}

@Suite struct ReconnectPolicyTests {
    @Test func delaysDoubleUpToTheCapWithJitter() {
        let policy = ReconnectPolicy()
        #expect(policy.delay(attempt: 1, random: 0.5) == .milliseconds(250))
        #expect(policy.delay(attempt: 2, random: 0.5) == .milliseconds(500))
        #expect(policy.delay(attempt: 6, random: 0.5) == .milliseconds(8000))
        #expect(policy.delay(attempt: 40, random: 0.5) == .milliseconds(8000))
        #expect(policy.delay(attempt: 1, random: 0) == .milliseconds(125))
        #expect(policy.delay(attempt: 1, random: 1) == .milliseconds(375))
    }
}

let clientRoles = try! RoleTable.load(contentsOf: ClubroomResources.rolesURL)

@Suite struct StoreFeedTests {
    let roles = clientRoles

    @Test func aSnapshotAndDeltasBuildTheStore() {
        var state = RoomState(roles: roles)
        let ana = AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1))
        let eli = AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .audience, muted: true, joinedAt: 2))
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [ana, eli], topic: "t",
            chat: [ChatMessage(from: "ana", fromName: "Ana", text: "hi", sentAt: 3)], roles: roles, resumed: false)
        let messages: [ServerMessage] = [
            ServerMessage(.joined(snapshot), seq: 10),
            ServerMessage(.handRaised(peer: "eli", at: 20), seq: 11),
            ServerMessage(.invited(peer: "eli", by: "ana", at: 21), seq: 12),
            ServerMessage(.roleChanged(peer: "eli", role: "speaker", by: "eli", stepUp: nil), seq: 13),
        ]
        for message in messages {
            for action in StoreFeed.actions(for: .message(message), selfID: state.selfID) {
                _ = reduce(&state, action)
            }
        }
        #expect(state.selfID == "eli")
        #expect(state.topic == "t")
        #expect(state.peers["eli"]?.role == .speaker)
        #expect(state.chat.map(\.fromName) == ["Ana"])
        #expect(state.lastSeq == 13)
    }

    /// A gathered join is one bot line per peer, as if each had been announced alone.
    @Test func gatheredJoinsBecomeOneLinePerPeer() {
        let peers = ["gus", "hana", "ivo"].map { AnnouncedPeer(Peer(id: PeerID($0), name: $0, joinedAt: 1)) }
        let lines = BotProtocol.lines(for: .message(ServerMessage(.peersJoined(peers), seq: 12)))
        #expect(lines.count == 3)
        #expect(lines[1] == #"{"event":"peer_joined","peer":"hana","name":"hana","role":"audience","muted":true}"#)
    }

    @Test func aPendingInvitationInTheSnapshotBringsThePromptBack() {
        var state = RoomState(roles: roles)
        let ana = AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1))
        let eli = Peer(id: "eli", name: "Eli", role: .audience, muted: true, joinedAt: 2)
        let first = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [ana, AnnouncedPeer(eli)], topic: "", chat: [], roles: roles,
            resumed: false)
        let again = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [ana, AnnouncedPeer(eli, invitation: Invitation(by: "ana", at: 5))],
            topic: "", chat: [],
            roles: roles, resumed: true)
        let events: [SessionEvent] = [
            .message(ServerMessage(.joined(first), seq: 10)),
            .message(ServerMessage(.invited(peer: "eli", by: "ana", at: 5), seq: 11)),
            .reconnecting(attempt: 1, delay: .zero),
            .reconnected(ServerMessage(.joined(again), seq: 12)),
        ]
        for event in events {
            for action in StoreFeed.actions(for: event, selfID: state.selfID) { _ = reduce(&state, action) }
        }
        #expect(state.invitation == Invitation(by: "ana", at: 5))
        #expect(state.invitations == ["eli": Invitation(by: "ana", at: 5)])
        #expect(state.connection == .connected)
        guard case .joined(let snapshot)? = ServerMessage(.joined(first), seq: 10).roomEvent(selfID: nil) else {
            Issue.record("no snapshot")
            return
        }
        #expect(snapshot.invitedBy == nil)
    }

    /// The inviter (and everyone) hears of a declined invitation as a room event: the invitation is gone from the
    /// state, and the activity says who declined (the screen words it).
    @Test func aDeclinedInvitationReachesTheInvitersState() {
        var state = RoomState(roles: roles)
        let ana = AnnouncedPeer(Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1))
        let eli = AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .audience, muted: true, joinedAt: 2))
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "ana", peers: [ana, eli], topic: "", chat: [], roles: roles, resumed: false)
        var effects: [Effect] = []
        for message in [
            ServerMessage(.joined(snapshot), seq: 10), ServerMessage(.invited(peer: "eli", by: "ana", at: 11), seq: 11),
            ServerMessage(.inviteDeclined(peer: "eli", by: "eli"), seq: 12),
        ] {
            for action in StoreFeed.actions(for: .message(message), selfID: state.selfID) {
                effects += reduce(&state, action)
            }
        }
        #expect(state.lastSeq == 12)
        #expect(Array(state.activity).last == .declinedInvitation("eli", name: "Eli"))
        #expect(state.invitations.isEmpty)
        #expect(effects == [])
    }
}
