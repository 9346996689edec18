import RoomApp
import RoomCore
import TermUI
import Testing

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

    @Test func lineModeSaysWhoSpeaksWhenTheSpeakerChanges() {
        var state = lineModeState()
        var seq: UInt64 = 10
        func levels(_ entries: (PeerID, Int)...) -> AppAction {
            seq += 1
            return .server(.speakers(entries.map { SpeakerLevel(peer: $0.0, level: $0.1) }), seq: seq, at: t0)
        }
        #expect(said(send(&state, levels(("ana", 80)))[0]) == ["Ana is speaking."])
        #expect(said(send(&state, levels(("ana", 70)))[0]) == [])
        #expect(said(send(&state, levels(("ana", 40), ("dara", 90)))[0]) == ["Dara is speaking."])
        #expect(said(send(&state, levels())[0]) == [])
        #expect(said(send(&state, levels(("dara", 50)))[0]) == ["Dara is speaking."])
        #expect(said(send(&state, levels(("chen", 60)))[0]) == ["You are speaking."])
        // Bo is muted: a level from a muted peer makes nobody the speaker.
        #expect(said(send(&state, levels(("bo", 90)))[0]) == [])
    }

    @Test func theScreenShowsTheSpeakerInsteadOfSayingIt() {
        var state = joined(as: "chen")
        let effects = send(&state, .server(.speakers([SpeakerLevel(peer: "ana", level: 80)]), seq: 11, at: t0))[0]
        #expect(effects == [])
        #expect(state.activeSpeaker == "ana")
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
        // Leaving before the room was shown is no failure either.
        var early = AppState(roles: roles)
        #expect(send(&early, .interrupted(at: t0))[0] == [.quit])
        #expect(send(&early, .sessionEnded("You left the room.", at: t0))[0] == [.say("You left the room."), .quit])
        #expect(early.failure == nil)
    }

    @Test func lineModeSaysWhyAndEnds() {
        var state = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(roomID: "lobby", topic: "", selfID: "hana", peers: sketchPeers(), seq: 10)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(
            send(&state, .sessionEnded("The room has ended.", at: t0))[0] == [.say("The room has ended."), .quit])
        #expect(state.failure == nil)
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
