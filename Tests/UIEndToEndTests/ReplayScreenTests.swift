import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A 30-second room: Ana and Bea on the stage, Ana talking for the first 9 seconds, Bea from 10 s to 20 s.
private let recordText = """
    {"version":1,"room":"jazz","topic":"Late sets","started":"2026-12-06T05:00:00Z","duration_ms":30000,
     "complete":true,
     "people":[{"peer":"p1","name":"Ana","role":"host"},{"peer":"p2","name":"Bea","role":"speaker"},
               {"peer":"p3","name":"Cy","role":"audience"}],
     "events":[{"at_ms":0,"kind":"stage","peer":"p1","role":"host"},
               {"at_ms":0,"kind":"stage","peer":"p2","role":"speaker"},
               {"at_ms":0,"kind":"talk","peer":"p1","end_ms":9000},
               {"at_ms":4000,"kind":"chat","peer":"p3","name":"Cy","text":"hello from the back"},
               {"at_ms":10000,"kind":"talk","peer":"p2","end_ms":20000}]}
    """

/// `clubroom replay` on the real terminal, in tmux: the stage as recorded, the highlight moving with the talk,
/// space pausing, the arrows seeking, and q and Ctrl-C leaving the terminal as it was.
@Suite(.ownThread, .serialized) struct ReplayScreenTests {
    /// The stage row that shows `name` (the first row of the Stage section holds both people, side by side).
    private func stageText(_ screen: String) -> String {
        section("Stage", of: screen).joined(separator: "\n")
    }

    /// Whether `name` is drawn as talking: its level bar shows beside it on the stage.
    private func isTalking(_ name: String, in screen: String) -> Bool {
        for line in section("Stage", of: screen) {
            guard let range = line.range(of: name) else { continue }
            let after = line[range.upperBound...].prefix(14)
            return after.contains("▃") || after.contains("▅") || after.contains("▇")
        }
        return false
    }

    @Test(.timeLimit(.minutes(2))) func theScreenReplaysTheRoomAndGivesTheTerminalBack() throws {
        guard let tmuxPath = which("tmux") else { return }
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let opus = folder.file("jazz.opus")
        try RecordingFixture.toneOpus(at: opus, seconds: 30)
        try RecordingFixture.writeRecord(recordText, besides: opus)
        let tmux = Tmux(tmux: tmuxPath)
        defer { tmux.kill() }
        try tmux.start(width: 80, height: 24, command: "env PS1='shell$ ' bash --norc --noprofile -i")
        try #require(eventually(10) { tmux.screen().contains("shell$") }, "no shell:\n\(tmux.screen())")
        let command = "\(try clubroomExecutable().path) replay \(opus) --output null"
        try tmux.keys(
            "stty -g > \(folder.file("before")); \(command); echo \"replay exited with $?\"; "
                + "stty -g > \(folder.file("after")); cmp -s \(folder.file("before")) \(folder.file("after")) "
                + "&& echo 'terminal as before'",
            "Enter")
        try #require(
            eventually(10) { tmux.screen().contains("Replay · jazz — \"Late sets\"") }, "no replay:\n\(tmux.screen())")
        var screen = tmux.screen()
        #expect(stageText(screen).contains("★ Ana (host)") && stageText(screen).contains("Bea"), "\(screen)")
        #expect(section("Audience", of: screen).contains { $0.contains("Cy") }, "\(screen)")
        #expect(eventually(5) { isTalking("Ana", in: tmux.screen()) }, "Ana is not shown talking:\n\(tmux.screen())")
        #expect(!isTalking("Bea", in: tmux.screen()))
        #expect(eventually(10) { tmux.screen().contains("hello from the back") }, "no chat:\n\(tmux.screen())")

        // Space pauses: the position line says so and stops moving.
        try tmux.keys("Space")
        #expect(eventually(5) { tmux.screen().contains("paused") }, "\(tmux.screen())")
        let pausedAt = tmux.screen().split(separator: "\n").last { $0.contains("paused") }.map(String.init)
        usleep(1_500_000)
        #expect(tmux.screen().split(separator: "\n").last { $0.contains("paused") }.map(String.init) == pausedAt)

        // → seeks 10 s on: Bea talks there, Ana does not.
        try tmux.keys("Right")
        let moved = eventually(5) {
            let now = tmux.screen()
            return isTalking("Bea", in: now) && !isTalking("Ana", in: now)
        }
        #expect(moved, "the highlight did not move to Bea:\n\(tmux.screen())")
        screen = tmux.screen()
        #expect(screen.contains("paused 00:1"), "\(screen)")
        try tmux.keys("Space")
        #expect(eventually(5) { tmux.screen().contains("playing 00:1") }, "\(tmux.screen())")

        try tmux.keys("q")
        #expect(
            eventually(10) {
                tmux.screen().contains("replay exited with 0") && tmux.screen().contains("terminal as before")
            },
            "\(tmux.screen())")
        #expect(!tmux.screen().contains("Replay · jazz"))

        // Ctrl-C leaves the same way.
        try tmux.keys("clear; \(command); echo \"second replay exited with $?\"", "Enter")
        try #require(eventually(10) { tmux.screen().contains("Replay · jazz") }, "no replay:\n\(tmux.screen())")
        try tmux.keys("C-c")
        #expect(eventually(10) { tmux.screen().contains("second replay exited with 0") }, "\(tmux.screen())")
        #expect(!tmux.screen().contains("Replay · jazz"))
    }
}
