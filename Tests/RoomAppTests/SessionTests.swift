import RoomCore
import TermUI
import Testing

@testable import RoomApp

/// What the reducer asks of the sound, what line mode says on its own, and how a session ends.
@Suite struct MicrophoneTests {
    func sound(_ effects: [AppEffect]) -> [SoundCommand] {
        effects.compactMap { if case .sound(let command) = $0 { command } else { nil } }
    }

    func joinEffects(as me: String) -> (AppState, [AppEffect]) {
        var state = AppState(roles: roles)
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: PeerID(me), peers: sketchPeers(), seq: 10)
        let effects = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return (state, effects)
    }

    @Test func aListenerJoinsMutedWithTheMicrophoneClosed() {
        let (state, effects) = joinEffects(as: "hana")
        #expect(sound(effects) == [.setMuted(true)])
        #expect(state.microphone == MicrophoneState(open: false, muted: true))
    }

    @Test func aHostJoinsWithTheMicrophoneOpenAsTheServerSaysMutedOrNot() {
        let (state, effects) = joinEffects(as: "ana")
        #expect(sound(effects) == [.setMuted(false), .openMicrophone])
        #expect(effects.last == .sound(.openMicrophone))
        #expect(state.microphone == MicrophoneState(open: true, muted: false))
    }

    @Test func theMicrophoneFollowsTheRoleAndTheMuteTheServerReports() {
        var state = joined(as: "hana")
        #expect(
            sound(send(&state, .server(.roleChanged("hana", to: .speaker, by: "bo"), seq: 11, at: t0))[0]) == [
                .openMicrophone
            ])
        #expect(
            sound(send(&state, .server(.muteChanged("hana", muted: false, by: "hana"), seq: 12, at: t0))[0]) == [
                .setMuted(false)
            ])
        // Someone else's changes, a repeated event and a key ask nothing of the sound.
        #expect(sound(send(&state, .server(.muteChanged("chen", muted: true, by: "ana"), seq: 13, at: t0))[0]) == [])
        #expect(sound(send(&state, .server(.muteChanged("hana", muted: false, by: "hana"), seq: 13, at: t0))[0]) == [])
        #expect(sound(send(&state, char("m"))[0]) == [])
        #expect(
            sound(send(&state, .server(.roleChanged("hana", to: .audience, by: "bo"), seq: 14, at: t0))[0]) == [
                .closeMicrophone
            ])
        #expect(state.microphone == MicrophoneState(open: false, muted: false))
    }

    @Test func aNewRoleTableAndAFreshSnapshotRepeatNothingTheSoundWasAlreadyTold() {
        var state = joined(as: "ana")
        #expect(state.microphone == MicrophoneState(open: true, muted: false))
        #expect(sound(send(&state, .roles(roles))[0]) == [])
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: "ana", peers: sketchPeers(), seq: 20)
        #expect(sound(send(&state, .server(.joined(snapshot), seq: 20, at: t0))[0]) == [])
    }
}

@Suite struct SpeakingTests {
    func lineModeState() -> AppState {
        var state = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: "chen", peers: sketchPeers(), seq: 10)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return state
    }

    func said(_ effects: [AppEffect]) -> [String] {
        effects.compactMap { if case .say(let s) = $0 { s } else { nil } }
    }

    /// Line mode says "X started speaking." once a talk spurt: not again while X goes on (the server repeats a
    /// level only when it changes), nor for a pause shorter than the gap; yes for a spurt after the gap.
    @Test func lineModeSaysWhoStartedSpeakingOnceASpurt() {
        var state = lineModeState()
        var seq: UInt64 = 10
        func levels(_ at: Timestamp, _ entries: (PeerID, Int)...) -> AppAction {
            seq += 1
            return .server(.speakers(entries.map { SpeakerLevel(peer: $0.0, level: $0.1) }), seq: seq, at: t0 + at)
        }
        #expect(said(send(&state, levels(0, ("ana", 80)))[0]) == ["Ana started speaking."])
        #expect(said(send(&state, levels(250, ("ana", 70)))[0]) == [])
        // Two at once: both are talking, Dara is said as she starts.
        #expect(said(send(&state, levels(500, ("ana", 40), ("dara", 90)))[0]) == ["Dara started speaking."])
        #expect(state.talking.keys.sorted() == ["ana", "dara"])
        // Ana pauses for a second (past the hold): her spurt ends; back within the gap, she is not said again.
        #expect(said(send(&state, levels(750, ("ana", 0)))[0]) == [])
        send(&state, .tick(t0 + 750 + talkHold))
        #expect(state.talking.keys.sorted() == ["dara"])
        #expect(said(send(&state, levels(2000, ("ana", 60)))[0]) == [])
        // After a silence longer than the gap, a new spurt is said again.
        #expect(said(send(&state, levels(3000, ("ana", 0)))[0]) == [])
        send(&state, .tick(t0 + 3000 + talkHold))
        #expect(
            said(send(&state, levels(3000 + talkHold + startedSpeakingGap, ("ana", 50)))[0]) == [
                "Ana started speaking."
            ])
        // Your own voice is not announced to you, and a muted peer's level is not talk.
        #expect(said(send(&state, levels(20_000, ("chen", 60)))[0]) == [])
        #expect(said(send(&state, levels(20_100, ("bo", 90)))[0]) == [])
        #expect(state.talking["bo"] == nil)
    }

    /// A talker alone, heard by the sound: each spurt after the gap is said, though nothing was said since the
    /// last "Ana started speaking."; one within the gap is not.
    @Test func lineModeSaysEachSpurtAfterTheGapEvenWithNothingSaidBetween() {
        var state = lineModeState()
        func heard(_ at: Timestamp, talking: Bool) -> [String] {
            said(
                send(&state, .heard([HeardPeer(peer: "ana", level: talking ? 60 : 0, talking: talking)], at: t0 + at))[
                    0])
        }
        #expect(heard(0, talking: true) == ["Ana started speaking."])
        #expect(heard(2000, talking: false) == [])
        #expect(heard(2000 + startedSpeakingGap - 1, talking: true) == [])
        #expect(heard(9000, talking: false) == [])
        #expect(heard(9000 + startedSpeakingGap, talking: true) == ["Ana started speaking."])
        #expect(heard(16_000, talking: false) == [])
        #expect(heard(16_000 + startedSpeakingGap, talking: true) == ["Ana started speaking."])
    }

    /// A talker the server reports ends their spurt when the hold runs out, even when nothing is looked at until
    /// their next spurt starts (line mode has no clock of its own): that spurt, after the gap, is said.
    @Test func aServerReportedSpurtEndsWhenItsHoldRanOut() {
        var state = lineModeState()
        var seq: UInt64 = 10
        func levels(_ at: Timestamp, _ level: Int) -> [String] {
            seq += 1
            return said(
                send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: level)]), seq: seq, at: t0 + at))[0])
        }
        #expect(levels(0, 80) == ["Ana started speaking."])
        #expect(levels(1000, 0) == [])
        #expect(levels(1000 + talkHold + startedSpeakingGap, 60) == ["Ana started speaking."])
        #expect(state.lastSpurtEnded["ana"] == t0 + 1000 + talkHold)
    }

    /// Everyone talking is highlighted at once, and a steady talker stays highlighted (and their bar up) though
    /// the server sends their level only once.
    @Test func theScreenHighlightsEveryoneTalkingAndASteadyTalkerStays() {
        var state = joined(as: "chen")
        let levels = [SpeakerLevel(peer: "ana", level: 80), SpeakerLevel(peer: "dara", level: 60)]
        let effects = send(&state, .server(.speakers(levels), seq: 11, at: t0))[0]
        #expect(effects == [])
        send(&state, .tick(t0 + 10_000))
        let stage = RoomScreenMapper.model(state).stage
        #expect(stage.filter(\.speaking).map(\.name) == ["Ana", "Dara"])
        #expect(stage.first { $0.name == "Ana" }?.level == 75)
        // A pause held shorter than the hold keeps the highlight; longer ends it.
        send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 0)]), seq: 12, at: t0 + 10_000))
        send(&state, .tick(t0 + 10_000 + talkHold - 1))
        #expect(RoomScreenMapper.model(state).stage.filter(\.speaking).map(\.name) == ["Ana", "Dara"])
        send(&state, .tick(t0 + 10_000 + talkHold))
        #expect(RoomScreenMapper.model(state).stage.filter(\.speaking).map(\.name) == ["Dara"])
    }

    /// The people the sound hears are highlighted from its reports (every packet's level), at once, and stop at
    /// once when it says so (it held their pauses already); the server's slower reports do not override them.
    @Test func theSoundsReportsHighlightWhomItHears() {
        var state = joined(as: "chen")
        send(&state, .heard([HeardPeer(peer: "ana", level: 55, talking: true)], at: t0 + 5))
        #expect(state.talking["ana"] == TalkSpurt(since: t0 + 5, lastHeard: t0 + 5, level: 55))
        // A late server report of silence does not end what the sound hears.
        send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 0)]), seq: 11, at: t0 + 300))
        send(&state, .tick(t0 + 5000))
        #expect(state.talking["ana"] != nil)
        send(&state, .heard([HeardPeer(peer: "ana", level: 0, talking: false)], at: t0 + 5100))
        #expect(state.talking["ana"] == nil)
        #expect(state.lastSpurtEnded["ana"] == t0 + 5100)
    }
}

@Suite struct SessionEndTests {
    @Test func afterJoiningTheScreenStaysUpToSayWhy() {
        var state = joined(as: "hana")
        let effects = send(&state, .sessionEnded("You were removed from the room.", at: t0))[0]
        #expect(effects == [.say("You were removed from the room. Press q to close.")])
        #expect(state.notice == Notice(.error, "You were removed from the room. Press q to close."))
        #expect(state.noticeExpires == nil)
        #expect(state.sessionOver)
        #expect(state.failure == nil)
        #expect(RoomScreenMapper.model(state).header.connection == .disconnected)
    }

    @Test func beforeJoiningItIsTheProgramsFailure() {
        var state = AppState(roles: roles)
        let text = "Cannot reach the room: connection refused. Check the address and try again."
        #expect(send(&state, .sessionEnded(text, at: t0))[0] == [.say(text), .quit])
        #expect(state.failure == text)
    }

    @Test func leavingEndsWhenTheSessionSaysGoodbye() {
        var state = joined(as: "hana")
        #expect(send(&state, char("q"))[0] == [.send(.leave), .quit])
        #expect(send(&state, .sessionEnded("You left the room.", at: t0))[0] == [.say("You left the room."), .quit])
        #expect(state.failure == nil)
        // Giving up before the room was shown is the program's failure: the shell is told the room was not joined.
        var early = AppState(roles: roles)
        #expect(send(&early, .interrupted(at: t0))[0] == [.quit])
        #expect(send(&early, .sessionEnded("You left the room.", at: t0))[0] == [.say("You left the room."), .quit])
        #expect(early.failure == "Stopped before the room was joined.")
    }

    @Test func lineModeSaysWhyAndEnds() {
        var state = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: "hana", peers: sketchPeers(), seq: 10)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(
            send(&state, .sessionEnded("The room has ended.", at: t0))[0] == [.say("The room has ended."), .quit])
        #expect(state.failure == nil)
    }

    /// The room's end, with its reason, was just said: the session's closing sentence does not say it again.
    @Test func lineModeSaysTheEndOnce() {
        var state = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: "ana", peers: sketchPeers(), seq: 10)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(
            send(&state, .server(.roomEnded(reason: "thanks all"), seq: 11, at: t0))[0].contains(
                .say("The room has ended: thanks all.")))
        #expect(send(&state, .sessionEnded("The room has ended.", at: t0))[0] == [.quit])
    }

    /// A person removed hears who removed them, then the program ends without a second sentence about it.
    @Test func lineModeSaysARemovalOnce() {
        var state = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: "eli", peers: sketchPeers(), seq: 10)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(
            send(&state, .server(.removed("eli", reason: "", by: "ana"), seq: 11, at: t0))[0].contains(
                .say("Ana removed you from the room.")))
        #expect(send(&state, .sessionEnded("You were removed from the room.", at: t0))[0] == [.quit])
        // A session that ends for another reason still says it.
        var other = AppState(roles: roles, lineMode: true)
        _ = reduceApp(&other, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(
            send(&other, .sessionEnded("The server closed the connection.", at: t0))[0]
                == [.say("The server closed the connection."), .quit])
    }

    @Test func anInterruptionLeavesWithoutAskingEvenAHost() {
        var host = joined(as: "ana")
        #expect(send(&host, .interrupted(at: t0))[0] == [.send(.leave), .quit])
        #expect(host.overlay == nil)
        #expect(host.leaving)
        var over = joined(as: "hana")
        send(&over, .server(.roomEnded(reason: ""), seq: 11, at: t0))
        #expect(send(&over, .interrupted(at: t0))[0] == [.quit])
    }
}
