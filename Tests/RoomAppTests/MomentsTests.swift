import RoomApp
import RoomCore
import TermUI
import Testing

/// The sentences line mode says for these actions, in order.
private func said(_ effects: [[AppEffect]]) -> [String] {
    effects.flatMap { $0 }.compactMap { if case .say(let text) = $0 { text } else { nil } }
}

/// A line-mode state joined as `me` in the sketch's room.
private func lineMode(as me: String) -> AppState {
    var state = AppState(roles: roles, lineMode: true)
    let role = sketchPeers().first { $0.id == PeerID(me) }?.role
    let snapshot = RoomSnapshot(
        roomID: "lobby", topic: "Friday terminal hour", selfID: PeerID(me), peers: sketchPeers(), seq: 10,
        tokenRole: role)
    _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
    return state
}

private func logText(_ state: AppState) -> [String] {
    state.log.map { line in
        switch line {
        case .message(let from, let text, let to): to.map { "\(from) → \($0): \(text)" } ?? "\(from): \(text)"
        case .event(let text): text
        case .notice(let text, _): text
        }
    }
}

/// The keys of a line typed on the screen's command line, then Enter.
private func typed(_ text: String) -> [AppAction] {
    text.map { char($0) } + [key(.enter)]
}

/// Point 1: your own menu holds only what you do to yourself; stepping down asks; you may step back up.
@Suite struct OwnMenuTests {
    @Test func enterEnterOnYourselfNeverMovesYouToTheAudience() {
        var state = joined(as: "ana")
        #expect(state.selection == "ana")
        send(&state, key(.enter))
        guard case .actions(let peer, let items, let selected)? = state.overlay else {
            Issue.record("Enter on yourself opened no menu: \(String(describing: state.overlay))")
            return
        }
        #expect(peer == "ana")
        #expect(items == [.mute, .stepDown], "your own menu holds only what you do to yourself")
        #expect(selected == 0)
        // The second Enter does the first entry, muting yourself: harmless, and undone with m.
        #expect(sent(send(&state, key(.enter))[0]) == [.setMute(true)])
        send(&state, key(.enter), key(.down), key(.enter))
        guard case .confirm? = state.overlay else {
            Issue.record("stepping down from the menu did not ask: \(String(describing: state.overlay))")
            return
        }
    }

    @Test func steppingDownAsksAndUStepsBackUpToTheToken() {
        var state = joined(as: "ana")
        send(&state, char("a"))
        guard case .confirm? = state.overlay else {
            Issue.record("a on yourself did not ask: \(String(describing: state.overlay))")
            return
        }
        #expect(sent(send(&state, char("y"))[0]) == [.stepDown])
        send(&state, .server(.roleChanged("ana", to: .audience, by: "ana", stepUp: .host), seq: 11, at: t0))
        #expect(sent(send(&state, char("u"))[0]) == [.setRole("ana", .host)])
    }
}

/// Point 2: `n` reaches the next hand without an invitation; `w` takes one back.
@Suite struct InvitationQueueTests {
    @Test func nSkipsHandsAlreadyInvitedAndWWithdraws() {
        var state = joined(as: "bo")
        #expect(sent(send(&state, char("n"))[0]) == [.invite("eli")])
        send(&state, .server(.invited("eli", by: "bo", at: t0), seq: 11, at: t0))
        #expect(sent(send(&state, char("n"))[0]) == [.invite("fay")])
        send(&state, .server(.invited("fay", by: "ana", at: t0), seq: 12, at: t0))
        #expect(sent(send(&state, char("n"))[0]) == [.invite("gus")])
        let withdrawn = typed("/withdraw eli").map { reduceApp(&state, $0) }
        #expect(withdrawn.flatMap(sent) == [.withdrawInvite("eli")])
    }

    @Test func theInviterIsToldOfEveryEnd() {
        var state = joined(as: "bo")
        send(
            &state, .server(.invited("eli", by: "bo", at: t0), seq: 11, at: t0),
            .server(.invited("fay", by: "bo", at: t0), seq: 12, at: t0),
            .server(.invited("gus", by: "bo", at: t0), seq: 13, at: t0),
            .server(.inviteDeclined("eli"), seq: 14, at: t0), .server(.inviteExpired("fay"), seq: 15, at: t0),
            .server(.inviteWithdrawn("gus", by: "ana"), seq: 16, at: t0))
        let log = logText(state)
        #expect(log.contains("Eli declined your invitation to speak."))
        #expect(log.contains("Your invitation to Fay lapsed after 2 minutes without an answer."))
        #expect(log.contains("Ana withdrew your invitation to Gus."))
    }
}

/// Point 4: a line starting with / is a command, chat goes to a role, direct messages ring once.
@Suite struct ChatMomentsTests {
    @Test func aMistypedCommandIsAnErrorWithASuggestionNeverChat() {
        var state = lineMode(as: "ana")
        let effects = send(&state, .line("/inivte bea", at: t0))
        #expect(effects.flatMap(sent).isEmpty)
        #expect(said(effects) == ["Unknown command /inivte; did you mean /invite? (/help lists them)."])
    }

    @Test func chatToARoleSaysWhereItWent() {
        var state = lineMode(as: "ana")
        #expect(
            sent(send(&state, .line("/to speakers two minutes left", at: t0))[0]) == [
                .chat("two minutes left", to: .role(.speaker))
            ])
    }

    @Test func aDirectMessageRingsOnceAndCanBeSwitchedOff() {
        var state = joined(as: "hana")
        let dm = ChatMessage(from: "bo", fromName: "Bo", text: "you're next", to: .peer("hana"), sentAt: t0)
        #expect(send(&state, .server(.chat(dm), seq: 11, at: t0))[0].filter { $0 == .bell }.count == 1)
        send(&state, .line("/notify messages off", at: t0))
        #expect(!send(&state, .server(.chat(dm), seq: 12, at: t0))[0].contains(.bell))
    }

    @Test func aNewHandRingsForModeratorsOnly() {
        var host = joined(as: "bo")
        #expect(send(&host, .server(.handRaised("hana", at: t0), seq: 11, at: t0))[0].contains(.bell))
        var listener = joined(as: "ivo")
        #expect(!send(&listener, .server(.handRaised("hana", at: t0), seq: 11, at: t0))[0].contains(.bell))
    }
}

/// Point 6: line mode lets a host run the room.
@Suite struct LineModeHostTests {
    @Test func whoListsTheQueueInOrderWithWaitsAndInvitations() {
        var state = lineMode(as: "ana")
        send(&state, .server(.invited("fay", by: "bo", at: t0 - 12_000), seq: 11, at: t0))
        let effects = send(&state, .line("/who", at: t0))
        #expect(said(effects).count == 1)
        let who = said(effects).first ?? ""
        #expect(
            who.contains(
                "Raised hands, in order: 1. Eli (4m12s), 2. Fay (1m03s, invited by Bo 0m12s ago), 3. Gus (0m09s)."),
            "\(who)")
        #expect(who.contains("Listening (3): Hana, Ivo, Jun."), "\(who)")
    }

    @Test func everyActionIsConfirmedAndNoLineIsSaidTwice() {
        var state = lineMode(as: "ana")
        let invited = send(
            &state, .line("/invite eli", at: t0), .server(.invited("eli", by: "ana", at: t0), seq: 11, at: t0))
        #expect(said(invited) == ["You invited Eli to speak; it lapses in 2 minutes without an answer."])
        let left = send(
            &state, .server(.peerLeft("jun"), seq: 12, at: t0), .sessionEnded("You left the room.", at: t0),
            .sessionEnded("You left the room.", at: t0))
        #expect(said(left) == ["Jun left.", "You left the room."])
    }
}

/// Point 7: on return, only what changed is announced, and a microphone turned off says why.
@Suite struct ReconnectMomentsTests {
    @Test func theReturnAnnouncesOnlyWhatChanged() {
        var state = joined(as: "chen")
        send(&state, .server(.muteChanged("chen", muted: false, by: "chen"), seq: 11, at: t0))
        let before = logText(state).count
        // Back muted (the server mutes everyone who returns), Jun gone, Kai new.
        var peers = sketchPeers().filter { $0.id != "jun" }.map {
            $0.id == "chen" ? peer("chen", "Chen", .speaker, joined: 3) : $0
        }
        peers.append(peer("kai", "Kai", joined: 9))
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: "chen", peers: peers, seq: 40, tokenRole: .speaker)
        send(
            &state, .server(.reconnecting(attempt: 1, retryAt: t0 + 500), seq: 0, at: t0),
            .server(.reconnecting(attempt: 2, retryAt: t0 + 1500), seq: 0, at: t0 + 600),
            .server(.joined(snapshot), seq: 40, at: t0 + 2000), .server(.reconnected, seq: 40, at: t0 + 2000))
        let added = Array(logText(state).dropFirst(before))
        #expect(added.first == "Reconnected. While you were away: Jun is not back yet; Kai joined.", "\(added)")
        #expect(!added.contains { $0.contains("Ana joined") || $0.contains("Bo joined") })
        #expect(added.filter { $0.contains("reconnecting") || $0.contains("next try") }.isEmpty, "\(added)")
        #expect(
            added == [
                "Reconnected. While you were away: Jun is not back yet; Kai joined.",
                "Your microphone was turned off when the connection dropped; press m to talk again.",
            ])
    }
}

/// Issue 27 (M2): after a restart of the server everyone was "left" at once, and nobody was said to come back.
/// Someone missing from the room on return is not back yet; one who rejoins within the grace is back; those still
/// away when it passes have left, said once.
@Suite struct WhoCameBackTests {
    @Test func theMissingAreBackOrGoneOnlyAfterTheGrace() {
        var state = joined(as: "chen")
        let peers = sketchPeers().filter { $0.id != "jun" && $0.id != "ana" }
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: "chen", peers: peers, seq: 40, tokenRole: .speaker)
        let back = send(
            &state, .server(.reconnecting(attempt: 1, retryAt: t0 + 500), seq: 0, at: t0),
            .server(.joined(snapshot), seq: 40, at: t0 + 2000), .server(.reconnected, seq: 40, at: t0 + 2000))
        #expect(said(back).contains("Reconnected. While you were away: Ana and Jun are not back yet."), "\(said(back))")
        #expect(!said(back).contains { $0.contains("left") })
        let ana = send(&state, .server(.peerJoined(peer("ana", "Ana", .host)), seq: 41, at: t0 + 5000))
        #expect(said(ana) == ["Ana is back."])
        #expect(said(send(&state, .tick(t0 + 30_000))).isEmpty)
        #expect(said(send(&state, .tick(t0 + 62_000))) == ["Jun left."])
        #expect(said(send(&state, .tick(t0 + 63_000))).isEmpty)
        #expect(logText(state).suffix(2) == ["Ana is back.", "Jun left."])
        // Someone who comes later is new again.
        #expect(
            said(send(&state, .server(.peerJoined(peer("jun", "Jun")), seq: 42, at: t0 + 70_000))) == ["Jun joined."])
    }
}

/// Issue 27 (M4): back after more than 60 s, "nothing changed" was followed by "You are a listener now." with no
/// reason, and while reconnecting nothing said how long the place is kept.
@Suite struct PlaceKeptTests {
    @Test func reconnectingSaysHowLongThePlaceIsKeptAndALostRoleSaysWhy() {
        var state = joined(as: "chen")
        let dropped = send(&state, .server(.reconnecting(attempt: 1, retryAt: t0 + 500), seq: 0, at: t0))
        #expect(
            said(dropped) == [
                "Connection lost; reconnecting. Your place (role, hand, invitation) is kept 60 s; Ctrl-R tries now."
            ])
        send(&state, .server(.reconnecting(attempt: 2, retryAt: t0 + 40_000), seq: 0, at: t0 + 20_000))
        #expect(
            RoomScreenMapper.model(state).notice?.text
                == "Connection lost; next try in 20\u{A0}s (try 2). Ctrl-R tries now, q gives up; your place is kept "
                + "40\u{A0}s more.")
        send(&state, .tick(t0 + 61_000))
        #expect(
            RoomScreenMapper.model(state).notice?.text.hasSuffix("your place is no longer kept (it is kept 60\u{A0}s).")
                == true)
        // Back after 70 s: the role went with the place.
        let peers = sketchPeers().map { $0.id == "chen" ? peer("chen", "Chen", .audience, joined: 3) : $0 }
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: "chen", peers: peers, seq: 40, tokenRole: .audience)
        let back = send(
            &state, .server(.joined(snapshot), seq: 40, at: t0 + 70_000),
            .server(.reconnected, seq: 40, at: t0 + 70_000))
        #expect(
            said(back) == [
                "Reconnected; nothing changed while you were away.",
                "You were away 70 s, longer than the 60 s a place is kept, so your role went with it. You are a "
                    + "listener now.",
            ], "\(said(back))")
    }
}

/// Issue 27 (M1): a newcomer saw none of the chat the room sent with the join. The pane shows it above the join
/// line, marked as earlier; line mode says the last five, then the join line.
@Suite struct EarlierChatTests {
    func snapshot(_ count: Int) -> RoomSnapshot {
        let chat = (1...count).map { index in
            ChatMessage(from: "ana", fromName: "Ana", text: "line \(index)", sentAt: t0 - 1000 + Timestamp(index))
        }
        return RoomSnapshot(
            roomID: "lobby", topic: "", selfID: "eli", peers: sketchPeers(), recentChat: chat, seq: 10,
            tokenRole: .audience)
    }

    @Test func theScreensPaneShowsTheEarlierChatAboveTheJoinLine() {
        var state = AppState(roles: roles)
        send(&state, .resize(width: 80, height: 24), .server(.joined(snapshot(7)), seq: 10, at: t0))
        let log = logText(state)
        #expect(log.first == "Earlier in the room, before you joined:", "\(log)")
        #expect(Array(log.dropFirst().prefix(7)) == (1...7).map { "Ana: line \($0)" }, "\(log)")
        #expect(log.dropFirst(8).first?.hasPrefix("You joined lobby as Eli (listener).") == true, "\(log)")
    }

    @Test func lineModeSaysTheLastFiveThenTheJoinLine() {
        var state = AppState(roles: roles, lineMode: true)
        let effects = send(&state, .server(.joined(snapshot(7)), seq: 10, at: t0))
        let lines = said(effects)
        #expect(
            Array(lines.prefix(6)) == [
                "Earlier in the room, before you joined (the last 5 of 7 messages):", "  Ana said: line 3",
                "  Ana said: line 4", "  Ana said: line 5", "  Ana said: line 6", "  Ana said: line 7",
            ], "\(lines)")
        #expect(lines.dropFirst(6).first?.hasPrefix("You joined lobby as Eli (listener).") == true, "\(lines)")
        // A room with little said: all of it, without a count.
        var quiet = AppState(roles: roles, lineMode: true)
        let few = said(send(&quiet, .server(.joined(snapshot(2)), seq: 10, at: t0)))
        #expect(
            Array(few.prefix(3)) == [
                "Earlier in the room, before you joined:", "  Ana said: line 1", "  Ana said: line 2",
            ])
    }
}

/// Issue 27 (H2): the screen another terminal took over from still asked a host to confirm leaving ("You are a
/// host. The room goes on without you…") on `q`; it closes at once.
@Suite struct ReplacedScreenTests {
    @Test func qClosesAScreenWhoseSessionIsOverWithoutTheHostsQuestion() {
        var state = joined(as: "ana")
        send(&state, .sessionEnded("You joined this room from somewhere else as the same person.", at: t0))
        #expect(state.overlay == nil)
        let effects = send(&state, char("q")).flatMap { $0 }
        #expect(state.overlay == nil)
        #expect(effects.contains(.quit), "\(effects)")
    }
}

/// Point 8: every notice stays in the event log.
@Suite struct NoticeLogTests {
    @Test func aNoticeIsKeptInTheLog() {
        var state = joined(as: "ivo")
        send(&state, char("n"))
        #expect(logText(state).contains("Only hosts and moderators can invite people to speak."), "\(logText(state))")
    }
}

/// Point 12: one action, one line.
@Suite struct OneActionOneLineTests {
    @Test func movingASpeakerToTheAudienceIsOneLine() {
        var state = joined(as: "ana")
        let before = logText(state).count
        send(
            &state, .server(.roleChanged("chen", to: .audience, by: "ana"), seq: 11, at: t0),
            .server(.muteChanged("chen", muted: true, by: "ana"), seq: 12, at: t0))
        #expect(Array(logText(state).dropFirst(before)) == ["You moved Chen to the audience."])
    }
}
