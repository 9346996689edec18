import ClubroomResources
import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

let defaultRoles = try! RoleTable.load(contentsOf: ClubroomResources.rolesURL)

/// A room with a host (ana), a moderator (bo), a speaker (chen) and two audience members (eli, fay), joined
/// in that order at times 1 to 5.
func populatedRoom() -> RoomAuthority {
    var room = RoomAuthority(name: "lobby", roles: defaultRoles)
    let people: [(PeerID, String, RoleName)] = [
        ("ana", "Ana", .host), ("bo", "Bo", .moderator), ("chen", "Chen", .speaker), ("eli", "Eli", .audience),
        ("fay", "Fay", .audience),
    ]
    for (index, person) in people.enumerated() {
        _ = room.join(id: person.0, name: person.1, role: person.2, now: Timestamp(index + 1))
    }
    return room
}

func events(_ outcome: Outcome) -> [WireEvent] { outcome.deliveries.map(\.message.event) }

func refusal(_ outcome: Outcome) -> (code: ErrorCode, message: String)? {
    guard case .error(let code, let message, _)? = outcome.error?.event else { return nil }
    return (code, message)
}

/// Checks that a refused request changed nothing in the room.
func expectRefused(
    _ request: ClientRequest, by actor: PeerID, code: ErrorCode, message: String? = nil,
    in room: RoomAuthority = populatedRoom(), sourceLocation: SourceLocation = #_sourceLocation
) {
    var room = room
    let before = room
    let outcome = room.handle(request, from: actor, id: .integer(9), now: 100)
    #expect(outcome.deliveries.isEmpty, sourceLocation: sourceLocation)
    #expect(outcome.changes.isEmpty, sourceLocation: sourceLocation)
    #expect(outcome.closes.isEmpty, sourceLocation: sourceLocation)
    #expect(refusal(outcome)?.code == code, "\(String(describing: refusal(outcome)))", sourceLocation: sourceLocation)
    if let message { #expect(refusal(outcome)?.message == message, sourceLocation: sourceLocation) }
    if case .error(_, _, let id)? = outcome.error?.event { #expect(id == .integer(9), sourceLocation: sourceLocation) }
    #expect(room.peers == before.peers, sourceLocation: sourceLocation)
    #expect(room.seq == before.seq, sourceLocation: sourceLocation)
    #expect(room.topic == before.topic && room.ended == before.ended, sourceLocation: sourceLocation)
    #expect(room.invitations == before.invitations, sourceLocation: sourceLocation)
}

@Suite struct JoinTests {
    @Test func theJoinerGetsASnapshotAndTheOthersADelta() {
        var room = RoomAuthority(name: "lobby", roles: defaultRoles, topic: "t", seq: 10)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 1)
        let result = room.join(id: "eli", name: "  Eli \u{202E}\n ", role: .audience, now: 2)
        guard case .joined(let snapshot, let outcome, let replaced) = result else {
            Issue.record("refused: \(result)")
            return
        }
        #expect(!replaced)
        let eli = AnnouncedPeer(Peer(id: "eli", name: "Eli", role: .audience, muted: true, joinedAt: 2))
        #expect(outcome.deliveries == [Delivery(to: .everyoneExcept("eli"), ServerMessage(.peerJoined(eli), seq: 12))])
        #expect(outcome.gates == [GateChange("eli", open: false)])
        guard case .joined(let state) = snapshot.event else {
            Issue.record("not a snapshot")
            return
        }
        #expect(snapshot.seq == 12)
        #expect(state.selfID == "eli" && state.room == "lobby" && state.topic == "t" && !state.resumed)
        #expect(state.peers.map(\.peer.id) == ["ana", "eli"])
        #expect(state.roles == defaultRoles)
    }

    @Test func anEmptyNameBecomesTheIdentity() {
        var room = RoomAuthority(name: "lobby", roles: defaultRoles)
        _ = room.join(id: "eli", name: " \u{7} ", role: .audience, now: 2)
        #expect(room.peers["eli"]?.name == "eli")
    }

    @Test func aSecondConnectionReplacesTheFirstAndKeepsTheState() {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", now: 50)
        let seq = room.seq
        guard case .joined(_, let outcome, let replaced) = room.join(id: "eli", name: "Eli", role: .audience, now: 60)
        else {
            Issue.record("refused")
            return
        }
        #expect(replaced)
        #expect(outcome.deliveries.isEmpty && outcome.changes.isEmpty)
        // The new connection's media starts from the peer's own gate, from the outcome like every gate.
        #expect(outcome.gates == [GateChange("eli", open: false)])
        #expect(room.seq == seq)
        #expect(room.peers["eli"]?.role == .audience)
        #expect(room.peers["eli"]?.handRaisedAt == 50)
    }

    /// Issue 27 (H2): a second terminal of the same identity with a lesser link (the lobby after a host link)
    /// made the host a listener and left the room without a host. The place is the identity's own: a lesser link
    /// takes nothing away, and a higher one raises it.
    @Test func aSecondConnectionWithALesserLinkKeepsTheRoleHeld() {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "chen", now: 40)
        guard
            case .joined(let snapshot, let outcome, let replaced) = room.join(
                id: "ana", name: "Ana", role: .audience, now: 60),
            case .joined(let state) = snapshot.event
        else {
            Issue.record("refused")
            return
        }
        #expect(replaced)
        #expect(room.peers["ana"]?.role == .host)
        #expect(state.peers.first { $0.peer.id == "ana" }?.peer.role == .host)
        #expect(state.tokenRole == .host)
        #expect(outcome.deliveries.isEmpty && outcome.changes.isEmpty)
        #expect(outcome.gates == [GateChange("ana", open: false)])
        // An unmuted speaker coming with an audience link stays on stage, unmuted.
        guard case .joined(_, let second, _) = room.join(id: "chen", name: "Chen", role: .audience, now: 70) else {
            Issue.record("refused")
            return
        }
        #expect(second.deliveries.isEmpty && second.changes.isEmpty)
        #expect(room.peers["chen"]?.role == .speaker)
        #expect(room.peers["chen"]?.muted == false)
    }

    /// Issue 27 (H2): a role kept from the last 60 s beat a host link. A link higher than the one the person came
    /// with raises them, present or back within the grace.
    @Test func aHigherLinkRaisesTheRoleHeld() {
        var room = populatedRoom()
        let seq = room.seq
        guard case .joined(_, let raised, _) = room.join(id: "eli", name: "Eli", role: .host, now: 60) else {
            Issue.record("refused")
            return
        }
        #expect(room.peers["eli"]?.role == .host)
        #expect(
            raised.deliveries == [
                Delivery(
                    to: .everyoneExcept("eli"),
                    ServerMessage(.roleChanged(peer: "eli", role: .host, by: "eli", stepUp: nil), seq: seq + 1))
            ])
        #expect(raised.changes == [.roleHeld("eli", role: .host, at: 60)])
        // A raised hand goes down when a higher link brings its owner onto the stage.
        _ = room.handle(.raiseHand, from: "fay", now: 61)
        guard case .joined(_, let onStage, _) = room.join(id: "fay", name: "Fay", role: .speaker, now: 62) else {
            Issue.record("refused")
            return
        }
        #expect(
            events(onStage) == [
                .roleChanged(peer: "fay", role: .speaker, by: "fay", stepUp: nil),
                .handLowered(peer: "fay", by: "fay"),
            ])
        #expect(room.peers["fay"]?.handRaisedAt == nil)
        _ = room.leave("fay", reason: .disconnected, now: 70)
        guard case .joined(let snapshot, _, _) = room.join(id: "fay", name: "Fay", role: .moderator, now: 80),
            case .joined(let state) = snapshot.event
        else {
            Issue.record("refused")
            return
        }
        #expect(state.resumed)
        #expect(room.peers["fay"]?.role == .moderator)
    }

    @Test func aRoleGivenInTheRoomIsKeptByATokenAsGoodAsTheFirst() {
        var room = populatedRoom()
        _ = room.handle(.setRole("eli", .speaker), from: "ana", now: 10)
        guard case .joined(_, let outcome, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 60) else {
            Issue.record("refused")
            return
        }
        #expect(outcome.deliveries.isEmpty && outcome.changes.isEmpty)
        #expect(room.peers["eli"]?.role == .speaker)
    }

    @Test func aReturnWithALesserLinkKeepsTheRole() {
        var room = populatedRoom()
        _ = room.leave("ana", reason: .disconnected, now: 1_000)
        guard case .joined(let snapshot, _, _) = room.join(id: "ana", name: "Ana", role: .speaker, now: 2_000),
            case .joined(let state) = snapshot.event
        else {
            Issue.record("refused")
            return
        }
        #expect(state.resumed)
        #expect(room.peers["ana"]?.role == .host)
    }

    @Test func aFullRoomRefuses() {
        var room = RoomAuthority(name: "lobby", roles: defaultRoles, maxPeers: 2)
        _ = room.join(id: "a", name: "A", role: .audience, now: 1)
        _ = room.join(id: "b", name: "B", role: .audience, now: 1)
        #expect(room.join(id: "c", name: "C", role: .audience, now: 1) == .refused(.roomFull))
        #expect(room.peers.count == 2)
    }

    @Test func aReconnectWithinSixtySecondsGetsTheRoleBack() {
        var room = populatedRoom()
        _ = room.handle(.setRole("eli", .speaker), from: "ana", now: 10)
        let left = room.leave("eli", reason: .disconnected, now: 1_000)
        #expect(left.changes == [.departed("eli", role: .speaker, at: 1_000)])
        #expect(events(left) == [.peerLeft(peer: "eli", reason: .disconnected)])
        guard case .joined(let snapshot, _, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 61_000),
            case .joined(let state) = snapshot.event
        else {
            Issue.record("refused")
            return
        }
        #expect(state.resumed)
        #expect(room.peers["eli"]?.role == .speaker)
        #expect(room.peers["eli"]?.muted == true)
    }

    @Test func aReconnectAfterSixtySecondsTakesTheTokensRole() {
        var room = populatedRoom()
        _ = room.handle(.setRole("eli", .speaker), from: "ana", now: 10)
        _ = room.leave("eli", reason: .disconnected, now: 1_000)
        _ = room.join(id: "eli", name: "Eli", role: .audience, now: 61_001)
        #expect(room.peers["eli"]?.role == .audience)
    }

    @Test func theSnapshotHoldsOnlyTheChatThisPeerMayRead() {
        var room = populatedRoom()
        _ = room.handle(.chat("all", to: .everyone), from: "ana", now: 10)
        _ = room.handle(.chat("to eli", to: .peer("eli")), from: "ana", now: 11)
        _ = room.handle(.chat("to fay", to: .peer("fay")), from: "ana", now: 12)
        _ = room.handle(.chat("speakers", to: .role(.speaker)), from: "ana", now: 13)
        _ = room.handle(.chat("audience", to: .role(.audience)), from: "bo", now: 14)
        _ = room.handle(.chat("from eli", to: .peer("bo")), from: "eli", now: 15)
        guard case .joined(let state) = room.snapshot(for: "eli", resumed: false).event else { return }
        #expect(state.chat.map(\.text) == ["all", "to eli", "audience", "from eli"])
    }

    @Test func chatHistoryKeepsTheLastTwoHundred() {
        var room = populatedRoom()
        for index in 0..<205 {
            _ = room.handle(.chat("m\(index)", to: .everyone), from: "eli", now: Timestamp(index))
        }
        #expect(room.chat.count == 200)
        #expect(room.chat.first?.text == "m5")
        #expect(room.chat.last?.text == "m204")
    }
}

/// Departures together, and the roles a store keeps so that a crash of the server loses none.
@Suite struct DepartureAndRoleRecordTests {
    @Test func aCrowdLeavingTogetherIsOneAnnouncementWithANumberPerDeparture() {
        var room = populatedRoom()
        for index in 0..<300 { _ = room.join(id: PeerID("p\(index)"), name: "P", role: .audience, now: 10) }
        _ = room.handle(.setRole("p7", .speaker), from: "ana", now: 11)
        let seq = room.seq
        let gone = (0..<300).map { Departure(PeerID("p\($0)"), $0 == 5 ? .left : .disconnected) }
        // A peer not in the room (already gone) is skipped.
        let outcome = room.leave(gone + [Departure("nobody", .left)], now: 2_000)
        #expect(outcome.deliveries == [Delivery(to: .everyone, ServerMessage(.peersLeft(gone), seq: seq + 300))])
        #expect(room.seq == seq + 300)
        #expect(outcome.changes.count == 300)
        #expect(outcome.changes[7] == .departed("p7", role: .speaker, at: 2_000))
        #expect(room.peers.keys.sorted() == ["ana", "bo", "chen", "eli", "fay"])
        guard case .joined(let state) = room.snapshot(for: "ana", resumed: false).event else { return }
        #expect(state.peers.map(\.peer.id) == ["ana", "bo", "chen", "eli", "fay"])
        #expect(room.departed.count == 300)
    }

    @Test func oneDepartureIsStillPeerLeft() {
        var room = populatedRoom()
        let outcome = room.leave([Departure("eli", .left)], now: 100)
        #expect(events(outcome) == [.peerLeft(peer: "eli", reason: .left)])
        #expect(room.leave([Departure("eli", .left)], now: 101) == Outcome())
    }

    @Test func oldDeparturesArePrunedAsTheCrowdGrows() {
        // 1,100 departures within the grace, as a store gives them to a room loaded after a restart.
        var old: [PeerID: (role: RoleName, at: Timestamp)] = [:]
        for index in 0..<1100 { old[PeerID("p\(index)")] = (.speaker, 10) }
        var room = RoomAuthority(name: "lobby", roles: defaultRoles, departed: old)
        _ = room.join(id: "x", name: "X", role: .audience, now: 20)
        _ = room.leave("x", reason: .left, now: 20)
        // Nothing is old enough to prune yet.
        #expect(room.departed.count == 1101)
        // Long past the grace, the old ones go once the departures kept have doubled (1,101 kept at the last
        // look, so at the 2,203rd), not at every departure: a crowd leaving costs linear time.
        for index in 0..<1101 {
            _ = room.join(id: PeerID("q\(index)"), name: "Q", role: .audience, now: 100_000)
            _ = room.leave(PeerID("q\(index)"), reason: .disconnected, now: 100_000)
        }
        #expect(room.departed.count == 2202)
        _ = room.join(id: "q-last", name: "Q", role: .audience, now: 100_000)
        _ = room.leave("q-last", reason: .disconnected, now: 100_000)
        #expect(room.departed.keys.allSatisfy { $0.rawValue.hasPrefix("q") })
        #expect(room.departed.count == 1102)
    }

    @Test func aRoleOtherThanTheTokensIsRecordedWhenItIsHeld() {
        var room = populatedRoom()
        let promoted = room.handle(.setRole("eli", .speaker), from: "ana", now: 20)
        #expect(promoted.changes.first == .roleHeld("eli", role: .speaker, at: 20))
        let steppedDown = room.handle(.stepDown, from: "chen", now: 21)
        #expect(steppedDown.changes.first == .roleHeld("chen", role: .audience, at: 21))
    }

    @Test func aRoleGivenBackOnReturnIsRecordedAndTheTokensOwnIsNot() {
        // What the store kept after a crash: eli had been made a speaker.
        var room = RoomAuthority(
            name: "lobby", roles: defaultRoles, departed: ["eli": (.speaker, 1_000), "fay": (.audience, 1_000)])
        guard case .joined(_, let back, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 5_000) else {
            Issue.record("refused")
            return
        }
        #expect(room.peers["eli"]?.role == .speaker)
        #expect(back.changes == [.roleHeld("eli", role: .speaker, at: 5_000)])
        guard case .joined(_, let plain, _) = room.join(id: "fay", name: "Fay", role: .audience, now: 5_000) else {
            Issue.record("refused")
            return
        }
        #expect(plain.changes.isEmpty)
    }
}

@Suite struct ModerationTests {
    /// Issue 27 (M3): a raised hand was lost with a dropped connection and in a restart. It is kept with its time
    /// while its owner's place is (the store is told of every hand that goes up or down for good), and comes back,
    /// in its place in the queue, when they do.
    @Test func aRaisedHandIsKeptWhileItsOwnerIsAwayAndInTheStore() {
        var room = populatedRoom()
        #expect(
            room.handle(.raiseHand, from: "eli", now: 50).changes == [
                .roleHeld("eli", role: .audience, at: 50), .hand("eli", raisedAt: 50),
            ])
        #expect(
            room.handle(.raiseHand, from: "fay", now: 55).changes == [
                .roleHeld("fay", role: .audience, at: 55), .hand("fay", raisedAt: 55),
            ])
        let dropped = room.leave("eli", reason: .disconnected, now: 60)
        #expect(dropped.changes == [.departed("eli", role: .audience, at: 60)])
        #expect(room.heldHands == ["eli": 50])
        guard case .joined(_, let back, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 70) else {
            Issue.record("refused")
            return
        }
        #expect(back.changes.isEmpty)
        #expect(room.peers["eli"]?.handRaisedAt == 50)
        #expect(events(back) == [.peerJoined(AnnouncedPeer(room.peers["eli"]!))])
        // Leaving on purpose takes the hand down for good.
        #expect(room.leave("fay", reason: .left, now: 80).changes.contains(.hand("fay", raisedAt: nil)))
        #expect(room.heldHands.isEmpty)
        // Back after the grace: the place is gone, and the hand with it.
        _ = room.leave("eli", reason: .disconnected, now: 90)
        guard case .joined(_, let late, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 90 + 60_001)
        else {
            Issue.record("refused")
            return
        }
        #expect(late.changes == [.hand("eli", raisedAt: nil)])
        #expect(room.peers["eli"]?.handRaisedAt == nil)
    }

    /// A room loaded after a restart gives each hand back to its owner on return, with its first time, so the
    /// queue keeps its order whoever comes back first.
    @Test func aRoomLoadedWithRaisedHandsKeepsTheQueuesOrder() {
        var room = RoomAuthority(
            name: "lobby", roles: defaultRoles, departed: ["eli": (.audience, 1_000), "fay": (.audience, 1_000)],
            hands: ["eli": 400, "fay": 300])
        _ = room.join(id: "eli", name: "Eli", role: .audience, now: 2_000)
        _ = room.join(id: "fay", name: "Fay", role: .audience, now: 2_100)
        #expect(room.peers["eli"]?.handRaisedAt == 400)
        #expect(room.peers["fay"]?.handRaisedAt == 300)
        #expect(room.checkpoint.heldHands == nil)
        _ = room.leave("fay", reason: .disconnected, now: 2_200)
        let copy = RoomAuthority(name: "lobby", roles: defaultRoles, restoring: room.checkpoint, maxPeers: 100)
        #expect(copy.heldHands == ["fay": 300])
    }

    @Test func raiseAndLowerHand() {
        var room = populatedRoom()
        let raised = room.handle(.raiseHand, from: "eli", now: 50)
        #expect(raised.deliveries == [Delivery(to: .everyone, ServerMessage(.handRaised(peer: "eli", at: 50), seq: 6))])
        #expect(room.peers["eli"]?.handRaisedAt == 50)
        let lowered = room.handle(.lowerHand, from: "eli", now: 60)
        #expect(events(lowered) == [.handLowered(peer: "eli", by: "eli")])
        #expect(room.peers["eli"]?.handRaisedAt == nil)
    }

    @Test func handRefusals() {
        expectRefused(.raiseHand, by: "chen", code: .forbidden)  // speakers may not raise hands
        expectRefused(.raiseHand, by: "ana", code: .conflict, message: "you are already on the stage")
        expectRefused(.lowerHand, by: "eli", code: .conflict, message: "your hand is not raised")
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", now: 50)
        expectRefused(.raiseHand, by: "eli", code: .conflict, message: "your hand is already raised", in: room)
    }

    @Test func inviteThenAccept() {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", now: 50)
        let invited = room.handle(.invite("eli"), from: "bo", now: 60)
        #expect(events(invited) == [.invited(peer: "eli", by: "bo", at: 60)])
        #expect(invited.deliveries.allSatisfy { $0.to == .everyone }, "the inviter and every moderator see it")
        #expect(
            invited.changes == [
                .audit(AuditEntry(at: 60, actor: "bo", action: "invite", target: "eli")),
                .invited("eli", by: "bo", at: 60),
            ])
        #expect(room.invitations == ["eli": Invitation(by: "bo", at: 60)])
        let accepted = room.handle(.acceptInvite, from: "eli", now: 70)
        // The role change lowers the hand for a client already; the hand's own event follows it.
        #expect(
            events(accepted) == [
                .roleChanged(peer: "eli", role: "speaker", by: "eli", stepUp: nil),
                .handLowered(peer: "eli", by: "eli"),
            ])
        #expect(accepted.deliveries.allSatisfy { $0.to == .everyone })
        #expect(
            accepted.changes == [
                .roleHeld("eli", role: .speaker, at: 70),
                .audit(
                    AuditEntry(at: 70, actor: "eli", action: "accept_invite", target: "eli", detail: "invited by bo")),
                .invitationEnded("eli"),
                .hand("eli", raisedAt: nil),
            ])
        #expect(room.peers["eli"]?.role == .speaker)
        #expect(room.peers["eli"]?.muted == true)
        #expect(room.peers["eli"]?.handRaisedAt == nil)
        #expect(room.invitations.isEmpty)
    }

    @Test func anAudienceMemberWithoutARaisedHandCanBeInvited() {
        var room = populatedRoom()
        #expect(
            events(room.handle(.invite("fay"), from: "ana", now: 60)) == [.invited(peer: "fay", by: "ana", at: 60)])
    }

    @Test func inviteThenDeclineTellsEveryone() {
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "bo", now: 60)
        let declined = room.handle(.declineInvite, from: "eli", now: 70)
        #expect(
            declined.deliveries == [
                Delivery(to: .everyone, ServerMessage(.inviteDeclined(peer: "eli", by: "eli"), seq: 7))
            ])
        #expect(
            declined.changes == [
                .audit(
                    AuditEntry(at: 70, actor: "eli", action: "decline_invite", target: "eli", detail: "invited by bo")),
                .invitationEnded("eli"),
            ])
        #expect(room.peers["eli"]?.role == .audience)
        #expect(room.invitations.isEmpty)
    }

    @Test func theInviterOrAModeratorAboveTheInviteeWithdrawsAnInvitation() {
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "bo", now: 60)
        expectRefused(.withdrawInvite("eli"), by: "chen", code: .forbidden, in: room)
        expectRefused(.withdrawInvite("eli"), by: "fay", code: .forbidden, in: room)
        expectRefused(
            .withdrawInvite("fay"), by: "ana", code: .conflict, message: "Fay has no pending invitation", in: room)
        let withdrawn = room.handle(.withdrawInvite("eli"), from: "ana", now: 70)
        #expect(events(withdrawn) == [.inviteWithdrawn(peer: "eli", by: "ana")])
        #expect(withdrawn.deliveries.allSatisfy { $0.to == .everyone })
        #expect(
            withdrawn.changes == [
                .audit(AuditEntry(at: 70, actor: "ana", action: "withdraw_invite", target: "eli")),
                .invitationEnded("eli"),
            ])
        #expect(room.invitations.isEmpty)
        expectRefused(.acceptInvite, by: "eli", code: .conflict, message: "you have no pending invitation", in: room)
    }

    @Test func anUnansweredInvitationLapsesAfterItsLifetime() {
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "bo", now: 1000)
        _ = room.handle(.invite("fay"), from: "ana", now: 5000)
        #expect(room.nextInvitationExpiry == 1000 + RoomAuthority.invitationLifetime)
        #expect(room.expireInvitations(now: 1000 + RoomAuthority.invitationLifetime - 1).deliveries.isEmpty)
        let lapsed = room.expireInvitations(now: 1000 + RoomAuthority.invitationLifetime)
        #expect(events(lapsed) == [.inviteExpired(peer: "eli")])
        #expect(lapsed.deliveries.allSatisfy { $0.to == .everyone })
        #expect(
            lapsed.changes == [
                .audit(
                    AuditEntry(
                        at: 1000 + RoomAuthority.invitationLifetime, actor: "bo", action: "invite_expired",
                        target: "eli")),
                .invitationEnded("eli"),
            ])
        #expect(room.invitations == ["fay": Invitation(by: "ana", at: 5000)])
        #expect(room.nextInvitationExpiry == 5000 + RoomAuthority.invitationLifetime)
        #expect(RoomAuthority.invitationLifetime == 120_000)
    }

    @Test func inviteRefusals() {
        expectRefused(
            .invite("fay"), by: "eli", code: .forbidden, message: "only hosts and moderators can invite people to speak"
        )
        expectRefused(.invite("fay"), by: "chen", code: .forbidden)
        expectRefused(.invite("chen"), by: "ana", code: .forbidden, message: "Chen is already on the stage")
        expectRefused(.invite("zed"), by: "ana", code: .notFound, message: "no one called zed is in the room")
        expectRefused(.acceptInvite, by: "eli", code: .conflict, message: "you have no pending invitation")
        expectRefused(.declineInvite, by: "eli", code: .conflict)
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "bo", now: 60)
        expectRefused(.invite("eli"), by: "ana", code: .conflict, message: "Eli is already invited", in: room)
        expectRefused(.withdrawInvite("eli"), by: "eli", code: .forbidden, in: room)
    }

    @Test func setRoleMovesOnStageMutedAndLowersTheHand() {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "fay", now: 50)
        let moved = room.handle(.setRole("fay", .moderator), from: "bo", now: 60)
        #expect(
            events(moved) == [
                .roleChanged(peer: "fay", role: "moderator", by: "bo", stepUp: nil),
                .handLowered(peer: "fay", by: "bo"),
            ])
        #expect(
            moved.changes == [
                .roleHeld("fay", role: .moderator, at: 60),
                .audit(AuditEntry(at: 60, actor: "bo", action: "set_role", target: "fay", detail: "moderator")),
                .hand("fay", raisedAt: nil),
            ])
        #expect(room.peers["fay"]?.role == .moderator)
    }

    @Test func movingAnUnmutedSpeakerOffStageMutesThem() {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "chen", now: 50)
        let moved = room.handle(.setRole("chen", .audience), from: "ana", now: 60)
        #expect(
            events(moved) == [
                .roleChanged(peer: "chen", role: "audience", by: "ana", stepUp: nil),
                .muteChanged(peer: "chen", muted: true, by: "ana"),
            ])
    }

    @Test func setRoleRefusals() {
        expectRefused(
            .setRole("eli", .host), by: "bo", code: .forbidden, message: "a moderator cannot make someone a host")
        expectRefused(.setRole("ana", .audience), by: "bo", code: .forbidden)
        expectRefused(.setRole("eli", .speaker), by: "chen", code: .forbidden)
        expectRefused(.setRole("eli", .speaker), by: "fay", code: .forbidden)
        expectRefused(.setRole("bo", .moderator), by: "bo", code: .forbidden, message: "you are already a moderator")
        expectRefused(
            .setRole("bo", .host), by: "bo", code: .forbidden,
            message: "you cannot raise your own role above the one your link gives (moderator)")
        expectRefused(.setRole("eli", "wizard"), by: "ana", code: .notFound, message: "there is no role called wizard")
        expectRefused(.setRole("eli", .audience), by: "ana", code: .forbidden, message: "Eli is already an audience")
        var room = populatedRoom()
        _ = room.join(id: "ann", name: "Ann", role: .host, now: 9)
        expectRefused(.setRole("ann", .audience), by: "ana", code: .forbidden, in: room)
    }

    @Test func aModeratorCanMakeAnotherModerator() {
        var room = populatedRoom()
        #expect(refusal(room.handle(.setRole("chen", .moderator), from: "bo", now: 60)) == nil)
        #expect(room.peers["chen"]?.role == .moderator)
    }

    @Test func stepDown() {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "chen", now: 50)
        let stepped = room.handle(.stepDown, from: "chen", now: 60)
        #expect(
            events(stepped) == [
                .roleChanged(peer: "chen", role: "audience", by: "chen", stepUp: "speaker"),
                .muteChanged(peer: "chen", muted: true, by: "chen"),
            ])
        #expect(room.peers["chen"]?.role == .audience)
        expectRefused(.stepDown, by: "eli", code: .forbidden, message: "you are not on the stage")
    }

    /// The token's role is the most a person can take back themself: a host who stepped down steps back up (to
    /// host or anything between), but not above the token's role.
    @Test func whoSteppedDownThemselfStepsBackUpToTheTokensRole() {
        var room = populatedRoom()
        _ = room.handle(.stepDown, from: "ana", now: 60)
        #expect(room.stepUpRole(of: "ana") == .host)
        let back = room.handle(.setRole("ana", .host), from: "ana", now: 70)
        #expect(events(back) == [.roleChanged(peer: "ana", role: "host", by: "ana", stepUp: nil)])
        #expect(room.peers["ana"]?.role == .host)
        #expect(room.stepUpRole(of: "ana") == nil)
        // Down to a lower role on the stage, then up again part of the way.
        _ = room.handle(.setRole("ana", .speaker), from: "ana", now: 80)
        #expect(room.peers["ana"]?.role == .speaker)
        #expect(refusal(room.handle(.setRole("ana", .moderator), from: "ana", now: 90)) == nil)
        #expect(room.stepUpRole(of: "ana") == .host)
        // A listener's token gives nothing to step up to.
        expectRefused(
            .setRole("eli", .speaker), by: "eli", code: .forbidden,
            message: "you cannot raise your own role above the one your link gives (audience)")
    }

    /// Lowered by someone else, a person stays where they were put, across a reconnect too, until someone raises
    /// them again.
    @Test func aDemotionBySomeoneElseIsKeptAcrossReconnects() {
        var room = populatedRoom()
        _ = room.join(id: "ann", name: "Ann", role: .moderator, now: 6)
        let lowered = room.handle(.setRole("ann", .audience), from: "ana", now: 60)
        #expect(events(lowered).first == .roleChanged(peer: "ann", role: "audience", by: "ana", stepUp: nil))
        expectRefused(
            .setRole("ann", .moderator), by: "ann", code: .forbidden,
            message: "someone else moved you down; a host or moderator can bring you back", in: room)
        _ = room.leave("ann", reason: .disconnected, now: 70)
        guard case .joined(let message, _, _) = room.join(id: "ann", name: "Ann", role: .moderator, now: 80),
            case .joined(let snapshot) = message.event
        else {
            Issue.record("ann could not join again")
            return
        }
        #expect(room.peers["ann"]?.role == .audience)
        #expect(snapshot.tokenRole == .moderator)
        #expect(snapshot.peers.first { $0.peer.id == "ann" }?.stepUp == nil)
        expectRefused(.setRole("ann", .moderator), by: "ann", code: .forbidden, in: room)
        _ = room.handle(.setRole("ann", .speaker), from: "ana", now: 90)
        #expect(room.stepUpRole(of: "ann") == .moderator, "raised again by someone else, the right comes back")
    }

    /// A demotion by someone else lasts as long as the room, like a removal: back after the reconnect grace,
    /// with the old speaker token or a host's, the person is where they were put, until someone raises them.
    @Test func aDemotionBySomeoneElseOutlastsTheReconnectGraceWhateverTheToken() {
        var room = populatedRoom()
        let lowered = room.handle(.setRole("chen", .audience), from: "bo", now: 60)
        #expect(lowered.changes.contains(.demoted("chen", role: .audience, at: 60)))
        _ = room.leave("chen", reason: .disconnected, now: 70)
        let late = 70 + RoomAuthority.reconnectGrace + 2000
        guard case .joined(_, let outcome, _) = room.join(id: "chen", name: "Chen", role: .speaker, now: late) else {
            Issue.record("chen could not join again")
            return
        }
        #expect(room.peers["chen"]?.role == .audience)
        #expect(room.stepUpRole(of: "chen") == nil)
        #expect(outcome.changes.contains(.roleHeld("chen", role: .audience, at: late)))
        #expect(!room.gate("chen").open)
        // A greater token changes nothing either.
        _ = room.leave("chen", reason: .left, now: late + 1)
        _ = room.join(id: "chen", name: "Chen", role: .moderator, now: late + 10 * RoomAuthority.reconnectGrace)
        #expect(room.peers["chen"]?.role == .audience)
        // Someone moves them back: the demotion is lifted, and the token counts again.
        let raised = room.handle(.setRole("chen", .speaker), from: "ana", now: late + 11 * RoomAuthority.reconnectGrace)
        #expect(raised.changes.contains(.demotionEnded("chen")))
        _ = room.leave("chen", reason: .disconnected, now: late + 12 * RoomAuthority.reconnectGrace)
        _ = room.join(id: "chen", name: "Chen", role: .speaker, now: late + 14 * RoomAuthority.reconnectGrace)
        #expect(room.peers["chen"]?.role == .speaker)
    }

    /// A room loaded from the store (or from a cluster's checkpoint) keeps its demotions; the room's end forgets
    /// them.
    @Test func aDemotionSurvivesALoadAndACheckpointAndEndsWithTheRoom() {
        var loaded = RoomAuthority(name: "lobby", roles: defaultRoles, demotions: ["chen": .audience])
        _ = loaded.join(id: "chen", name: "Chen", role: .speaker, now: 1_000_000)
        #expect(loaded.peers["chen"]?.role == .audience)
        var room = populatedRoom()
        _ = room.handle(.setRole("bo", .speaker), from: "ana", now: 60)
        _ = room.leave("bo", reason: .disconnected, now: 61)
        var copy = RoomAuthority(name: "lobby", roles: defaultRoles, restoring: room.checkpoint, maxPeers: 100)
        #expect(copy.loweredByOthers == ["bo": .speaker])
        _ = copy.join(id: "bo", name: "Bo", role: .moderator, now: 61 + 5 * RoomAuthority.reconnectGrace)
        #expect(copy.peers["bo"]?.role == .speaker)
        _ = copy.handle(.endRoom(reason: nil), from: "ana", now: 70)
        #expect(copy.loweredByOthers.isEmpty)
    }

    /// Accepting an invitation from below the stage raises the limit to the stage, not above it.
    @Test func anAcceptedInvitationRaisesADemotionToTheStageOnly() {
        var room = populatedRoom()
        _ = room.handle(.setRole("bo", .audience), from: "ana", now: 60)
        _ = room.handle(.invite("bo"), from: "ana", now: 61)
        let accepted = room.handle(.acceptInvite, from: "bo", now: 62)
        #expect(accepted.changes.contains(.demoted("bo", role: .speaker, at: 62)))
        #expect(room.loweredByOthers == ["bo": .speaker])
    }

    /// A host who stepped down and rejoins within the grace is still in the audience, and may step back up.
    @Test func theStoreIsToldOfEveryInvitationAndItsEnd() {
        var room = populatedRoom()
        #expect(room.handle(.invite("eli"), from: "bo", now: 60).changes.contains(.invited("eli", by: "bo", at: 60)))
        #expect(room.handle(.invite("fay"), from: "ana", now: 61).changes.contains(.invited("fay", by: "ana", at: 61)))
        #expect(room.handle(.declineInvite, from: "eli", now: 62).changes.contains(.invitationEnded("eli")))
        // A dropped invitee's invitation is held, not ended; leaving for good ends it.
        #expect(!room.leave("fay", reason: .disconnected, now: 63).changes.contains(.invitationEnded("fay")))
        _ = room.join(id: "fay", name: "Fay", role: .audience, now: 64)
        #expect(room.invitations["fay"] == Invitation(by: "ana", at: 61))
        #expect(room.leave("fay", reason: .left, now: 65).changes.contains(.invitationEnded("fay")))
        _ = room.handle(.invite("eli"), from: "bo", now: 66)
        #expect(room.handle(.withdrawInvite("eli"), from: "bo", now: 67).changes.contains(.invitationEnded("eli")))
        _ = room.handle(.invite("eli"), from: "bo", now: 68)
        let accepted = room.handle(.acceptInvite, from: "eli", now: 69)
        #expect(accepted.changes.contains(.invitationEnded("eli")))
        #expect(
            room.handle(.chat("hi", to: .everyone), from: "ana", now: 70).changes.allSatisfy {
                if case .chat = $0 { true } else { false }
            })
    }

    @Test func aRoomLoadedWithPendingInvitationsAsksTheInviteeAgainOnReturn() {
        var room = RoomAuthority(
            name: "lobby", roles: defaultRoles, invitations: ["eli": Invitation(by: "ana", at: 1000)])
        _ = room.join(id: "bo", name: "Bo", role: .moderator, now: 2000)
        guard case .joined(_, let outcome, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 3000) else {
            Issue.record("eli could not join")
            return
        }
        #expect(room.invitations["eli"] == Invitation(by: "ana", at: 1000))
        // Everyone already here sees it pending with the newcomer.
        #expect(
            events(outcome) == [
                .peerJoined(AnnouncedPeer(room.peers["eli"]!, invitation: Invitation(by: "ana", at: 1000)))
            ])
        // One that lapsed while the server was down is not given back.
        var late = RoomAuthority(
            name: "lobby", roles: defaultRoles, invitations: ["eli": Invitation(by: "ana", at: 1000)])
        _ = late.join(id: "eli", name: "Eli", role: .audience, now: 1000 + RoomAuthority.invitationLifetime)
        #expect(late.invitations.isEmpty)
    }

    @Test func aHostWhoSteppedDownAndRejoinsMayStepBackUp() {
        var room = populatedRoom()
        _ = room.handle(.stepDown, from: "ana", now: 60)
        _ = room.leave("ana", reason: .disconnected, now: 70)
        guard case .joined(let message, _, _) = room.join(id: "ana", name: "Ana", role: .host, now: 80),
            case .joined(let snapshot) = message.event
        else {
            Issue.record("ana could not join again")
            return
        }
        #expect(room.peers["ana"]?.role == .audience)
        #expect(snapshot.peers.first { $0.peer.id == "ana" }?.stepUp == .host)
        #expect(refusal(room.handle(.setRole("ana", .host), from: "ana", now: 90)) == nil)
        #expect(room.peers["ana"]?.role == .host)
    }

    @Test func selfMute() {
        var room = populatedRoom()
        #expect(
            events(room.handle(.setMute(false), from: "chen", now: 50)) == [
                .muteChanged(peer: "chen", muted: false, by: "chen")
            ])
        #expect(room.peers["chen"]?.muted == false)
        let same = room.handle(.setMute(false), from: "chen", now: 51)
        #expect(same.deliveries.isEmpty && same.error == nil)
        expectRefused(
            .setMute(false), by: "eli", code: .forbidden, message: "only hosts, moderators and speakers can speak")
    }

    @Test func playingIsTheStagesAndEndsWithTheRole() {
        var room = populatedRoom()
        #expect(
            events(room.handle(.setPlaying(true), from: "chen", now: 50)) == [
                .playingChanged(peer: "chen", playing: true)
            ])
        #expect(room.peers["chen"]?.playing == true)
        let same = room.handle(.setPlaying(true), from: "chen", now: 51)
        #expect(same.deliveries.isEmpty && same.error == nil)
        expectRefused(
            .setPlaying(true), by: "eli", code: .forbidden,
            message: "only the stage can play a file into the room; raise your hand to be invited up")
        #expect(room.peers["eli"]?.playing == false)
        // Moved to the audience: the ♪ goes with the role.
        let moved = events(room.handle(.setRole("chen", .audience), from: "ana", now: 60))
        #expect(moved.contains(.playingChanged(peer: "chen", playing: false)))
        #expect(room.peers["chen"]?.playing == false)
    }

    @Test func mutePeerTellsEveryoneAndAsksTheTarget() {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "chen", now: 50)
        let muted = room.handle(.mutePeer("chen"), from: "bo", now: 60)
        #expect(
            muted.deliveries == [
                Delivery(to: .everyone, ServerMessage(.muteChanged(peer: "chen", muted: true, by: "bo"), seq: 7)),
                Delivery(to: .peer("chen"), ServerMessage(.askedToMute(peer: "chen", by: "bo"), seq: 8)),
            ])
        #expect(room.peers["chen"]?.muted == true)
        #expect(muted.changes == [.audit(AuditEntry(at: 60, actor: "bo", action: "mute_peer", target: "chen"))])
    }

    @Test func mutePeerRefusals() {
        var room = populatedRoom()
        _ = room.handle(.setMute(false), from: "chen", now: 50)
        _ = room.handle(.setMute(false), from: "ana", now: 50)
        expectRefused(
            .mutePeer("chen"), by: "eli", code: .forbidden, message: "only hosts and moderators can mute others",
            in: room)
        expectRefused(.mutePeer("ana"), by: "bo", code: .forbidden, in: room)
        expectRefused(.mutePeer("bo"), by: "ana", code: .conflict, message: "Bo is already muted", in: room)
    }

    @Test func removeBroadcastsClosesAndBars() {
        var room = populatedRoom()
        let removed = room.handle(.remove("eli", reason: "  spam "), from: "bo", now: 60)
        #expect(events(removed) == [.removed(peer: "eli", by: "bo", reason: "spam")])
        #expect(removed.deliveries.first?.to == .everyone)
        #expect(removed.closes.map(\.peer) == ["eli"] && removed.closes.map(\.reason) == [.removed])
        #expect(
            removed.changes == [
                .roleForgotten("eli"),
                .audit(AuditEntry(at: 60, actor: "bo", action: "remove", target: "eli", detail: "spam")),
            ])
        #expect(room.peers["eli"] == nil)
        #expect(room.join(id: "eli", name: "Eli", role: .audience, now: 70) == .refused(.removed))
    }

    @Test func removeRefusals() {
        expectRefused(
            .remove("fay", reason: nil), by: "eli", code: .forbidden,
            message: "only hosts and moderators can remove people")
        expectRefused(
            .remove("ana", reason: nil), by: "bo", code: .forbidden,
            message: "you cannot remove Ana: a host is not below a moderator")
        expectRefused(.remove("ana", reason: nil), by: "ana", code: .forbidden, message: "you cannot remove yourself")
    }

    @Test func topic() {
        var room = populatedRoom()
        let changed = room.handle(.setTopic(" Friday\u{1B}[2J "), from: "bo", now: 60)
        #expect(events(changed) == [.topicChanged(topic: "Friday[2J", by: "bo")])
        #expect(
            changed.changes == [
                .topic("Friday[2J"), .audit(AuditEntry(at: 60, actor: "bo", action: "set_topic", detail: "Friday[2J")),
            ])
        #expect(room.topic == "Friday[2J")
        expectRefused(
            .setTopic("mine"), by: "chen", code: .forbidden, message: "only hosts and moderators can set the topic")
    }

    @Test func endRoomClosesEveryoneAndRefusesJoinsUntilAHostReopens() {
        var room = populatedRoom()
        let ended = room.handle(.endRoom(reason: "bye"), from: "ana", now: 60)
        #expect(events(ended) == [.roomEnded(by: "ana", reason: "bye")])
        #expect(Set(ended.closes.map(\.peer)) == ["ana", "bo", "chen", "eli", "fay"])
        #expect(ended.closes.allSatisfy { $0.reason == .roomEnded })
        #expect(
            ended.changes == [
                .ended(reason: "bye"), .audit(AuditEntry(at: 60, actor: "ana", action: "end_room", detail: "bye")),
            ])
        #expect(room.ended && room.peers.isEmpty)
        #expect(room.join(id: "eli", name: "Eli", role: .audience, now: 70) == .refused(.roomEnded))
        #expect(room.join(id: "bo", name: "Bo", role: .moderator, now: 70) == .refused(.roomEnded))
        guard case .joined(_, let reopened, _) = room.join(id: "ana", name: "Ana", role: .host, now: 80) else {
            Issue.record("the host could not reopen")
            return
        }
        #expect(reopened.changes == [.reopened, .audit(AuditEntry(at: 80, actor: "ana", action: "reopen"))])
        #expect(!room.ended)
        if case .joined = room.join(id: "eli", name: "Eli", role: .audience, now: 90) {
        } else {
            Issue.record("the reopened room refused a listener")
        }
    }

    @Test func endRoomRefusals() {
        expectRefused(.endRoom(reason: nil), by: "bo", code: .forbidden, message: "only hosts can end the room")
        expectRefused(.endRoom(reason: nil), by: "eli", code: .forbidden)
    }

    /// A client says its microphone does not work; everyone is told, the snapshot carries it, and saying it
    /// again changes nothing.
    @Test func aMicrophoneThatDoesNotWorkIsToldToEveryone() {
        var room = populatedRoom()
        let failed = room.handle(.setMicWorking(false), from: "chen", now: 60)
        #expect(events(failed) == [.micChanged(peer: "chen", working: false)])
        #expect(failed.deliveries.map(\.to) == [.everyone])
        #expect(room.peers["chen"]?.micWorking == false)
        guard case .joined(let snapshot) = room.snapshot(for: "eli", resumed: false).event else {
            Issue.record("no snapshot")
            return
        }
        #expect(snapshot.peers.first { $0.peer.id == "chen" }?.peer.micWorking == false)
        let again = room.handle(.setMicWorking(false), from: "chen", now: 61)
        #expect(again.deliveries.isEmpty && again.error == nil)
        let back = room.handle(.setMicWorking(true), from: "chen", now: 62)
        #expect(events(back) == [.micChanged(peer: "chen", working: true)])
    }

    /// Mute all: every unmuted person on the stage below the asker, one mute each; never the asker, never a peer
    /// of the same rank or above; refused when nobody is left to mute.
    @Test func muteAllMutesTheStageBelowTheAsker() {
        var room = populatedRoom()
        _ = room.handle(.setRole("eli", .speaker), from: "ana", now: 10)
        _ = room.handle(.setMute(false), from: "chen", now: 11)
        _ = room.handle(.setMute(false), from: "eli", now: 12)
        _ = room.handle(.setMute(false), from: "bo", now: 13)
        _ = room.handle(.setMute(false), from: "ana", now: 14)
        let byMod = room.handle(.muteAll, from: "bo", now: 20)
        #expect(
            events(byMod) == [
                .muteChanged(peer: "chen", muted: true, by: "bo"), .askedToMute(peer: "chen", by: "bo"),
                .muteChanged(peer: "eli", muted: true, by: "bo"), .askedToMute(peer: "eli", by: "bo"),
            ])
        #expect(room.peers["ana"]?.muted == false)
        #expect(room.peers["bo"]?.muted == false)
        expectRefused(
            .muteAll, by: "bo", code: .conflict, message: "everyone on the stage you may mute is muted already",
            in: room)
        let byHost = room.handle(.muteAll, from: "ana", now: 21)
        #expect(
            events(byHost) == [.muteChanged(peer: "bo", muted: true, by: "ana"), .askedToMute(peer: "bo", by: "ana")])
        expectRefused(
            .muteAll, by: "chen", code: .forbidden, message: "only hosts and moderators can mute the speakers")
    }

    /// Hand controls: who runs the queue lowers one hand or all of them; the queue's order goes with them.
    @Test func aModeratorLowersOneHandOrClearsTheQueue() {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", now: 10)
        _ = room.handle(.raiseHand, from: "fay", now: 11)
        let one = room.handle(.lowerHandOf("eli"), from: "bo", now: 12)
        #expect(events(one) == [.handLowered(peer: "eli", by: "bo")])
        #expect(room.peers["eli"]?.handRaisedAt == nil)
        expectRefused(.lowerHandOf("eli"), by: "bo", code: .conflict, message: "Eli's hand is not raised", in: room)
        expectRefused(.lowerHandOf("fay"), by: "chen", code: .forbidden, in: room)
        expectRefused(.clearHands, by: "eli", code: .forbidden, in: room)
        _ = room.handle(.raiseHand, from: "eli", now: 13)
        let all = room.handle(.clearHands, from: "ana", now: 14)
        #expect(events(all) == [.handLowered(peer: "eli", by: "ana"), .handLowered(peer: "fay", by: "ana")])
        expectRefused(.clearHands, by: "ana", code: .conflict, message: "no raised hands to lower", in: room)
    }

    /// Declining takes the hand down, so "invite next" does not ask the same person again.
    @Test func decliningLowersTheHand() {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", now: 10)
        _ = room.handle(.raiseHand, from: "fay", now: 11)
        _ = room.handle(.invite("eli"), from: "bo", now: 12)
        let declined = room.handle(.declineInvite, from: "eli", now: 13)
        #expect(
            events(declined) == [
                .inviteDeclined(peer: "eli", by: "eli"), .handLowered(peer: "eli", by: "eli"),
            ])
        #expect(room.peers["eli"]?.handRaisedAt == nil)
        #expect(room.peers["fay"]?.handRaisedAt == 11)
    }

    @Test func chatToEveryoneOnePeerAndARole() {
        var room = populatedRoom()
        let all = room.handle(.chat(" hi ", to: .everyone), from: "eli", now: 60)
        let hello = ChatMessage(from: "eli", fromName: "Eli", text: "hi", sentAt: 60)
        #expect(all.deliveries == [Delivery(to: .everyone, ServerMessage(.chat(hello), seq: 6))])
        #expect(all.changes == [.chat(hello)])
        let direct = room.handle(.chat("psst", to: .peer("ana")), from: "eli", now: 61)
        #expect(direct.deliveries.map(\.to) == [.peers(["ana", "eli"])])
        let stage = room.handle(.chat("mods", to: .role(.moderator)), from: "ana", now: 62)
        #expect(stage.deliveries.map(\.to) == [.peers(["ana", "bo"])])
        let own = room.handle(.chat("audience", to: .role(.audience)), from: "eli", now: 63)
        #expect(own.deliveries.map(\.to) == [.peers(["ana", "bo", "chen", "eli", "fay"])])
    }

    /// "mods" means the people running the room: a message to the mods reaches the hosts too, and one to the
    /// speakers the whole stage; a role nobody else reads is refused, not shown as delivered.
    @Test func aMessageToARoleReachesItAndEveryoneAboveIt() {
        var room = populatedRoom()
        let mods = room.handle(.chat("two minutes", to: .role(.moderator)), from: "eli", now: 60)
        #expect(mods.deliveries.map(\.to) == [.peers(["ana", "bo", "eli"])])
        let speakers = room.handle(.chat("wrap up", to: .role(.speaker)), from: "fay", now: 61)
        #expect(speakers.deliveries.map(\.to) == [.peers(["ana", "bo", "chen", "fay"])])
        guard case .joined(let snapshot) = room.snapshot(for: "ana", resumed: false).event else {
            Issue.record("no snapshot")
            return
        }
        #expect(snapshot.chat.map(\.text) == ["two minutes", "wrap up"])
        guard case .joined(let chens) = room.snapshot(for: "chen", resumed: false).event else {
            Issue.record("no snapshot")
            return
        }
        #expect(chens.chat.map(\.text) == ["wrap up"])
    }

    @Test func aMessageToARoleNobodyElseHoldsIsRefused() {
        var room = populatedRoom()
        _ = room.leave("bo", reason: .left, now: 50)
        _ = room.leave("ana", reason: .left, now: 51)
        expectRefused(
            .chat("anyone?", to: .role(.moderator)), by: "eli", code: .conflict,
            message: "nobody else here is a mod or host; nothing was sent", in: room)
        expectRefused(
            .chat("anyone?", to: .role(.host)), by: "eli", code: .conflict,
            message: "nobody else here is a host; nothing was sent", in: room)
    }

    @Test func chatRefusals() {
        expectRefused(.chat("x", to: .peer("zed")), by: "eli", code: .notFound)
        expectRefused(.chat("x", to: .role("wizard")), by: "eli", code: .notFound)
        expectRefused(.chat("   ", to: .everyone), by: "eli", code: .badRequest)
    }

    @Test func leaveClosesNormallyAndTellsTheOthers() {
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "ana", now: 10)
        let left = room.handle(.leave, from: "eli", now: 60)
        #expect(events(left) == [.peerLeft(peer: "eli", reason: .left)])
        #expect(left.closes.map(\.peer) == ["eli"] && left.closes.map(\.reason) == [.left])
        #expect(room.peers["eli"] == nil && room.invitations.isEmpty)
    }

    @Test func aPendingInvitationOutlivesADroppedConnection() {
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "ana", now: 10)
        _ = room.leave("eli", reason: .disconnected, now: 20)
        #expect(room.invitations.isEmpty)
        guard case .joined(let message, let outcome, _) = room.join(id: "eli", name: "Eli", role: .audience, now: 30),
            case .joined(let snapshot) = message.event
        else {
            Issue.record("eli could not join again")
            return
        }
        #expect(outcome.deliveries.count == 1)
        #expect(room.invitations == ["eli": Invitation(by: "ana", at: 10)])
        #expect(snapshot.peers.first { $0.peer.id == "eli" }?.invitation == Invitation(by: "ana", at: 10))
        #expect(
            events(room.handle(.acceptInvite, from: "eli", now: 40)).contains(
                .roleChanged(peer: "eli", role: "speaker", by: "eli", stepUp: nil)))
    }

    @Test func anInvitationIsNotKeptForAPeerWhoLeftOnPurposeOrCameBackAfterItLapsed() {
        var room = populatedRoom()
        _ = room.handle(.invite("eli"), from: "ana", now: 10)
        _ = room.handle(.invite("fay"), from: "ana", now: 10)
        _ = room.handle(.leave, from: "eli", now: 20)
        _ = room.leave("fay", reason: .disconnected, now: 20)
        _ = room.join(id: "eli", name: "Eli", role: .audience, now: 30)
        _ = room.join(id: "fay", name: "Fay", role: .audience, now: 10 + RoomAuthority.invitationLifetime)
        #expect(room.invitations.isEmpty)
    }

    @Test func aDroppedInviteeBackAfterTheReconnectGraceIsStillInvited() {
        var room = populatedRoom()
        _ = room.handle(.invite("fay"), from: "ana", now: 10)
        _ = room.leave("fay", reason: .disconnected, now: 20)
        _ = room.join(id: "fay", name: "Fay", role: .audience, now: 20 + RoomAuthority.reconnectGrace + 1)
        #expect(room.invitations == ["fay": Invitation(by: "ana", at: 10)])
    }

    @Test func aPeerNotInTheRoomIsRefused() {
        expectRefused(.raiseHand, by: "zed", code: .notFound)
    }

    @Test func levelsAreAnnouncedOnlyWhenTheyChange() {
        var room = populatedRoom()
        let first = room.updateLevels(["ana": 72, "chen": 0, "zed": 50, "bo": 140], now: 0)
        #expect(
            events(first) == [
                .speakers(levels: [SpeakerLevel(peer: "ana", level: 72), SpeakerLevel(peer: "bo", level: 100)])
            ])
        #expect(room.peers["ana"]?.level == 72)
        #expect(room.updateLevels(["ana": 72], now: 0).deliveries.isEmpty)
        guard case .joined(let snapshot) = room.snapshot(for: "eli", resumed: false).event else { return }
        #expect(snapshot.peers.first { $0.peer.id == "ana" }?.peer.level == 72)
    }

    @Test func sequenceNumbersIncreaseByOneForEveryEvent() {
        var room = populatedRoom()
        let start = room.seq
        _ = room.handle(.raiseHand, from: "eli", now: 1)
        let outcome = room.handle(.setRole("eli", .speaker), from: "ana", now: 2)
        #expect(outcome.deliveries.map(\.message.seq) == [start + 2, start + 3])
        #expect(room.seq == start + 3)
    }

    /// Every change of who may be heard comes with its gate, so media applies the outcome without reading the
    /// room: muting, unmuting, a mute by a moderator, a move on and off the stage.
    @Test func outcomesCarryThePublishGatesTheyChange() {
        var room = populatedRoom()
        #expect(room.handle(.setMute(false), from: "chen", now: 10).gates == [GateChange("chen", open: true)])
        #expect(room.handle(.mutePeer("chen"), from: "bo", now: 11).gates == [GateChange("chen", open: false)])
        #expect(room.handle(.setMute(false), from: "chen", now: 12).gates == [GateChange("chen", open: true)])
        #expect(
            room.handle(.setRole("chen", .audience), from: "ana", now: 13).gates == [GateChange("chen", open: false)])
        #expect(room.handle(.setRole("eli", .speaker), from: "ana", now: 14).gates == [GateChange("eli", open: false)])
        #expect(room.handle(.setMute(false), from: "eli", now: 15).gates == [GateChange("eli", open: true)])
        #expect(room.handle(.raiseHand, from: "fay", now: 16).gates.isEmpty)
        #expect(room.handle(.setMute(true), from: "bo", now: 17).gates.isEmpty)
    }
}
