import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What people used to vim, htop and weechat expect of a terminal program, on the real room screen in tmux.
@Suite(.ownThread, .serialized) struct TerminalHabitsTests {
    /// Ctrl-Z gives the shell back with the terminal restored; `fg` brings the room back, drawn again, still in
    /// the room.
    @Test(.timeLimit(.minutes(1))) func ctrlZSuspendsAndFgBringsTheRoomBack() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let bot = try room.bot("eli", name: "Eli")
        let tmux = room.tmux
        try room.joinAsHostFromAShell(width: 80, height: 24)

        try tmux.keys("C-z")
        let suspended = eventually(10) {
            let screen = tmux.screen()
            return screen.contains("Stopped") && !screen.contains("you: Ana · host")
        }
        #expect(suspended, "Ctrl-Z did not give the shell back:\n\(tmux.screen())")

        try tmux.keys("fg; echo \"clubroom exited with $?\"", "Enter")
        let back = eventually(10) {
            let screen = tmux.screen()
            return screen.contains("you: Ana · host") && section("Audience", of: screen).contains { $0.contains("Eli") }
        }
        #expect(back, "fg did not bring the room back:\n\(tmux.screen())")
        #expect(!bot.output.contents.contains("\"peer_left\""), "a short suspend must not leave the room")

        try tmux.keys("q")
        #expect(eventually(5) { tmux.screen().contains("Leave the room?") }, "no leave question:\n\(tmux.screen())")
        try tmux.keys("y")
        #expect(eventually(10) { tmux.screen().contains("clubroom exited with 0") }, "\(tmux.screen())")
    }

    /// Ctrl-C asks a host whether to leave, as `q` does; a second Ctrl-C at that question leaves.
    @Test(.timeLimit(.minutes(1))) func aSecondCtrlCAtTheLeaveQuestionLeaves() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let bot = try room.bot("eli", name: "Eli")
        let tmux = room.tmux
        try room.joinAsHost(width: 80, height: 24)
        try tmux.keys("C-c")
        #expect(eventually(5) { tmux.screen().contains("Leave the room?") }, "no leave question:\n\(tmux.screen())")
        try tmux.keys("C-c")
        let left = eventually(10) {
            bot.output.contents.contains("\"peer_left\"") && tmux.screen().contains("clubroom exited with 0")
        }
        #expect(left, "the second Ctrl-C did not leave:\n\(tmux.screen())\n\(bot.output.contents)")
    }

    /// A locale that is not UTF-8 draws ASCII by itself: no Unicode symbol, no curly quote anywhere on screen.
    @Test(.timeLimit(.minutes(1))) func aNonUTF8LocaleDrawsASCII() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        _ = try room.bot("eli", name: "Eli")
        let tmux = room.tmux
        try room.joinAsHost(
            width: 80, height: 24, environment: ["LANG=C", "LC_ALL=C", "LC_CTYPE=C"], shows: "you: Ana | host")
        let screen = tmux.screen()
        #expect(screen.unicodeScalars.allSatisfy { $0.isASCII }, "non-ASCII on an ASCII screen:\n\(screen)")
        try tmux.keys("q")
        try tmux.keys("y")
        #expect(eventually(10) { tmux.screen().contains("clubroom exited with 0") }, "\(tmux.screen())")
    }

    /// The host's `n` shows the invitation pending at once (who, by whom, how long), a second `n` reaches the
    /// next hand, `w` takes the first back, and at 40x12 the status line still starts with the microphone.
    @Test(.timeLimit(.minutes(1))) func invitationsShowPendingAndNReachesTheNextHand() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let eli = try room.bot("eli", name: "Eli")
        let fay = try room.bot("fay", name: "Fay")
        let tmux = room.tmux
        try room.joinAsHost(width: 80, height: 24)
        eli.write(#"{"cmd":"raise_hand"}"#)
        #expect(eventually(10) { section("Raised hands", of: tmux.screen()).contains { $0.contains("1. Eli") } })
        fay.write(#"{"cmd":"raise_hand"}"#)
        #expect(eventually(10) { section("Raised hands", of: tmux.screen()).contains { $0.contains("2. Fay") } })

        try tmux.keys("n")
        let pending = eventually(10) {
            section("Raised hands", of: tmux.screen()).contains { $0.contains("Invited: Eli (by you, 0m0") }
        }
        #expect(pending, "the invitation is not shown pending:\n\(tmux.screen())")
        #expect(eventually(5) { eli.output.contents.contains("\"invited\"") })
        try tmux.keys("n")
        let both = eventually(10) {
            section("Raised hands", of: tmux.screen()).contains {
                $0.contains("Eli (by you") && $0.contains("Fay (by you")
            }
        }
        #expect(both, "the second n did not invite the next hand:\n\(tmux.screen())")

        tmux.resize(width: 40, height: 12)
        let narrow = eventually(5) {
            let lines = tmux.screen().split(separator: "\n", omittingEmptySubsequences: false)
            // The host's microphone is the machine's default: "no mic" where there is none, as on a machine
            // without a sound card.
            return lines.contains { $0.hasPrefix(" mic muted") || $0.hasPrefix(" no mic") }
        }
        #expect(narrow, "at 40x12 the status line lost the microphone:\n\(tmux.screen())")
        tmux.resize(width: 80, height: 24)

        try tmux.keys("/withdraw eli", "Enter")
        let withdrawn = eventually(10) { fay.output.contents.contains("\"invite_withdrawn\"") }
        #expect(withdrawn, "the withdrawal did not reach the room:\n\(tmux.screen())")
        #expect(eventually(5) { tmux.screen().contains("You withdrew the invitation to Eli.") }, "\(tmux.screen())")
    }

    /// The invitation prompt names the microphone speaking will use and shows its live level before the
    /// person accepts (a tone here, as with `--input tone:300`).
    @Test(.timeLimit(.minutes(1))) func theInvitationPromptPreviewsTheMicrophone() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let host = try room.bot("ana", name: "Ana", role: "host")
        let tmux = room.tmux
        try room.joinAsListener(width: 80, height: 24, options: ["--input", "tone:300", "--output", "null"])
        host.write(#"{"cmd":"invite","peer":"hana"}"#)
        #expect(eventually(10) { tmux.screen().contains("Invitation to speak") }, "no prompt:\n\(tmux.screen())")
        let previewed = eventually(10) {
            let line = tmux.screen().split(separator: "\n").first { $0.contains("Microphone tone:300:") } ?? ""
            return !line.contains("opening") && line.contains { "▁▂▃▄▅▆▇█".contains($0) }
        }
        #expect(previewed, "no live level in the prompt:\n\(tmux.screen())")
        #expect(!tmux.screen().contains("no input device"))
        try tmux.keys("d")
        #expect(eventually(10) { host.output.contents.contains("\"invite_declined\"") })
    }

    /// A microphone that cannot open (`--input wav:missing.wav`) is said in the prompt, not drawn as an empty
    /// meter; once the person accepts, the room is told and the stage marks them for everyone.
    @Test(.timeLimit(.minutes(1))) func aMissingMicrophoneIsSaidInThePromptAndMarkedOnTheStage() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let host = try room.bot("ana", name: "Ana", role: "host")
        let tmux = room.tmux
        try room.joinAsListener(
            width: 80, height: 24, options: ["--input", "wav:missing.wav", "--output", "null"])
        host.write(#"{"cmd":"invite","peer":"hana"}"#)
        #expect(eventually(10) { tmux.screen().contains("Invitation to speak") }, "no prompt:\n\(tmux.screen())")
        // Inside the dialog's box (the lines with its border), not only in the event pane behind it.
        let said = eventually(10) {
            tmux.screen().split(separator: "\n").contains { $0.contains("│") && $0.contains("cannot be read") }
        }
        #expect(said, "the prompt does not say why the microphone cannot open:\n\(tmux.screen())")
        try tmux.keys("a")
        let told = eventually(10) {
            host.output.contents.contains(#""event":"mic_changed","peer":"hana","working":false"#)
        }
        #expect(told, "the room was not told:\n\(host.output.contents)")
        let marked = eventually(10) {
            section("Stage", of: tmux.screen()).contains { $0.contains("Hana") && $0.contains("🚫") }
        }
        #expect(marked, "the stage does not mark the microphone:\n\(tmux.screen())")
    }
}
