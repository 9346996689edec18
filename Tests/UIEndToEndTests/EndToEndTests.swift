import Foundation
import RoomTesting
import Testing

/// A real server, a real bot and the real room screen in tmux: the host sees a raised hand, invites it with `n`,
/// and sees the bot arrive on stage; then leaves with `q` (asked first, as a host).
@Suite(.serialized) struct UIEndToEndTests {
    @Test(.timeLimit(.minutes(1))) func hostInvitesARaisedHandOntoTheStage() throws {
        guard let tmuxPath = which("tmux") else {
            Issue.record("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
            return
        }
        let clubroom = try clubroomExecutable()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-ui-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let secret = directory.appendingPathComponent("secret").path
        let tmux = Tmux(tmux: tmuxPath)
        var children: [Child] = []
        defer {
            tmux.kill()
            for child in children { child.stop() }
            try? FileManager.default.removeItem(at: directory)
        }

        let server = try Child(
            clubroom,
            [
                "serve", "--listen", "127.0.0.1:0", "--data", directory.appendingPathComponent("data").path,
                "--secret-file", secret,
            ])
        children.append(server)
        var port = ""
        let listening = eventually(10) {
            guard let range = server.errors.contents.range(of: "listening on ws://127.0.0.1:") else { return false }
            port = String(server.errors.contents[range.upperBound...].prefix(while: \.isNumber))
            return !port.isEmpty
        }
        try #require(listening, "the server did not start: \(server.errors.contents)")
        let url = "ws://127.0.0.1:\(port)/rooms/lobby"

        let token = spawnAndWait(
            clubroom.path,
            [
                "token", "--room", "lobby", "--identity", "eli", "--name", "Eli", "--role", "audience", "--secret-file",
                secret,
            ]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let bot = try Child(clubroom, ["bot", url, "--token", token, "--auto-accept"])
        children.append(bot)
        try #require(eventually(10) { bot.output.contents.contains("\"joined\"") }, "the bot did not join")

        try tmux.start(
            width: 80, height: 24,
            command:
                "\(clubroom.path) join \(url) --secret-file \(secret) --identity ana --name Ana --role host; sleep 30")
        try #require(eventually(10) { tmux.screen().contains("you: Ana · host") }, "no room screen:\n\(tmux.screen())")

        bot.write(#"{"cmd":"raise_hand"}"#)
        let handShown = eventually(10) { section("Raised hands", of: tmux.screen()).contains { $0.contains("1. Eli") } }
        #expect(handShown, "the raised hand did not appear:\n\(tmux.screen())")

        try tmux.keys("n")
        let onStage = eventually(10) {
            let screen = tmux.screen()
            return section("Stage", of: screen).contains { $0.contains("Eli") }
                && section("Raised hands", of: screen).contains { $0.contains("No raised hands") }
        }
        #expect(onStage, "Eli did not arrive on stage:\n\(tmux.screen())")
        #expect(bot.output.contents.contains("\"role_changed\""))

        // A resize redraws at once: below 60 columns the header drops the product name.
        tmux.resize(width: 40, height: 12)
        let redrawn = eventually(5) {
            let lines = tmux.screen().split(separator: "\n", omittingEmptySubsequences: false)
            return lines.first.map { $0.hasPrefix(" lobby") && $0.count <= 40 } ?? false
        }
        #expect(redrawn, "no redraw after resizing:\n\(tmux.screen())")

        try tmux.keys("q")
        #expect(eventually(5) { tmux.screen().contains("Leave the room?") }, "no leave question:\n\(tmux.screen())")
        try tmux.keys("y")
        let left = eventually(10) {
            bot.output.contents.contains("\"peer_left\"") && !tmux.screen().contains("you: Ana")
        }
        #expect(left, "the host did not leave cleanly:\n\(tmux.screen())\n\(bot.output.contents)")
    }
}
