import RoomApp
import RoomCore
import Testing

/// Line mode is as safe as the screen: what the screen asks before doing, line mode asks too, and what the
/// invitation's dialog shows (the microphone check) line mode says.
@Suite struct LineModeSafetyTests {
    private func lineMode(as me: String, topic: String = "Friday terminal hour") -> AppState {
        var state = AppState(roles: roles, lineMode: true)
        let role = sketchPeers().first { $0.id == PeerID(me) }?.role
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: topic, selfID: PeerID(me), peers: sketchPeers(), seq: 10, tokenRole: role)
        _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        return state
    }

    private func line(_ state: inout AppState, _ text: String) -> [AppEffect] {
        reduceApp(&state, .line(text, at: t0))
    }

    @Test func endAsksFirstAndOnlyYesEnds() {
        var host = lineMode(as: "ana")
        let question =
            "End the room? Everyone is disconnected and the room closes for good. This cannot be undone. "
            + "Type yes to end the room, or anything else to cancel."
        #expect(line(&host, "/end thanks all") == [.say(question)])
        #expect(line(&host, "no") == [.say("Cancelled. The room goes on.")])
        #expect(line(&host, "/end thanks all") == [.say(question)])
        #expect(line(&host, "yes") == [.send(.endRoom(reason: "thanks all"))])
    }

    @Test func aHostsLeaveAsksFirstAListenersDoesNot() {
        var host = lineMode(as: "ana")
        #expect(
            line(&host, "/leave") == [
                .say(
                    "Leave the room? You are a host. The room goes on without you; to close it for everyone, use "
                        + "/end instead. Type yes to leave, or anything else to cancel.")
            ])
        #expect(line(&host, "/who") == [.say("Cancelled. You stay in the room.")])
        _ = line(&host, "/leave")
        #expect(line(&host, "Y") == [.send(.leave), .quit])
        var listener = lineMode(as: "hana")
        #expect(line(&listener, "/leave") == [.send(.leave), .quit])
    }

    @Test func steppingDownAsksFirst() {
        var speaker = lineMode(as: "chen")
        let asked = line(&speaker, "/move me audience")
        #expect(asked.count == 1)
        #expect(sent(asked).isEmpty)
        #expect(line(&speaker, "yes") == [.send(.stepDown)])
    }

    @Test func topicAloneAndWhoSayTheTopic() {
        var listener = lineMode(as: "hana")
        #expect(line(&listener, "/topic") == [.say("Topic: \"Friday terminal hour\".")])
        let who = line(&listener, "/who")
        #expect(
            who == [
                .say(
                    "Topic: \"Friday terminal hour\". On stage: Ana (host, live), Bo (mod, muted), Chen (speaker, "
                        + "live), Dara (speaker, live). 3 raised hands. Listening (3): Hana, Ivo, Jun.")
            ])
        var untitled = lineMode(as: "hana", topic: "")
        #expect(line(&untitled, "/topic") == [.say("This room has no topic.")])
        var host = lineMode(as: "ana")
        #expect(line(&host, "/topic Late night") == [.send(.setTopic("Late night"))])
    }

    @Test func theInvitationChecksTheMicrophone() {
        var state = lineMode(as: "hana")
        let invited = reduceApp(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        #expect(
            invited == [
                .say(
                    "Bo invited you to speak. Type /accept or /decline; say something first to check your microphone."),
                .sound(.startPreview),
            ])
        _ = reduceApp(&state, .microphoneName("USB Mic"))
        #expect(reduceApp(&state, .preview(.level(5))).isEmpty)
        #expect(
            reduceApp(&state, .preview(.level(40))) == [.say("Microphone check: your microphone (USB Mic) hears you.")])
        #expect(reduceApp(&state, .preview(.level(60))).isEmpty)
    }

    @Test func aMicrophoneThatCannotOpenIsSaidAndStaysSaid() {
        var state = lineMode(as: "hana")
        _ = reduceApp(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        let why = "microphone wav:missing.wav cannot open: no such file"
        #expect(
            reduceApp(&state, .preview(.unavailable(why))) == [
                .say("Microphone check: your microphone cannot be heard; if you accept, nobody hears you.")
            ])
        // The silence it runs on afterwards does not cover why.
        #expect(reduceApp(&state, .preview(.level(0))).isEmpty)
        #expect(state.preview == .unavailable(why))
    }
}

/// The screen's invitation dialog says a missing microphone cannot open instead of drawing an empty meter.
@Suite struct MicrophonePreviewTests {
    @Test func aMissingDeviceIsNotShownAsWorking() {
        var state = joined(as: "hana")
        _ = reduceApp(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        _ = reduceApp(&state, .preview(.level(0)))
        _ = reduceApp(&state, .microphoneMissing(true))
        guard case .invitation(let invitation) = RoomScreenMapper.model(state).overlay else {
            Issue.record("no invitation dialog")
            return
        }
        #expect(invitation.micProblem == "no microphone could be opened; others would hear silence")
        let why = "microphone wav:missing.wav cannot open: no such file"
        _ = reduceApp(&state, .preview(.unavailable(why)))
        _ = reduceApp(&state, .preview(.level(0)))
        guard case .invitation(let after) = RoomScreenMapper.model(state).overlay else {
            Issue.record("no invitation dialog")
            return
        }
        #expect(after.micProblem == why)
    }
}

/// A person whose microphone does not work is shown so on the stage, for everyone: their client tells the server.
@Suite struct MicrophoneFailureTests {
    @Test func theClientTellsTheServerOncePerChange() {
        var state = joined(as: "chen")
        #expect(sent(reduceApp(&state, .microphoneMissing(true))) == [.setMicWorking(false)])
        // Said once, until the room answers.
        #expect(sent(reduceApp(&state, .tick(t0 + 1000))).isEmpty)
        _ = reduceApp(&state, .server(.micChanged("chen", working: false), seq: 11, at: t0))
        #expect(sent(reduceApp(&state, .microphoneMissing(false))) == [.setMicWorking(true)])
        // A listener's client never says it (its microphone is closed).
        var listener = joined(as: "hana")
        #expect(sent(reduceApp(&listener, .microphoneMissing(true))).isEmpty)
    }

    @Test func theStageMarksThemAndTheEventIsSaid() {
        var state = joined(as: "hana", ascii: true)
        let said = reduceApp(&state, .server(.micChanged("chen", working: false), seq: 11, at: t0))
        #expect(said == [.say("Chen's microphone does not work: nobody hears them.")])
        let stage = RoomScreenMapper.model(state).stage
        #expect(stage.map(\.micFailed) == [false, false, true, false])
        #expect(Narration.who(state).contains("Chen (speaker, live, microphone not working)"))
        let rows = render(state).lines()
        #expect(rows.contains { $0.contains("Chen") && $0.contains("[x]") }, "\(rows)")
        #expect(
            reduceApp(&state, .server(.micChanged("chen", working: true), seq: 12, at: t0)) == [
                .say("Chen's microphone works again.")
            ])
        #expect(RoomScreenMapper.model(state).stage.map(\.micFailed) == [false, false, false, false])
    }
}

/// Mute all, from the screen (`Z`, with a dialog) and from line mode (`/muteall`, with a question).
@Suite struct MuteAllTests {
    @Test func zAsksFirstAndNamesWhoWillBeMuted() {
        var host = joined(as: "ana")
        #expect(reduceApp(&host, .key(.char("Z"), at: t0)).isEmpty)
        #expect(host.overlay == .confirm(.muteAll, confirmSelected: false))
        guard case .confirmation(let question) = RoomScreenMapper.model(host).overlay else {
            Issue.record("no question")
            return
        }
        #expect(question.title == "Mute every speaker?")
        #expect(question.message == "2 people (Chen, Dara) will be muted; each can unmute again. You stay as you are.")
        #expect(sent(reduceApp(&host, .key(.char("y"), at: t0))) == [.muteAll])
    }

    @Test func lineModeAsksAndRefusesWhatTheRoleTableRefuses() {
        var host = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "", selfID: "ana", peers: sketchPeers(), seq: 10, tokenRole: .host)
        _ = reduceApp(&host, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(
            reduceApp(&host, .line("/muteall", at: t0)) == [
                .say(
                    "Mute every speaker? 2 people (Chen, Dara) will be muted; each can unmute again. You stay as you "
                        + "are. Type yes to mute them, or anything else to cancel.")
            ])
        #expect(reduceApp(&host, .line("yes", at: t0)) == [.send(.muteAll)])
        var speaker = joined(as: "chen")
        #expect(
            reduceApp(&speaker, .line("/muteall", at: t0)) == [
                .say("Only hosts and moderators can mute the speakers.")
            ])
        var quiet = joined(
            as: "ana",
            peers: sketchPeers().map {
                var p = $0; p.muted = p.id != "ana"; return p
            })
        #expect(
            reduceApp(&quiet, .key(.char("Z"), at: t0)) == [
                .say("Everyone on the stage you may mute is muted already.")
            ]
        )
    }
}

/// Hand controls from the screen (`L`, `C`, the actions menu) and line mode (`/lower NAME`, `/clearhands`).
@Suite struct HandControlTests {
    @Test func lLowersTheSelectedHandAndCAsksBeforeClearingTheQueue() {
        var moderator = joined(as: "bo")
        send(&moderator, key(.down), key(.down))
        #expect(moderator.selection == "eli")
        #expect(sent(send(&moderator, char("L"))[0]) == [.lowerHandOf("eli")])
        #expect(send(&moderator, char("C"))[0].isEmpty)
        guard case .confirmation(let question) = RoomScreenMapper.model(moderator).overlay else {
            Issue.record("no question")
            return
        }
        #expect(question.title == "Lower every raised hand?")
        #expect(
            question.message == "3 raised hands go down and the queue starts again; anyone can raise their hand again.")
        #expect(sent(send(&moderator, char("y"))[0]) == [.clearHands])
        var listener = joined(as: "hana")
        send(&listener, char("C"))
        #expect(listener.overlay == nil)
        #expect(listener.notice?.text == "Only hosts and moderators can clear the raised hands.")
    }

    @Test func lineModeLowersByNameAndAsksBeforeClearing() {
        var host = AppState(roles: roles, lineMode: true)
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "", selfID: "ana", peers: sketchPeers(), seq: 10, tokenRole: .host)
        _ = reduceApp(&host, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(reduceApp(&host, .line("/lower fay", at: t0)) == [.send(.lowerHandOf("fay"))])
        #expect(reduceApp(&host, .line("/lower chen", at: t0)) == [.say("Chen's hand is not raised.")])
        #expect(
            reduceApp(&host, .line("/clearhands", at: t0)) == [
                .say(
                    "Lower every raised hand? 3 raised hands go down and the queue starts again; anyone can raise "
                        + "their hand again. Type yes to lower them, or anything else to cancel.")
            ])
        #expect(reduceApp(&host, .line("no", at: t0)) == [.say("Cancelled. The raised hands stay in order.")])
        #expect(
            reduceApp(&host, .server(.handLowered("eli", by: "bo"), seq: 11, at: t0)) == [
                .say("Bo lowered Eli's hand.")
            ])
    }
}
