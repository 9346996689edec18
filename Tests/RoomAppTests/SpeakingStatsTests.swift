import RoomApp
import RoomCore
import RoomTesting
import TermUI
import Testing

/// `/stats` and the screen's `s`: each person's speaking time and turns, for hosts and moderators.
@Suite struct SpeakingStatsTests {
    let answer = [
        SpeakingStat(peer: "chen", name: "Chen", milliseconds: 125_900, turns: 7, talking: true),
        SpeakingStat(peer: "ana", name: "Ana", milliseconds: 40_000, turns: 2, talking: false),
        SpeakingStat(peer: "dara", name: "Dara", milliseconds: 4_999, turns: 1, talking: false),
    ]

    func lineMode(as me: String) -> AppState {
        var state = AppState(roles: roles, lineMode: true)
        let role = sketchPeers().first { $0.id == PeerID(me) }?.role
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "t", selfID: PeerID(me), peers: sketchPeers(), seq: 10, tokenRole: role)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return state
    }

    @Test func timesAreMinutesAndSecondsCutDown() {
        #expect(SpeakingTable.clock(milliseconds: 0) == "0:00")
        #expect(SpeakingTable.clock(milliseconds: 4_999) == "0:04")
        #expect(SpeakingTable.clock(milliseconds: 125_900) == "2:05")
        #expect(SpeakingTable.clock(milliseconds: 3_725_000) == "62:05")
        #expect(SpeakingTable.turns(1) == "1 turn")
        #expect(SpeakingTable.turns(0) == "0 turns")
    }

    @Test func lineModeSaysATableWhenTheAnswerComes() {
        var state = lineMode(as: "bo")
        #expect(reduceApp(&state, .line("/stats", at: t0)) == [.send(.stats)])
        #expect(
            reduceApp(&state, .server(.stats(answer), seq: 0, at: t0 + 50)) == [
                .say("Speaking time since the room went live, most first:"),
                .say("  Chen  2:05  7 turns  talking"),
                .say("  Ana   0:40  2 turns"),
                .say("  Dara  0:04  1 turn"),
            ])
        #expect(state.overlay == nil)
    }

    @Test func lineModeSaysWhenNoOneHasSpoken() {
        var state = lineMode(as: "ana")
        _ = reduceApp(&state, .line("/stats", at: t0))
        #expect(
            reduceApp(&state, .server(.stats([]), seq: 0, at: t0))
                == [.say("No one has spoken since the room went live.")])
    }

    @Test func aListenerOrSpeakerIsToldWhyNotAndNothingIsSent() {
        for person in ["hana", "chen"] {
            var state = lineMode(as: person)
            #expect(
                reduceApp(&state, .line("/stats", at: t0))
                    == [.say("Only hosts and moderators can see how long each person has spoken.")])
            var screen = joined(as: person)
            let effects = send(&screen, char("s"))[0]
            #expect(sent(effects).isEmpty)
            #expect(screen.overlay == nil)
            #expect(screen.notice?.text == "Only hosts and moderators can see how long each person has spoken.")
        }
    }

    @Test func sOpensThePanelAsksAgainEveryTwoSecondsAndClosesAgain() {
        var state = joined(as: "bo")
        #expect(sent(send(&state, char("s"))[0]) == [.stats])
        #expect(state.overlay == .stats(people: nil, askedAt: t0))
        send(&state, .server(.stats(answer), seq: 0, at: t0 + 100))
        #expect(state.overlay == .stats(people: answer, askedAt: t0))
        #expect(sent(send(&state, .tick(t0 + 1_999))[0]).isEmpty)
        #expect(sent(send(&state, .tick(t0 + 2_000))[0]) == [.stats])
        #expect(sent(send(&state, .tick(t0 + 3_000))[0]).isEmpty)
        // Keys behind the panel do nothing; s closes it, and nothing is asked any more.
        #expect(sent(send(&state, char("m", 3_100))[0]).isEmpty)
        send(&state, char("s", 3_200))
        #expect(state.overlay == nil)
        #expect(sent(send(&state, .tick(t0 + 9_000))[0]).isEmpty)
        // /stats on the command line opens it too, and Esc closes it.
        send(&state, char("/", 9_100))
        for c in "stats" { send(&state, char(c, 9_100)) }
        #expect(sent(send(&state, key(.enter, 9_100))[0]) == [.stats])
        #expect(state.overlay == .stats(people: nil, askedAt: t0 + 9_100))
        send(&state, key(.escape, 9_200))
        #expect(state.overlay == nil)
    }

    @Test func anAnswerWithThePanelClosedChangesNothing() {
        var state = joined(as: "bo")
        send(&state, .server(.stats(answer), seq: 0, at: t0))
        #expect(state.overlay == nil)
    }

    @Test func thePanelClosesWhenThePersonMayNoLongerSeeIt() {
        var state = joined(as: "bo")
        send(&state, char("s"), .server(.roleChanged("bo", to: .speaker, by: "ana"), seq: 11, at: t0 + 500))
        #expect(sent(send(&state, .tick(t0 + 2_500))[0]).isEmpty)
        #expect(state.overlay == nil)
    }

    @Test func thePanelOnTheScreen() {
        var state = joined(as: "bo")
        send(&state, char("s"))
        expectGolden("stats-asking-80x24", render(state))
        send(&state, .server(.stats(answer), seq: 0, at: t0 + 100))
        expectGolden("stats-80x24", render(state))
    }

    @Test func thePanelInASCIIOnASmallScreen() {
        var state = joined(as: "bo", ascii: true, width: 40, height: 8)
        send(&state, char("s"), .server(.stats(answer + answer), seq: 0, at: t0 + 100))
        expectGolden("stats-ascii-40x8", render(state, width: 40, height: 8))
    }

    @Test func thePanelSaysWhenNoOneHasSpoken() {
        var state = joined(as: "ana")
        send(&state, char("s"), .server(.stats([]), seq: 0, at: t0 + 100))
        #expect(
            StatsOverlay(SpeakingTable(rows: [])).lines == ["No one has spoken since the room went live."])
        #expect(render(state).lines().contains { $0.contains("│ No one has spoken since the room went live. │") })
    }
}

extension SpeakingStatsTests {
    /// The screen's loop ticks only when `nextWakeup` says: in a quiet room the open panel must wake it.
    @Test func theOpenPanelWakesTheScreenForItsNextQuestion() {
        var state = joined(as: "bo", peers: [peer("ana", "Ana", .host, joined: 1), peer("bo", "Bo", .moderator)])
        #expect(RoomScreenMapper.nextWakeup(state) == nil)
        send(&state, char("s"))
        #expect(RoomScreenMapper.nextWakeup(state) == t0 + statsRefreshInterval)
        send(&state, .server(.stats([]), seq: 0, at: t0 + 300))
        #expect(RoomScreenMapper.nextWakeup(state) == t0 + statsRefreshInterval)
        #expect(sent(send(&state, .tick(t0 + statsRefreshInterval))[0]) == [.stats])
        #expect(RoomScreenMapper.nextWakeup(state) == t0 + 2 * statsRefreshInterval)
        send(&state, char("s", 4_100))
        #expect(RoomScreenMapper.nextWakeup(state) == nil)
    }
}
