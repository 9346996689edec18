import Testing

@testable import RoomCore

/// Sends `action` as `selfID` in the small room; checks the state did not change, returns the effects.
func effects(of action: RoomAction, as selfID: String, in start: RoomState? = nil) -> [Effect] {
    var state = start ?? joinedRoom(as: selfID)
    let before = state
    let effects = reduce(&state, action)
    #expect(state == before, "a request must not change the state before the server answers")
    return effects
}

func refused(_ reason: String) -> [Effect] { [.notice(Notice(.refusal, reason))] }

@Suite struct RequestTests {
    @Test func allowedRequestsAreSentAsIs() {
        #expect(effects(of: .request(.raiseHand), as: "dara") == [.send(.raiseHand)])
        #expect(effects(of: .request(.lowerHand), as: "eli") == [.send(.lowerHand)])
        #expect(effects(of: .request(.invite("dara")), as: "bo") == [.send(.invite("dara"))])
        #expect(effects(of: .request(.setRole("chen", .moderator)), as: "ana") == [.send(.setRole("chen", .moderator))])
        #expect(effects(of: .request(.stepDown), as: "chen") == [.send(.stepDown)])
        #expect(effects(of: .request(.setMute(true)), as: "chen") == [.send(.setMute(true))])
        #expect(effects(of: .request(.setMute(false)), as: "bo") == [.send(.setMute(false))])
        #expect(effects(of: .request(.mutePeer("chen")), as: "bo") == [.send(.mutePeer("chen"))])
        #expect(effects(of: .request(.setPlaying(true)), as: "chen") == [.send(.setPlaying(true))])
        #expect(
            effects(of: .request(.remove("eli", reason: "spam")), as: "bo") == [.send(.remove("eli", reason: "spam"))])
        #expect(effects(of: .request(.setTopic("Sat")), as: "bo") == [.send(.setTopic("Sat"))])
        #expect(effects(of: .request(.endRoom(reason: nil)), as: "ana") == [.send(.endRoom(reason: nil))])
        #expect(effects(of: .request(.chat("hi", to: .everyone)), as: "dara") == [.send(.chat("hi", to: .everyone))])
        #expect(
            effects(of: .request(.chat("hi", to: .role(.moderator))), as: "dara") == [
                .send(.chat("hi", to: .role(.moderator)))
            ])
        #expect(
            effects(of: .request(.chat("hi", to: .peer("ana"))), as: "dara") == [.send(.chat("hi", to: .peer("ana")))])
    }

    @Test func permissionRefusals() {
        #expect(
            effects(of: .request(.invite("dara")), as: "chen")
                == refused("only hosts and moderators can invite people to speak"))
        #expect(
            effects(of: .request(.setRole("dara", .speaker)), as: "chen")
                == refused("only hosts and moderators can move people between roles"))
        #expect(
            effects(of: .request(.mutePeer("chen")), as: "dara") == refused("only hosts and moderators can mute others")
        )
        #expect(
            effects(of: .request(.remove("eli", reason: nil)), as: "chen")
                == refused("only hosts and moderators can remove people"))
        #expect(
            effects(of: .request(.setTopic("x")), as: "chen") == refused("only hosts and moderators can set the topic"))
        #expect(effects(of: .request(.endRoom(reason: nil)), as: "bo") == refused("only hosts can end the room"))
        #expect(
            effects(of: .request(.setMute(false)), as: "dara")
                == refused("only hosts, moderators and speakers can speak"))
        #expect(
            effects(of: .request(.raiseHand), as: "chen")
                == refused("only hosts, moderators and listeners can raise a hand"))
        #expect(
            effects(of: .request(.setPlaying(true)), as: "dara")
                == refused("only the stage can play a file into the room; raise your hand to be invited up"))
        #expect(effects(of: .request(.stepDown), as: "dara") == refused("you are not on the stage"))
    }

    @Test func rankRefusals() {
        #expect(
            effects(of: .request(.setRole("chen", .host)), as: "bo")
                == refused("a moderator cannot make someone a host"))
        #expect(
            effects(of: .request(.mutePeer("ana")), as: "bo")
                == refused("you cannot mute Ana: a host is not below a moderator"))
        #expect(
            effects(of: .request(.remove("ana", reason: nil)), as: "bo")
                == refused("you cannot remove Ana: a host is not below a moderator"))
        // Your own role: down to any lower one; back up only to what you stepped down from.
        #expect(effects(of: .request(.setRole("bo", .speaker)), as: "bo") == [.send(.setRole("bo", .speaker))])
        #expect(
            effects(of: .request(.setRole("bo", .host)), as: "bo")
                == refused("you cannot raise your own role; a host or moderator can move you"))
    }

    @Test func whoSteppedDownStepsBackUpAsFarAsTheServerSaid() {
        var state = joinedRoom(as: "bo")
        state.apply(.roleChanged("bo", to: .audience, by: "bo", stepUp: .moderator), seq: 11)
        #expect(state.stepUpRole == .moderator)
        #expect(reduce(&state, .command(.move("bo", .moderator))) == [.send(.setRole("bo", .moderator))])
        #expect(
            reduce(&state, .command(.move("bo", .host)))
                == refused("you can step back up to a moderator at most"))
        state.apply(.roleChanged("bo", to: .moderator, by: "bo"), seq: 12)
        #expect(state.stepUpRole == nil)
        // Moved down by someone else: no right to step back up.
        state.apply(.roleChanged("bo", to: .speaker, by: "ana"), seq: 13)
        #expect(state.stepUpRole == nil)
        #expect(reduce(&state, .command(.move("bo", .audience))) == [.send(.stepDown)])
    }

    /// `/next` invites the first raised hand whose invitation is not out yet, as the screen's n does.
    @Test func nextInvitesTheFirstRaisedHandNotInvitedYet() {
        #expect(effects(of: .command(.inviteNext), as: "bo") == [.send(.invite("eli"))])
        var state = joinedRoom(as: "bo")
        state.apply(.handRaised("dara", at: 600), seq: 11)
        state.apply(.invited("eli", by: "ana", at: 700), seq: 12)
        #expect(effects(of: .command(.inviteNext), as: "bo", in: state) == [.send(.invite("dara"))])
        state.apply(.invited("dara", by: "bo", at: 800), seq: 13)
        #expect(
            effects(of: .command(.inviteNext), as: "bo", in: state)
                == [.notice(Notice(.info, "every raised hand is invited already; /withdraw NAME takes one back"))])
        let noHands = joinedRoom(as: "bo", peers: roomPeers.filter { $0.handRaisedAt == nil })
        #expect(
            effects(of: .command(.inviteNext), as: "bo", in: noHands)
                == [.notice(Notice(.info, "no raised hands to invite"))])
        // A listener may not invite: said before anything about the hands.
        #expect(effects(of: .command(.inviteNext), as: "dara") == refused(roles.refusal(lacking: .invite).reason))
    }

    @Test func stateRefusals() {
        #expect(effects(of: .request(.raiseHand), as: "eli") == refused("your hand is already raised"))
        #expect(effects(of: .request(.raiseHand), as: "ana") == refused("you are already on the stage"))
        #expect(effects(of: .request(.lowerHand), as: "dara") == refused("your hand is not raised"))
        #expect(effects(of: .request(.acceptInvite), as: "dara") == refused("there is no invitation to answer"))
        #expect(effects(of: .request(.declineInvite), as: "dara") == refused("there is no invitation to answer"))
        #expect(effects(of: .request(.setMute(true)), as: "bo") == refused("you are already muted"))
        #expect(effects(of: .request(.setMute(false)), as: "chen") == refused("you are not muted"))
        #expect(effects(of: .request(.mutePeer("dara")), as: "bo") == refused("Dara is already muted"))
        #expect(effects(of: .request(.invite("chen")), as: "bo") == refused("Chen is already on the stage"))
        #expect(effects(of: .request(.invite("zed")), as: "bo") == refused("zed is not in the room"))
        #expect(effects(of: .request(.chat("  ", to: .everyone)), as: "dara") == refused("nothing to send"))
        let long = String(repeating: "x", count: ChatMessage.maxLength + 1)
        #expect(
            effects(of: .request(.chat(long, to: .everyone)), as: "dara")
                == refused("the message is too long (2000 characters at most)"))
        #expect(
            effects(of: .request(.chat("hi", to: .role("boss"))), as: "dara") == refused("there is no role called boss")
        )
        // Only Ana hosts: her own message to the hosts would reach nobody.
        #expect(
            effects(of: .request(.chat("hi", to: .role(.host))), as: "ana")
                == refused("nobody else here is a host; nothing was sent"))
        let hostOnly = joinedRoom(as: "dara", peers: [roomPeers[0], roomPeers[3]])
        #expect(
            effects(of: .request(.chat("hi", to: .role(.moderator))), as: "dara", in: hostOnly) == [
                .send(.chat("hi", to: .role(.moderator)))
            ])
        let noStaff = joinedRoom(as: "dara", peers: [roomPeers[2], roomPeers[3]])
        #expect(
            effects(of: .request(.chat("hi", to: .role(.moderator))), as: "dara", in: noStaff)
                == refused("nobody else here is a mod or host; nothing was sent"))
        #expect(
            effects(of: .request(.chat("hi", to: .peer("dara"))), as: "dara") == refused("you cannot message yourself"))
        #expect(effects(of: .request(.chat("hi", to: .peer("zed"))), as: "dara") == refused("zed is not in the room"))
        let topic = String(repeating: "t", count: 201)
        #expect(
            effects(of: .request(.setTopic(topic)), as: "ana")
                == refused("the topic is too long (200 characters at most)"))
    }

    @Test func connectionAndEndingRefusals() {
        let fresh = RoomState(roles: roles)
        #expect(
            effects(of: .request(.raiseHand), as: "dara", in: fresh)
                == refused("not in the room yet; wait for the connection"))
        var reconnecting = joinedRoom(as: "dara")
        reconnecting.apply(.reconnecting(attempt: 1), seq: 0)
        #expect(
            effects(of: .request(.raiseHand), as: "dara", in: reconnecting)
                == refused("reconnecting; try again in a moment"))
        var ended = joinedRoom(as: "ana")
        ended.apply(.roomEnded(reason: "bye"), seq: 11)
        #expect(effects(of: .request(.setTopic("x")), as: "ana", in: ended) == refused("the room has ended"))
        var removed = joinedRoom(as: "dara")
        removed.apply(.removed("dara", reason: "spam", by: "bo"), seq: 11)
        #expect(
            effects(of: .request(.raiseHand), as: "dara", in: removed) == refused("you were removed from this room"))
        #expect(effects(of: .request(.leave), as: "dara", in: removed) == [.leave])
    }

    @Test func leavingSendsAndCloses() {
        #expect(effects(of: .request(.leave), as: "dara") == [.send(.leave), .leave])
    }

    @Test func answeringAnInvitationClearsItAndSends() {
        var state = joinedRoom(as: "dara")
        state.apply(.invited("dara", by: "bo", at: 500), seq: 11)
        let before = state
        #expect(reduce(&state, .request(.acceptInvite)) == [.send(.acceptInvite)])
        #expect(state == before.with { $0.invitation = nil })
        #expect(state.me?.role == .audience, "the role changes only when the server says so")

        state = before
        #expect(reduce(&state, .request(.declineInvite)) == [.send(.declineInvite)])
        #expect(state == before.with { $0.invitation = nil })
    }
}

@Suite struct CommandActionTests {
    @Test func commandsBecomeRequests() {
        #expect(effects(of: .command(.invite("dara")), as: "bo") == [.send(.invite("dara"))])
        #expect(effects(of: .command(.move("chen", .moderator)), as: "ana") == [.send(.setRole("chen", .moderator))])
        #expect(effects(of: .command(.move("chen", .audience)), as: "chen") == [.send(.stepDown)])
        #expect(effects(of: .command(.mute("chen")), as: "bo") == [.send(.mutePeer("chen"))])
        #expect(effects(of: .command(.mute("chen")), as: "chen") == [.send(.setMute(true))])
        #expect(effects(of: .command(.remove("eli", reason: nil)), as: "ana") == [.send(.remove("eli", reason: nil))])
        #expect(effects(of: .command(.hand), as: "dara") == [.send(.raiseHand)])
        #expect(effects(of: .command(.hand), as: "eli") == [.send(.lowerHand)])
        #expect(effects(of: .command(.raiseHand), as: "dara") == [.send(.raiseHand)])
        #expect(effects(of: .command(.lowerHand), as: "eli") == [.send(.lowerHand)])
        #expect(effects(of: .command(.chat("hi")), as: "dara") == [.send(.chat("hi", to: .everyone))])
        #expect(effects(of: .command(.dm("ana", "hi")), as: "dara") == [.send(.chat("hi", to: .peer("ana")))])
        #expect(effects(of: .command(.topic("Sat")), as: "ana") == [.send(.setTopic("Sat"))])
        #expect(effects(of: .command(.end(reason: "done")), as: "ana") == [.send(.endRoom(reason: "done"))])
        #expect(effects(of: .command(.help), as: "dara") == [.showHelp])
    }

    @Test func commandsAreRefusedLikeRequests() {
        #expect(effects(of: .command(.end(reason: nil)), as: "bo") == refused("only hosts can end the room"))
        #expect(
            effects(of: .command(.hand), as: "chen") == refused("only hosts, moderators and listeners can raise a hand")
        )
        // /raise and /lower do only what they say: never the toggle's other half.
        #expect(effects(of: .command(.raiseHand), as: "eli") == refused("your hand is already raised"))
        #expect(effects(of: .command(.lowerHand), as: "dara") == refused("your hand is not raised"))
    }
}
