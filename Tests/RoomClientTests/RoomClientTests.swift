import ClubroomResources
import RoomCore
import RoomProtocol
import Testing

@testable import RoomClient

@Suite struct BotProtocolTests {
    @Test(arguments: [
        (#"{"cmd":"raise_hand"}"#, BotCommand.request(.raiseHand, id: nil)),
        (#"{"cmd":"lower_hand","id":"x"}"#, .request(.lowerHand, id: .string("x"))),
        (#"{"cmd":"invite","peer":"eli","id":3}"#, .request(.invite(peer: "eli"), id: .integer(3))),
        (
            #"{"cmd":"set_role","peer":"eli","role":"speaker"}"#,
            .request(.setRole(peer: "eli", role: "speaker"), id: nil)
        ),
        (#"{"cmd":"accept_invite"}"#, .request(.acceptInvite, id: nil)),
        (#"{"cmd":"decline_invite"}"#, .request(.declineInvite, id: nil)),
        (#"{"cmd":"step_down"}"#, .request(.stepDown, id: nil)),
        (#"{"cmd":"mute","on":false}"#, .request(.setMute(muted: false), id: nil)),
        (#"{"cmd":"mute"}"#, .request(.setMute(muted: true), id: nil)),
        (#"{"cmd":"mute_peer","peer":"chen"}"#, .request(.mutePeer(peer: "chen"), id: nil)),
        (#"{"cmd":"remove","peer":"gus","reason":"spam"}"#, .request(.remove(peer: "gus", reason: "spam"), id: nil)),
        (#"{"cmd":"remove","peer":"gus"}"#, .request(.remove(peer: "gus", reason: ""), id: nil)),
        (#"{"cmd":"topic","text":"t"}"#, .request(.setTopic(text: "t"), id: nil)),
        (#"{"cmd":"end_room"}"#, .request(.endRoom(reason: ""), id: nil)),
        (#"{"cmd":"chat","text":"hi"}"#, .request(.chat(text: "hi", to: .everyone), id: nil)),
        (#"{"cmd":"chat","text":"hi","to":"ana"}"#, .request(.chat(text: "hi", to: .peer("ana")), id: nil)),
        (#"{"cmd":"chat","text":"hi","role":"speaker"}"#, .request(.chat(text: "hi", to: .role("speaker")), id: nil)),
        (#"{"cmd":"leave"}"#, .leave),
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
        (#"{"cmd":"fly"}"#, "unknown_command"),
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
                "mute", "mute_peer", "remove", "topic", "end_room", "chat", "leave",
            ])
    }

    @Test func eventsBecomeLinesNamedByEvent() {
        let ana = WirePeer(id: "ana", name: "Ana", role: "host", muted: false, joinedAt: 1)
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "ana", peers: [ana], topic: "t", chat: [], roles: [], resumed: false)
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
                for: .message(ServerMessage(.roleChanged(peer: "eli", role: "speaker", by: "ana"), seq: 6)))
                == [#"{"event":"role_changed","peer":"eli","role":"speaker","by":"ana"}"#])
        #expect(
            BotProtocol.lines(
                for: .message(ServerMessage(.error(code: .forbidden, message: "no", id: .integer(2)), seq: nil)))
                == [#"{"event":"error","code":"forbidden","message":"no","id":2}"#])
        #expect(
            BotProtocol.lines(for: .reconnecting(attempt: 2, delay: .milliseconds(480)))
                == [#"{"event":"reconnecting","attempt":2,"delay_ms":480}"#])
        #expect(BotProtocol.lines(for: .ended(.removed)).isEmpty)
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

@Suite struct StoreFeedTests {
    let roles = try! RoleTable.load(contentsOf: ClubroomResources.rolesURL)

    @Test func aSnapshotAndDeltasBuildTheStore() {
        var state = RoomState(roles: roles)
        let ana = WirePeer(id: "ana", name: "Ana", role: "host", muted: false, joinedAt: 1)
        let eli = WirePeer(id: "eli", name: "Eli", role: "audience", muted: true, joinedAt: 2)
        let snapshot = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [ana, eli], topic: "t",
            chat: [WireChat(from: "ana", name: "Ana", text: "hi", at: 3)], roles: [], resumed: false)
        let messages: [ServerMessage] = [
            ServerMessage(.joined(snapshot), seq: 10),
            ServerMessage(.handRaised(peer: "eli", at: 20), seq: 11),
            ServerMessage(.invited(peer: "eli", by: "ana"), seq: 12),
            ServerMessage(.roleChanged(peer: "eli", role: "speaker", by: "eli"), seq: 13),
        ]
        for message in messages {
            for sequenced in StoreFeed.events(for: .message(message), selfID: state.selfID) {
                _ = reduce(&state, .server(sequenced.event, seq: sequenced.seq))
            }
        }
        #expect(state.selfID == "eli")
        #expect(state.topic == "t")
        #expect(state.peers["eli"]?.role == .speaker)
        #expect(state.chat.map(\.fromName) == ["Ana"])
        #expect(state.lastSeq == 13)
    }

    @Test func gatheredJoinsBecomeOneEventPerPeerWithItsOwnNumber() {
        let peers = ["gus", "hana", "ivo"].map { WirePeer(id: $0, name: $0, role: "audience", joinedAt: 1) }
        let events = StoreFeed.events(for: .message(ServerMessage(.peersJoined(peers), seq: 12)), selfID: "eli")
        #expect(events.count == 3)
        let seqs = events.compactMap { sequenced -> UInt64? in
            if case .peerJoined = sequenced.event { return sequenced.seq }
            return nil
        }
        #expect(seqs == [10, 11, 12])
        let lines = BotProtocol.lines(for: .message(ServerMessage(.peersJoined(peers), seq: 12)))
        #expect(lines.count == 3)
        #expect(lines[1] == #"{"event":"peer_joined","peer":"hana","name":"hana","role":"audience","muted":true}"#)
    }

    @Test func aPendingInvitationInTheSnapshotBringsThePromptBack() {
        var state = RoomState(roles: roles)
        let ana = WirePeer(id: "ana", name: "Ana", role: "host", muted: false, joinedAt: 1)
        let eli = WirePeer(id: "eli", name: "Eli", role: "audience", muted: true, joinedAt: 2)
        let first = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [ana, eli], topic: "", chat: [], roles: [], resumed: false)
        var invitedEli = eli
        invitedEli.invitedBy = "ana"
        let again = JoinedSnapshot(
            room: "lobby", selfID: "eli", peers: [ana, invitedEli], topic: "", chat: [], roles: [], resumed: true)
        let events: [SessionEvent] = [
            .message(ServerMessage(.joined(first), seq: 10)),
            .message(ServerMessage(.invited(peer: "eli", by: "ana"), seq: 11)),
            .reconnecting(attempt: 1, delay: .zero),
            .reconnected(ServerMessage(.joined(again), seq: 12)),
        ]
        for event in events {
            for sequenced in StoreFeed.events(for: event, selfID: state.selfID) {
                _ = reduce(&state, .server(sequenced.event, seq: sequenced.seq))
            }
        }
        #expect(state.invitation == Invitation(by: "ana"))
        #expect(state.connection == .connected)
        guard
            case .joined(let snapshot)? = StoreFeed.event(
                for: ServerMessage(.joined(first), seq: 10), selfID: nil)?.event
        else {
            Issue.record("no snapshot")
            return
        }
        #expect(snapshot.invitedBy == nil)
    }

    @Test func aChangeTheServerMadeItselfHasNoActor() {
        #expect(
            StoreFeed.event(
                for: ServerMessage(.roleChanged(peer: "eli", role: "speaker", by: ""), seq: 3), selfID: "eli")
                == SequencedEvent(.roleChanged("eli", to: .speaker, by: nil), seq: 3))
        #expect(
            StoreFeed.event(for: ServerMessage(.handLowered(peer: "eli", by: ""), seq: 4), selfID: "eli")
                == SequencedEvent(.handLowered("eli", by: nil), seq: 4))
        #expect(
            StoreFeed.event(
                for: ServerMessage(.muteChanged(peer: "eli", muted: true, by: "ana"), seq: 5), selfID: "eli")
                == SequencedEvent(.muteChanged("eli", muted: true, by: "ana"), seq: 5))
    }

    @Test func invitationsForOthersAreNotTheClientsOwn() {
        #expect(StoreFeed.event(for: ServerMessage(.invited(peer: "fay", by: "ana"), seq: 3), selfID: "eli") == nil)
        #expect(
            StoreFeed.event(for: ServerMessage(.invited(peer: "eli", by: "ana"), seq: 3), selfID: "eli")
                == SequencedEvent(.invitedToSpeak(by: "ana"), seq: 3))
    }

    @Test func theSnapshotsRoleTableBecomesARoleTable() throws {
        let wire = roles.roles.map { role in
            WireRole(
                name: role.name.rawValue, label: role.label, rank: role.rank, onStage: role.onStage,
                permissions: Permission.allCases.filter { role.permissions.contains($0) }.map(\.rawValue))
        }
        #expect(try StoreFeed.roleTable(from: wire) == roles)
        #expect(throws: RoleTableError.self) {
            try StoreFeed.roleTable(from: [
                WireRole(name: "host", label: "h", rank: 0, onStage: true, permissions: ["fly"])
            ])
        }
    }

    @Test func requestsMapToTheWire() {
        #expect(StoreFeed.wire(.invite("eli")) == .invite(peer: "eli"))
        #expect(StoreFeed.wire(.chat("x", to: .role(.moderator))) == .chat(text: "x", to: .role("moderator")))
        #expect(StoreFeed.wire(.remove("gus", reason: nil)) == .remove(peer: "gus", reason: ""))
    }
}
