import RoomCore
import Testing

@testable import RoomApp
@testable import TermUI

@Suite struct SelectionTests {
    @Test func joiningSelectsTheFirstPersonOnStage() {
        let state = joined(as: "bo")
        #expect(state.selection == "ana")
        #expect(state.selectionAnchor == SelectionAnchor(section: .stage, index: 0))
    }

    @Test func arrowsAndVimKeysMoveAcrossSections() {
        var state = joined(as: "bo")
        // The stage has two columns at 80 wide: Ana Bo / Chen Dara. The queue has three, the audience nine.
        send(&state, char("l"))
        #expect(state.selection == "bo")
        send(&state, key(.down))
        #expect(state.selection == "dara")
        send(&state, char("j"))
        #expect(state.selection == "fay")  // column 1 of the queue
        send(&state, char("j"))
        #expect(state.selection == "ivo")  // column 1 of the audience
        send(&state, key(.up))
        #expect(state.selection == "fay")
        send(&state, char("h"), char("h"))
        #expect(state.selection == "dara")  // from the queue's first back to the stage's last
        send(&state, key(.end))
        #expect(state.selection == "jun")
        send(&state, key(.home))
        #expect(state.selection == "ana")
        send(&state, char("k"))
        #expect(state.selection == "ana")
    }

    @Test func listenersMoveFromStageStraightToAudience() {
        var state = joined(as: "hana")
        send(&state, char("j"), char("j"))
        #expect(state.selection == "hana")
        #expect(state.selectionAnchor == SelectionAnchor(section: .audience, index: 0))
    }

    @Test func selectionStaysOnThePersonWhenListsChange() {
        var state = joined(as: "bo")
        send(&state, key(.down), key(.down), char("l"))
        #expect(state.selection == "fay")
        #expect(state.selectionAnchor == SelectionAnchor(section: .raisedHands, index: 1))
        send(&state, .server(.handLowered("eli", by: nil), seq: 11, at: t0))
        #expect(state.selection == "fay")
        #expect(state.selectionAnchor == SelectionAnchor(section: .raisedHands, index: 0))
        send(&state, .server(.roleChanged("fay", to: .speaker, by: "bo"), seq: 12, at: t0))
        #expect(state.selection == "fay")
        #expect(state.selectionAnchor == SelectionAnchor(section: .stage, index: 4))
        send(&state, .server(.peerLeft("fay"), seq: 13, at: t0))
        // Fay's place on stage goes to whoever is now last there.
        #expect(state.selection == "dara")
        #expect(state.selectionAnchor == SelectionAnchor(section: .stage, index: 3))
    }

    @Test func aSelectedListenerWhoLeavesGivesWayToTheNextName() {
        var state = joined(as: "bo")
        send(&state, key(.end), char("h"))
        #expect(state.selection == "ivo")
        send(&state, .server(.peerLeft("ivo"), seq: 11, at: t0))
        #expect(state.selection == "jun")
        #expect(state.selectionAnchor == SelectionAnchor(section: .audience, index: 1))
    }
}

@Suite struct KeyTests {
    @Test func listenersAreToldWhyModeratorKeysDoNothing() {
        var state = joined(as: "hana")
        let effects = send(&state, char("n"))[0]
        #expect(effects == [.say("Only hosts and moderators can invite people to speak.")])
        #expect(state.notice == Notice(.refusal, "Only hosts and moderators can invite people to speak."))
        #expect(send(&state, char("m"))[0] == [.say("Only hosts, moderators and speakers can speak.")])
        #expect(send(&state, key(.char(" ")))[0] == [.say("Only hosts, moderators and speakers can speak.")])
        #expect(sent(send(&state, char("x"))[0]) == [])
        #expect(state.overlay == nil)
        #expect(state.notice == Notice(.refusal, "Only hosts and moderators can remove people."))
    }

    @Test func raiseHandTogglesThroughTheServer() {
        var state = joined(as: "hana")
        #expect(sent(send(&state, char("r"))[0]) == [.raiseHand])
        send(&state, .server(.handRaised("hana", at: t0), seq: 11, at: t0))
        #expect(sent(send(&state, char("r"))[0]) == [.lowerHand])
    }

    @Test func moderatorInvitesTheHeadOfTheQueueWithN() {
        var state = joined(as: "bo")
        #expect(sent(send(&state, char("n"))[0]) == [.invite("eli")])
    }

    @Test func nWithAnEmptyQueueSaysSo() {
        var state = joined(as: "bo", peers: [peer("bo", "Bo", .moderator), peer("hana", "Hana")])
        #expect(send(&state, char("n"))[0] == [.say("No raised hands to invite.")])
    }

    @Test func iInvitesTheSelectedListener() {
        var state = joined(as: "bo")
        send(&state, key(.end))
        #expect(sent(send(&state, char("i"))[0]) == [.invite("jun")])
    }

    @Test func removeAsksFirstAndCancelIsTheDefault() {
        var state = joined(as: "bo")
        send(&state, key(.end))
        #expect(send(&state, char("x"))[0] == [])
        #expect(state.overlay == .confirm(.remove("jun", reason: nil), confirmSelected: false))
        #expect(send(&state, key(.enter))[0] == [])
        #expect(state.overlay == nil)
        send(&state, char("x"), key(.left))
        #expect(state.overlay == .confirm(.remove("jun", reason: nil), confirmSelected: true))
        #expect(sent(send(&state, key(.enter))[0]) == [.remove("jun", reason: nil)])
    }

    @Test func moderatorsCannotRemoveTheHost() {
        var state = joined(as: "bo")
        #expect(state.selection == "ana")
        #expect(send(&state, char("x"))[0] == [.say("You cannot remove Ana: a host is not below a moderator.")])
        #expect(state.overlay == nil)
    }

    @Test func aAndCapitalMActOnTheSelection() {
        var state = joined(as: "ana")
        send(&state, char("j"))
        #expect(state.selection == "chen")
        #expect(sent(send(&state, char("M"))[0]) == [.mutePeer("chen")])
        #expect(sent(send(&state, char("a"))[0]) == [.setRole("chen", .audience)])
    }

    @Test func mTogglesYourMicrophone() {
        var state = joined(as: "chen")
        #expect(sent(send(&state, char("m"))[0]) == [.setMute(true)])
        send(&state, .server(.muteChanged("chen", muted: true, by: "chen"), seq: 11, at: t0))
        #expect(sent(send(&state, char("m"))[0]) == [.setMute(false)])
    }

    @Test func spaceLatchesAndIgnoresTheRepeatsOfAHeldKey() {
        var peers = sketchPeers()
        peers[2].muted = true
        var state = joined(as: "chen", peers: peers)
        #expect(sent(send(&state, key(.char(" "), 0))[0]) == [.setMute(false)])
        #expect(send(&state, key(.char(" "), 500))[0] == [])
        #expect(send(&state, key(.char(" "), 530))[0] == [])
        send(&state, .server(.muteChanged("chen", muted: false, by: "chen"), seq: 11, at: t0 + 600))
        #expect(sent(send(&state, key(.char(" "), 2000))[0]) == [.setMute(true)])
    }

    @Test func listenersLeaveAtOnceHostsAreAsked() {
        var listener = joined(as: "hana")
        #expect(send(&listener, char("q"))[0] == [.send(.leave), .quit])
        #expect(listener.leaving)
        var host = joined(as: "ana")
        #expect(send(&host, key(.ctrlC))[0] == [])
        #expect(host.overlay == .confirm(.leave, confirmSelected: false))
        #expect(send(&host, char("q"))[0] == [.send(.leave), .quit])
    }

    @Test func tabTogglesTheChatPaneAndClearsTheUnreadCount() {
        var state = joined(as: "hana")
        #expect(state.chatVisible, "the pane shows at first, in the rows the others leave")
        send(&state, key(.tab))
        let message = ChatMessage(from: "eli", fromName: "Eli", text: "hi all", sentAt: t0)
        send(&state, .server(.chat(message), seq: 11, at: t0))
        #expect(state.unreadChat == 1)
        #expect(RoomScreenMapper.model(state).status.hints.contains(KeyHint("Tab", "chat (1)")))
        let mine = ChatMessage(from: "hana", fromName: "Hana", text: "hello", sentAt: t0)
        send(&state, .server(.chat(mine), seq: 20, at: t0))
        #expect(state.unreadChat == 1)
        send(&state, key(.tab))
        #expect(state.chatVisible)
        #expect(state.unreadChat == 0)
        send(&state, .server(.chat(message), seq: 21, at: t0))
        #expect(state.unreadChat == 0)
        #expect(state.log.last == .message(from: "Eli", text: "hi all", to: nil))
    }

    @Test func helpOpensScrollsAndCloses() {
        var state = joined(as: "hana", height: 12)
        send(&state, char("?"))
        #expect(state.overlay == .help(scroll: 0))
        send(&state, char("j"), key(.down))
        #expect(state.overlay == .help(scroll: 2))
        for _ in 0..<20 { send(&state, key(.pageDown)) }
        // The last scroll position shows the last wrapped row at the bottom of the 7 rows inside the box; rows
        // too long for 80 columns wrap, so there are more rows than lines.
        let lines = KeyBindings.helpLines(glyphs: .unicode)
        let last = HelpOverlay.maximumScroll(lines: lines, width: 80, height: 9)
        #expect(state.overlay == .help(scroll: last))
        #expect(last > lines.count - 7)
        send(&state, key(.escape))
        #expect(state.overlay == nil)
    }

    @Test func unknownKeysPointToHelp() {
        var state = joined(as: "hana")
        #expect(send(&state, char("z"))[0] == [.say("The key z does nothing here; press ? for the keys.")])
    }

    @Test func noticesGoAwayAfterSixSeconds() {
        var state = joined(as: "hana")
        send(&state, char("n"))
        send(&state, .tick(t0 + 5999))
        #expect(state.notice != nil)
        send(&state, .tick(t0 + 6000))
        #expect(state.notice == nil)
    }
}

@Suite struct OverlayTests {
    @Test func enterOpensTheActionsAllowedOnTheSelectedPeer() {
        var state = joined(as: "bo")
        send(&state, key(.down), key(.down))
        #expect(state.selection == "eli")
        send(&state, key(.enter))
        #expect(
            state.overlay
                == .actions(
                    peer: "eli", items: [.invite, .makeSpeaker, .makeModerator, .lowerTheirHand, .remove, .message],
                    selected: 0))
        send(&state, char("j"))
        #expect(sent(send(&state, key(.enter))[0]) == [.setRole("eli", .speaker)])
        #expect(state.overlay == nil)
    }

    @Test func aListenerGetsOnlyAMessageAction() {
        var state = joined(as: "hana")
        send(&state, key(.right))
        #expect(state.selection == "bo")
        send(&state, key(.enter))
        #expect(state.overlay == .actions(peer: "bo", items: [.message], selected: 0))
        send(&state, char("d"))
        #expect(state.overlay == nil)
        #expect(state.commandLine?.text == "dm Bo ")
    }

    @Test func actionKeysWorkInsideTheMenu() {
        var state = joined(as: "ana")
        send(&state, char("j"), key(.enter))
        #expect(
            state.overlay
                == .actions(
                    peer: "chen", items: [.makeModerator, .moveToAudience, .mute, .remove, .message], selected: 0))
        #expect(sent(send(&state, char("M"))[0]) == [.mutePeer("chen")])
    }

    @Test func theInvitationPromptAcceptsOrDeclines() {
        var state = joined(as: "hana")
        let effects = send(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))[0]
        #expect(
            effects == [.say("Bo invited you to speak. Press a to accept or d to decline."), .sound(.startPreview)])
        #expect(state.showsInvitation)
        #expect(
            RoomScreenMapper.model(state).overlay
                == .invitation(.init(from: "Bo", micLevel: nil, secondsLeft: 120, acceptSelected: true)))
        send(&state, key(.right))
        #expect(!state.invitationAcceptSelected)
        #expect(send(&state, key(.enter))[0] == [.send(.declineInvite), .sound(.stopPreview)])
        #expect(!state.showsInvitation)
        send(&state, .server(.inviteDeclined("hana"), seq: 12, at: t0))
        send(&state, .server(.invited("hana", by: "bo", at: t0), seq: 13, at: t0))
        #expect(state.invitationAcceptSelected)
        #expect(sent(send(&state, char("a"))[0]) == [.acceptInvite])
        #expect(state.notice == Notice(.info, "Joining the stage muted; press m when you want to talk."))
        // On stage and still muted, the hint stays; once unmuted it has said what it had to, and goes at once.
        send(&state, .server(.roleChanged("hana", to: .speaker, by: "hana"), seq: 14, at: t0 + 100))
        send(&state, .server(.muteChanged("hana", muted: true, by: "hana"), seq: 15, at: t0 + 100))
        #expect(state.notice == Notice(.info, "Joining the stage muted; press m when you want to talk."))
        send(&state, .server(.muteChanged("hana", muted: false, by: "hana"), seq: 16, at: t0 + 1_000))
        #expect(state.notice == nil)
        #expect(state.noticeExpires == nil)
    }

    /// A pending invitation outlives its sender's stay: it is then "by someone who has left", not an identity.
    @Test func anInvitationWhoseSenderLeftNamesNoIdentity() {
        var state = joined(as: "bo")
        send(
            &state, .server(.invited("eli", by: "ana", at: t0), seq: 11, at: t0),
            .server(.peerLeft("ana"), seq: 12, at: t0 + 1_000))
        #expect(
            RoomScreenMapper.model(state).invitations == [.init(name: "Eli", by: "someone who has left", seconds: 1)])
        var invited = joined(as: "hana")
        send(
            &invited, .server(.invited("hana", by: "ana", at: t0), seq: 11, at: t0),
            .server(.peerLeft("ana"), seq: 12, at: t0))
        guard case .invitation(let prompt)? = RoomScreenMapper.model(invited).overlay else {
            Issue.record("no prompt")
            return
        }
        #expect(prompt.from == "Someone who has left")
    }

    @Test func otherKeysWaitForTheInvitationAnswer() {
        var state = joined(as: "hana")
        send(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        #expect(send(&state, char("r"))[0] == [.say("Answer the invitation first: a accepts, d declines.")])
        #expect(state.showsInvitation)
    }

    @Test func theMicrophonePreviewShowsInThePrompt() {
        var state = joined(as: "hana")
        send(&state, .microphoneName("tone:300"), .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        send(&state, .preview(.level(40)))
        #expect(
            RoomScreenMapper.model(state).overlay
                == .invitation(.init(from: "Bo", micName: "tone:300", micLevel: 40, secondsLeft: 120)))
        send(&state, .preview(.unavailable("No microphone (\"default\" not found). Choose one with --input NAME.")))
        #expect(
            RoomScreenMapper.model(state).overlay
                == .invitation(
                    .init(
                        from: "Bo", micName: "tone:300", micLevel: nil,
                        micProblem: "No microphone (\"default\" not found). Choose one with --input NAME.",
                        secondsLeft: 120)))
        // The prompt counts down to the invitation's lapse.
        send(&state, .tick(t0 + 61_000))
        guard case .invitation(let prompt)? = RoomScreenMapper.model(state).overlay else {
            Issue.record("no prompt")
            return
        }
        #expect(prompt.secondsLeft == 59)
    }
}

@Suite struct CommandLineTests {
    func type(_ state: inout AppState, _ prompt: Character, _ text: String) -> [AppEffect] {
        send(&state, char(prompt))
        for c in text { send(&state, char(c)) }
        return send(&state, key(.enter))[0]
    }

    @Test func slashInviteResolvesTheName() {
        var state = joined(as: "bo")
        #expect(sent(type(&state, "/", "invite eli")) == [.invite("eli")])
        #expect(state.commandLine == nil)
        #expect(state.commandHistory == ["invite eli"])
    }

    @Test func theChatLineSaysWhatIsTypedAndTheCommandLineRunsCommands() {
        var state = joined(as: "hana")
        #expect(sent(type(&state, "c", "hello there")) == [.chat("hello there", to: .everyone)])
        #expect(state.commandHistory == ["hello there"])
        // On the chat line a line starting with / is still a command.
        #expect(sent(type(&state, "c", "/hand")) == [.raiseHand])
        // A mistyped command on the command line is an error with a suggestion, never chat.
        #expect(
            type(&state, "/", "inivte bea") == [
                .say("Unknown command /inivte; did you mean /invite? (/help lists them).")
            ])
        #expect(
            type(&state, ":", "hello there") == [.say("Unknown command /hello; type /help for the commands.")])
        #expect(
            type(&state, "c", "/inivte bea") == [
                .say("Unknown command /inivte; did you mean /invite? (/help lists them).")
            ])
    }

    @Test func endAsksFirstForHostsAndIsRefusedForModerators() {
        var host = joined(as: "ana")
        #expect(type(&host, "/", "end bye") == [])
        #expect(host.overlay == .confirm(.endRoom(reason: "bye"), confirmSelected: false))
        #expect(sent(send(&host, char("y"))[0]) == [.endRoom(reason: "bye")])
        var moderator = joined(as: "bo")
        #expect(type(&moderator, "/", "end") == [.say("Only hosts can end the room.")])
        #expect(moderator.overlay == nil)
    }

    @Test func mistakesAreExplained() {
        var state = joined(as: "bo")
        #expect(type(&state, "/", "invite zed") == [.say("No one here is called \"zed\".")])
        #expect(type(&state, "/", "mute") == [.say("You are already muted.")])
    }

    @Test func escapeClosesTheLineWithoutSending() {
        var state = joined(as: "bo")
        send(&state, char("/"), char("x"), key(.escape))
        #expect(state.commandLine == nil)
    }

    @Test func lineModeRunsCommandsAndChat() {
        var state = joined(as: "hana")
        send(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        #expect(sent(send(&state, .line("/accept", at: t0))[0]) == [.acceptInvite])
        #expect(sent(send(&state, .line("good evening", at: t0))[0]) == [.chat("good evening", to: .everyone)])
        #expect(
            send(&state, .line("/inivte eli", at: t0))[0] == [
                .say("Unknown command /inivte; did you mean /invite? (/help lists them).")
            ])
        #expect(send(&state, .line("/leave", at: t0))[0] == [.send(.leave), .quit])
    }
}

@Suite struct ServerEventTests {
    @Test func serverErrorsAreExplainedInPlainWords() {
        var state = joined(as: "bo")
        let effects = send(&state, .server(.error(code: "rate_limited", message: "slow down"), seq: 0, at: t0))[0]
        let text = "Too many requests at once; the server dropped one. Wait a second and try again."
        #expect(effects == [.say(text)])
        #expect(state.notice == Notice(.error, text))
        // The pane keeps the plain words once, not the server's own words beside them.
        #expect(state.log.suffix(1) == [.notice(text, isError: true)])
        #expect(!state.log.contains(.notice("slow down", isError: true)))
    }

    /// The server's notices to hosts about saving: the trouble as an error, its end as news.
    @Test func theServerSavingAgainIsNewsNotAnError() {
        var state = joined(as: "bo")
        let cannot = "The server cannot save right now: the server's disk is full."
        send(&state, .server(.error(code: "not_saved", message: cannot), seq: 0, at: t0))
        #expect(state.notice == Notice(.error, cannot))
        let again = "The server saves again: what happened in the room while it could not is saved."
        #expect(send(&state, .server(.error(code: "saved", message: again), seq: 0, at: t0))[0] == [.say(again)])
        #expect(state.notice == Notice(.info, again))
    }

    @Test func beingRemovedEndsTheRoomWithAStandingNotice() {
        var state = joined(as: "hana")
        send(&state, char("?"))
        send(&state, .server(.removed("hana", reason: "spam", by: "bo"), seq: 11, at: t0))
        #expect(state.isOver)
        #expect(state.overlay == nil)
        #expect(state.notice == Notice(.error, "Bo removed you from the room: spam. Press q to close."))
        #expect(state.noticeExpires == nil)
        #expect(send(&state, char("q"))[0] == [.quit])
    }

    @Test func afterTheRoomEndsRoomKeysSayWhyAndSendNothing() {
        var state = joined(as: "bo")
        send(&state, .server(.roomEnded(reason: "that's all"), seq: 11, at: t0))
        let notice = AppEffect.say("The room has ended.")
        for c: Character in ["r", "m", " ", "n", "i", "a", "M", "x", "/", "c", "w", "u"] {
            #expect(send(&state, char(c, 1000))[0] == [notice], "key \(c)")
        }
        #expect(send(&state, key(.enter, 1000))[0] == [notice])
        #expect(state.overlay == nil)
        #expect(state.commandLine == nil)
        #expect(state.notice == Notice(.refusal, "The room has ended."))
        #expect(send(&state, char("q", 1000))[0] == [.quit])
    }

    /// With raising hands turned off, a listener's status line no longer offers r, and offers it again when it is
    /// turned back on.
    @Test func theStatusLineOffersRaisingAHandOnlyWhileHandsAreAllowed() {
        var state = joined(as: "hana")
        #expect(RoomScreenMapper.model(state).status.hints.map(\.key) == ["?", "r", "c", "q"])
        send(&state, .server(.handsAllowed(false, by: "bo"), seq: 11, at: t0))
        #expect(RoomScreenMapper.model(state).status.hints.map(\.key) == ["?", "c", "q"])
        send(&state, .server(.handsAllowed(true, by: "bo"), seq: 12, at: t0))
        #expect(RoomScreenMapper.model(state).status.hints.map(\.key) == ["?", "r", "c", "q"])
    }

    @Test func afterBeingRemovedTheStatusLineOffersOnlyLeaving() {
        var state = joined(as: "hana")
        #expect(RoomScreenMapper.model(state).status.hints.map(\.key) == ["?", "r", "c", "q"])
        send(&state, .server(.removed("hana", reason: "spam", by: "bo"), seq: 11, at: t0))
        let status = RoomScreenMapper.model(state).status
        #expect(
            status
                == .init(
                    name: "Hana", role: .audience, roomOver: true, hints: [KeyHint("?", "help"), KeyHint("q", "leave")])
        )
        #expect(send(&state, char("r", 1000))[0] == [.say("You were removed from this room.")])
    }

    @Test func levelsRiseAtOnceHoldAndFallSlowly() {
        var state = joined(as: "hana")
        send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 80)]), seq: 11, at: t0))
        #expect(RoomScreenMapper.model(state).stage[0] == .init(name: "Ana", role: .host, level: 75, speaking: true))
        // A level the server does not repeat stands: a steady voice keeps its bar.
        send(&state, .server(.speakers([]), seq: 12, at: t0 + 250), .tick(t0 + 3_000))
        #expect(RoomScreenMapper.model(state).stage[0] == .init(name: "Ana", role: .host, level: 75, speaking: true))
        send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 0)]), seq: 13, at: t0 + 3_000))
        #expect(RoomScreenMapper.model(state).stage[0].level == 75)
        // 300 ms hold then 20 dB/s: 80 (12 dB) falls to 50 (30 dB) 900 ms after the hold; the highlight goes once
        // the pause outlasts its own hold.
        send(&state, .tick(t0 + 4_200))
        #expect(RoomScreenMapper.model(state).stage[0].level == 50)
        #expect(!RoomScreenMapper.model(state).stage[0].speaking)
        send(&state, .tick(t0 + 8_000))
        #expect(RoomScreenMapper.model(state).stage[0].level == 0)
        #expect(state.meters.isEmpty)
    }

    @Test func nothingToRedrawWhileNothingChanges() {
        var state = joined(as: "hana", peers: [peer("ana", "Ana", .host, muted: false), peer("hana", "Hana")])
        #expect(RoomScreenMapper.nextWakeup(state) == nil)
        send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 100)]), seq: 11, at: t0))
        // While Ana talks her bar stands: nothing to redraw until a level changes.
        #expect(RoomScreenMapper.nextWakeup(state) == nil)
        send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 0)]), seq: 12, at: t0))
        let wake = RoomScreenMapper.nextWakeup(state)
        #expect(wake != nil)
        let first = RoomScreenMapper.model(state)
        // Wakeups fall on frame boundaries: the bar has not lost a cell a frame before.
        send(&state, .tick(wake! - RoomScreenMapper.frameInterval))
        #expect(RoomScreenMapper.model(state).stage == first.stage)
        send(&state, .tick(wake!))
        #expect(RoomScreenMapper.model(state).stage != first.stage)
        send(&state, .tick(t0 + 10_000))
        #expect(RoomScreenMapper.nextWakeup(state) == nil)
    }

    @Test func moderatorsSeeTheQueueOthersTheirPlace() {
        let moderator = RoomScreenMapper.model(joined(as: "bo"))
        #expect(
            moderator.hands
                == .full([
                    .init(position: 1, name: "Eli", waitingSeconds: 252),
                    .init(position: 2, name: "Fay", waitingSeconds: 63),
                    .init(position: 3, name: "Gus", waitingSeconds: 9),
                ]))
        #expect(RoomScreenMapper.model(joined(as: "fay")).hands == .ownPlace(position: 2, total: 3))
        #expect(RoomScreenMapper.model(joined(as: "hana")).hands == .ownPlace(position: nil, total: 3))
    }
}

@Suite struct RoundTripTests {
    @Test func theRoundTripShowsInTheHeader() {
        var state = joined(as: "bo")
        #expect(RoomScreenMapper.model(state).header.connection == .connected(roundTripMilliseconds: nil))
        send(&state, .roundTrip(milliseconds: 18))
        #expect(state.roundTripMilliseconds == 18)
        #expect(RoomScreenMapper.model(state).header.connection == .connected(roundTripMilliseconds: 18))
        #expect(render(state).lines()[0].contains("● connected 18 ms · "))
    }

    @Test func reconnectingForgetsTheOldRoundTrip() {
        var state = joined(as: "bo")
        send(&state, .roundTrip(milliseconds: 18), .server(.reconnecting(attempt: 1), seq: 0, at: t0))
        #expect(state.roundTripMilliseconds == nil)
        #expect(RoomScreenMapper.model(state).header.connection == .reconnecting(attempt: 1))
    }
}

@Suite struct RepeatedNoticeTests {
    static let noMicrophone = "No microphone (“default” not found); using “null”. Choose one with --input NAME."

    func logged(_ state: AppState) -> Int {
        state.log.filter { $0 == .notice(Self.noMicrophone, isError: true) }.count
    }

    /// The sound reopens a missing microphone when the role's audio changes, and each open reports it again: the
    /// event pane keeps it once, as line mode says it once, and the notice above the status line is renewed.
    @Test func theSameNoticeTwiceInARowIsLoggedOnce() {
        var state = joined(as: "ana")
        let effects = send(
            &state, .notice(Notice(.error, Self.noMicrophone), at: t0 + 100),
            .notice(Notice(.error, Self.noMicrophone), at: t0 + 5_000))
        #expect(logged(state) == 1)
        #expect(effects[0] == [.say(Self.noMicrophone)])
        #expect(effects[1] == [])
        #expect(state.notice == Notice(.error, Self.noMicrophone))
        #expect(state.noticeExpires == t0 + 5_000 + AppState.noticeLifetime)
    }

    /// Once the person has done something, the same notice is an answer to it and is logged again.
    @Test func theSameNoticeAfterAKeyIsLoggedAgain() {
        var state = joined(as: "ana")
        send(
            &state, .notice(Notice(.error, Self.noMicrophone), at: t0 + 100), char("m", 200),
            .notice(Notice(.error, Self.noMicrophone), at: t0 + 300))
        #expect(logged(state) == 2)
    }
}
