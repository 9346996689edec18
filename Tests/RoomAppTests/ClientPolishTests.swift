import RoomApp
import RoomCore
import TermUI
import Testing

/// A device's trouble is said once per change of the device: on the screen once at a time (the notice row, or
/// the event pane once the notice has gone, or the invitation dialog), and to the room once it is known.
@Suite struct DeviceWarningsSaidOnceTests {
    static let noMicrophone =
        "No microphone (“missing.wav” unusable); using “null”. Choose one with --input NAME (see clubroom "
        + "devices). Details: missing.wav: cannot be read."

    /// The rows of a 50x16 screen that say the microphone is missing.
    static func saying(_ state: AppState) -> [String] {
        render(state, width: 50, height: 16).lines().filter { $0.contains("No microphone") }
    }

    @Test func aDeviceNoticeStandsOnTheScreenOnce() {
        var state = joined(as: "ana", width: 50, height: 16)
        _ = reduceApp(&state, .notice(Notice(.error, Self.noMicrophone), at: t0 + 100))
        // On the notice row, not a second time in the event pane beneath it.
        #expect(Self.saying(state).count == 1, "\(render(state, width: 50, height: 16).lines())")
        #expect(RoomScreenMapper.model(state).notice?.text == Self.noMicrophone)
        // Once the notice has gone, the event pane shows it, once.
        _ = reduceApp(&state, .tick(t0 + 100 + AppState.noticeLifetime))
        #expect(RoomScreenMapper.model(state).notice == nil)
        #expect(Self.saying(state).count == 1, "\(render(state, width: 50, height: 16).lines())")
        // Line mode says it once.
        var plain = AppState(roles: roles, lineMode: true)
        #expect(reduceApp(&plain, .notice(Notice(.error, Self.noMicrophone), at: t0)) == [.say(Self.noMicrophone)])
    }

    @Test func theInvitationDialogSaysWhyTheMicrophoneCannotOpenInsteadOfTheNoticeRow() {
        var state = joined(as: "hana")
        _ = reduceApp(&state, .server(.invited("hana", by: "bo", at: t0), seq: 11, at: t0))
        _ = reduceApp(&state, .notice(Notice(.error, Self.noMicrophone), at: t0 + 10))
        _ = reduceApp(&state, .preview(.unavailable(Self.noMicrophone)))
        let model = RoomScreenMapper.model(state)
        guard case .invitation(let invitation) = model.overlay else {
            Issue.record("no invitation dialog")
            return
        }
        #expect(invitation.micProblem == Self.noMicrophone)
        #expect(model.notice == nil)
        // Once answered, the notice row may say what is new again.
        _ = reduceApp(&state, char("d", 20))
        #expect(RoomScreenMapper.model(state).overlay == nil)
    }

    /// A room that still shows the person's microphone as not working (from their last session, or their other
    /// terminal) is not told it works before the sound has tried it: no "works again" then "does not work" for a
    /// device that never changed.
    @Test func theRoomIsNotToldTheMicrophoneWorksBeforeItIsTried() {
        var peers = sketchPeers()
        peers[2].micWorking = false
        var state = AppState(roles: roles)
        _ = reduceApp(&state, .resize(width: 80, height: 24))
        let snapshot = RoomSnapshot(
            roomID: "lobby", topic: "", selfID: "chen", peers: peers, seq: 10, tokenRole: .speaker)
        let joining = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
        #expect(sent(joining).isEmpty)
        // The microphone is still missing: nothing to tell.
        #expect(sent(reduceApp(&state, .microphoneMissing(true))).isEmpty)
        // It opens: now the room hears it works.
        #expect(sent(reduceApp(&state, .microphoneMissing(false))) == [.setMicWorking(true)])
    }
}

/// `clubroom demo`'s room runs inside the program: its dialogs say what really happens next there.
@Suite struct DemoDialogTests {
    static func demoHost() -> AppState {
        var state = joined(as: "ana")
        state.inDemo = true
        return state
    }

    @Test func leavingTheDemoSaysTheRoomEndsWithIt() {
        var state = Self.demoHost()
        _ = reduceApp(&state, char("q"))
        #expect(state.overlay == .confirm(.leave, confirmSelected: false))
        let question = confirmationText(.leave, in: state)
        #expect(question.title == "Leave the demo?")
        #expect(
            question.message
                == "The room runs inside this program: leaving ends it for everyone, and the demo with it.")
        // Elsewhere a host's room goes on without them, as it says.
        #expect(confirmationText(.leave, in: joined(as: "ana")).title == "Leave the room?")
    }

    @Test func stoppingARecordingInTheDemoSaysItIsDeletedWhenTheDemoEnds() {
        let question = confirmationText(.stopRecording, in: Self.demoHost())
        #expect(
            question.message
                == "What the room says from now on is not kept; what was recorded until now is kept until the demo "
                + "ends, which deletes it. Recording again starts a new file.")
        #expect(
            confirmationText(.stopRecording, in: joined(as: "ana")).message
                == "What the room says from now on is not kept; what was recorded until now is. Recording again "
                + "starts a new file.")
    }
}

/// Every refusal a person reads is a sentence: it starts with a capital (or a quote or a slash command) and ends
/// with a full stop, and it speaks no wire names (error codes, snake_case fields).
@Suite struct RefusalWordingTests {
    static func problems(in text: String) -> [String] {
        var found: [String] = []
        if let first = text.first, first.isLetter, !first.isUppercase { found.append("starts in lowercase") }
        if let last = text.last, !".?!".contains(last) { found.append("has no full stop") }
        let codes = [
            "forbidden", "not_found", "conflict", "bad_request", "rate_limited", "room_ended", "room_full",
            "internal", "unconfirmed", "already_applied", "not_saved", "invalid_json", "unknown_type",
        ]
        let words = text.split { !$0.isLetter && $0 != "_" }.map(String.init)
        for code in codes where words.contains(code) { found.append("says the wire name \(code)") }
        for word in words where word.contains("_") { found.append("says the wire name \(word)") }
        return found
    }

    /// Every key a listener, or a host of a room with no raised hand, may press in the room view, and every
    /// command a listener may type, on the screen and in line mode: whatever the notice says.
    @Test(arguments: [false, true]) func theClientsOwnRefusalsAreSentences(lineMode: Bool) {
        let keys = "abcdefghijklmnoprstuvwxyzABCDEFGHIJKLMNOPRSTUVWXYZ+-=0123456789"
        let handsDown = sketchPeers().filter { $0.handRaisedAt == nil }
        for key in keys {
            for state in [
                joined(as: "hana", lineMode: lineMode), joined(as: "ana", peers: handsDown, lineMode: lineMode),
            ] {
                var state = state
                _ = reduceApp(&state, char(key))
                guard let notice = state.notice else { continue }
                #expect(
                    Self.problems(in: notice.text).isEmpty, "\(key): \(notice.text) \(Self.problems(in: notice.text))")
            }
        }
        let commands = [
            "/invite eli", "/withdraw eli", "/move eli speaker", "/move me host", "/mute chen", "/remove gus",
            "/ban gus", "/end", "/topic jazz", "/record", "/record stop", "/stream", "/stream stop tv",
            "/lower eli", "/clearhands", "/muteall", "/link speaker", "/links", "/bans", "/list", "/unlist",
            "/accept", "/decline", "/unmute", "/volume hana 50", "/volume zed 50", "/inivte eli", "/to zeds hi",
            "/dm zed hi", "/next", "/stats", "/lock", "/hands off", "/play", "/stop", "/react dance", "/notify x",
        ]
        for command in commands {
            var state = joined(as: "hana", lineMode: lineMode)
            _ = reduceApp(&state, .line(command, at: t0))
            guard let notice = state.notice else { continue }
            #expect(
                Self.problems(in: notice.text).isEmpty, "\(command): \(notice.text) \(Self.problems(in: notice.text))")
        }
    }

    /// A sentence that starts with someone's name keeps the name as they wrote it.
    @Test func aNameStartingANoticeIsNotCapitalised() {
        var state = joined(as: "ana", peers: sketchPeers() + [peer("eve", "eve", .speaker, muted: false)])
        _ = reduceApp(&state, .line("/volume eve 50", at: t0))
        #expect(state.notice?.text == "eve now sounds at 50 % to you.")
        _ = reduceApp(&state, .line("/invite eve", at: t0))
        #expect(state.notice?.text == "eve is already on the stage.")
    }

    /// The server's refusals come as clauses ("only hosts can end the room"); the client says each as a sentence,
    /// with what to do next, and never the error's code.
    @Test func theServersRefusalsAreSaidAsSentences() {
        let codes = [
            "forbidden", "not_found", "conflict", "bad_request", "rate_limited", "room_ended", "room_full",
            "internal", "unconfirmed", "already_applied", "not_saved", "some_new_code",
        ]
        for code in codes {
            for message in ["", "only hosts can end the room", "Eli is already on the stage."] {
                let said = Narration.explainError(code: code, message: message)
                #expect(
                    Self.problems(in: said).isEmpty && !said.contains(code),
                    "\(code) \(message): \(said) \(Self.problems(in: said))")
            }
        }
        // As the screen and line mode show it.
        var state = joined(as: "bo")
        let effects = reduceApp(
            &state, .server(.error(code: "forbidden", message: "only hosts can end the room"), seq: 11, at: t0))
        #expect(effects == [.say("Only hosts can end the room.")])
        #expect(state.notice?.text == "Only hosts can end the room.")
    }
}
