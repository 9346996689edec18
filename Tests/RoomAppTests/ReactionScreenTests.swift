import RoomApp
import RoomCore
import RoomTesting
import Testing

@testable import TermUI

/// Reactions on the screen (a mark beside the name for a few seconds), in line mode (said in aggregate, at most
/// once every few seconds) and from the command line (`/react NAME`).
@Suite struct ReactionScreenTests {
    let applause = ReactionBurst(
        counts: [.init(.clap, 3), .init(.heart, 1)],
        senders: [.init("ana", .clap), .init("hana", .clap), .init("ivo", .clap), .init("chen", .heart)])

    private func lineMode(as me: String) -> AppState {
        var state = AppState(roles: roles, lineMode: true)
        let role = sketchPeers().first { $0.id == PeerID(me) }?.role
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "Friday terminal hour", selfID: PeerID(me), peers: sketchPeers(), seq: 10,
            tokenRole: role)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return state
    }

    private func said(_ effects: [AppEffect]) -> [String] {
        effects.compactMap { if case .say(let text) = $0 { text } else { nil } }
    }

    @Test func marksShowBesideTheNamesThenGo() {
        var state = joined(as: "bo")
        send(&state, .server(.reaction(applause), seq: 0, at: t0 + 500))
        expectGolden("reactions-80x24", render(state))
        var ascii = joined(as: "bo", ascii: true)
        send(&ascii, .server(.reaction(applause), seq: 0, at: t0 + 500))
        expectGolden("reactions-ascii-80x24", render(ascii))
        // The screen wakes when the marks are due to go (they were shown from the room's last tick, t0).
        var listener = joined(as: "jun")
        let before = RoomScreenMapper.nextWakeup(listener)
        send(&listener, .server(.reaction(applause), seq: 0, at: t0 + 500))
        #expect(before == nil)
        #expect(RoomScreenMapper.nextWakeup(listener) == t0 + ShownReactions.lifetime)
        // Still there just before the lifetime is over, gone after it.
        send(&state, .tick(t0 + ShownReactions.lifetime - 1))
        #expect(state.room.reactionMark(of: "ana") == .clap)
        send(&state, .tick(t0 + ShownReactions.lifetime + 1_000))
        #expect(state.room.reactionMark(of: "ana") == nil)
        #expect(state.room.reactions.isEmpty)
        // Then the screen is what it is without them.
        var quiet = joined(as: "bo")
        send(&quiet, .tick(t0 + ShownReactions.lifetime + 1_000))
        #expect(render(state).lines() == render(quiet).lines())
    }

    @Test func lineModeSaysReactionsTogetherAndNotTooOften() {
        var state = lineMode(as: "jun")
        #expect(
            said(send(&state, .server(.reaction(applause), seq: 0, at: t0 + 1_000))[0])
                == ["3 people clapped. Chen sent a heart."])
        let one = ReactionBurst(counts: [.init(.laugh, 1)], senders: [.init("eli", .laugh)])
        // Within the pause, nothing more is said.
        #expect(said(send(&state, .server(.reaction(one), seq: 0, at: t0 + 3_000))[0]).isEmpty)
        #expect(said(send(&state, .server(.reaction(one), seq: 0, at: t0 + 6_000))[0]) == ["Eli laughed."])
        let mine = ReactionBurst(counts: [.init(.wave, 1)], senders: [.init("jun", .wave)])
        #expect(said(send(&state, .server(.reaction(mine), seq: 0, at: t0 + 12_000))[0]) == ["You waved."])
    }

    @Test func theReactCommandSendsOne() {
        var state = lineMode(as: "jun")
        #expect(send(&state, .line("/react clap", at: t0))[0] == [.send(.react(.clap))])
        #expect(send(&state, .line("/react <3", at: t0))[0] == [.send(.react(.heart))])
        #expect(
            said(send(&state, .line("/react boo", at: t0))[0])
                == ["No reaction \"boo\"; reactions: clap, up, haha, heart, wave."])
    }
}
