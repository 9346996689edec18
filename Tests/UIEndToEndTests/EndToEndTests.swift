import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real server, a real bot and the real room screen in tmux.
@Suite(.ownThread, .serialized) struct UIEndToEndTests {
    /// The host sees a raised hand, invites it with `n`, and sees the bot arrive on stage; then leaves with `q`
    /// (asked first, as a host).
    @Test(.timeLimit(.minutes(1))) func hostInvitesARaisedHandOntoTheStage() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let bot = try room.bot("eli", name: "Eli", extra: ["--auto-accept"])
        let tmux = room.tmux
        try room.joinAsHost(width: 80, height: 24)

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
        #expect(eventually(5) { tmux.screen().contains("clubroom exited with 0") }, "\(tmux.screen())")
    }

    /// SIGTERM leaves the room without the host's question, gives the terminal back and exits 0.
    @Test(.timeLimit(.minutes(1))) func sigtermLeavesTheRoomAndGivesTheTerminalBack() throws {
        guard let room = try UIRoom() else { return }
        defer { room.close() }
        let bot = try room.bot("eli", name: "Eli")
        let tmux = room.tmux
        try room.joinAsHost(width: 80, height: 24)
        let client = try #require(tmux.paneChild(), "no clubroom process in the pane")
        kill(client, SIGTERM)
        let left = eventually(10) {
            bot.output.contents.contains("\"peer_left\"") && tmux.screen().contains("clubroom exited with 0")
        }
        #expect(left, "the host did not leave cleanly:\n\(tmux.screen())\n\(bot.output.contents)")
        #expect(!tmux.screen().contains("you: Ana"), "the room screen is still up:\n\(tmux.screen())")
        #expect(!tmux.screen().contains("Leave the room?"))
    }
}

/// A server on a free port with its own folder and secret, bots, and a tmux of the test's own; `close()` ends all.
final class UIRoom {
    let clubroom: URL
    let directory: URL
    let secret: String
    let tmux: Tmux
    let url: String
    private var children: [Child] = []

    /// Starts the server, with `serveArguments` added to `serve`'s; nil (with the test failed) when tmux is missing.
    init?(serveArguments: [String] = []) throws {
        guard let tmuxPath = which("tmux") else {
            Issue.record("tmux is not installed; the end-to-end test needs it (apt-get install tmux)")
            return nil
        }
        clubroom = try clubroomExecutable()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-ui-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        secret = directory.appendingPathComponent("secret").path
        tmux = Tmux(tmux: tmuxPath)
        let server = try Child(
            clubroom,
            [
                "serve", "--listen", "127.0.0.1:0", "--data", directory.appendingPathComponent("data").path,
                "--secret-file", secret,
            ] + serveArguments)
        children.append(server)
        var port = ""
        let listening = eventually(10) {
            guard let range = server.errors.contents.range(of: "listening on ws://127.0.0.1:") else { return false }
            port = String(server.errors.contents[range.upperBound...].prefix(while: \.isNumber))
            return !port.isEmpty
        }
        url = "ws://127.0.0.1:\(port)/rooms/lobby"
        guard listening else {
            close()
            throw HarnessError("the server did not start: \(server.errors.contents)")
        }
    }

    /// A bot in the room, joined.
    func bot(_ identity: String, name: String, role: String = "audience", extra: [String] = []) throws -> Child {
        let token = spawnAndWait(
            clubroom.path,
            [
                "token", "--room", "lobby", "--identity", identity, "--name", name, "--role", role,
                "--secret-file", secret,
            ]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let bot = try Child(clubroom, ["bot", url, "--token", token] + extra)
        children.append(bot)
        try #require(eventually(10) { bot.output.contents.contains("\"joined\"") }, "the bot did not join")
        return bot
    }

    /// The command that joins as the host Ana, with `environment` (`NAME=value` words) before it.
    func hostCommand(environment: [String] = []) -> String {
        (["env"] + environment + [clubroom.path, "join", url, "--secret-file", secret, "--identity", "ana"]
            + ["--name", "Ana", "--role", "host"]).joined(separator: " ")
    }

    /// The room screen in tmux as the host Ana; the pane says how `clubroom` exited once it has.
    func joinAsHost(width: Int, height: Int, environment: [String] = [], shows: String = "you: Ana · host") throws {
        try tmux.start(
            width: width, height: height,
            command: hostCommand(environment: environment) + "; echo \"clubroom exited with $?\"; sleep 30")
        try #require(eventually(10) { tmux.screen().contains(shows) }, "no room screen:\n\(tmux.screen())")
    }

    /// The room screen in tmux as the listener Hana, with `options` (devices) added.
    func joinAsListener(width: Int, height: Int, options: [String]) throws {
        let command =
            ([clubroom.path, "join", url, "--secret-file", secret, "--identity", "hana", "--name", "Hana"]
            + ["--role", "audience"] + options).joined(separator: " ")
        try tmux.start(
            width: width, height: height, command: command + "; echo \"clubroom exited with $?\"; sleep 30")
        try #require(
            eventually(10) { tmux.screen().contains("you: Hana · listener") }, "no room screen:\n\(tmux.screen())")
    }

    /// The room screen as the host Ana, started from an interactive shell in tmux (so that job control works:
    /// Ctrl-Z, and `fg`, whose status is then the program's).
    func joinAsHostFromAShell(width: Int, height: Int) throws {
        try tmux.start(width: width, height: height, command: "env PS1='shell$ ' bash --norc --noprofile -i")
        try #require(eventually(10) { tmux.screen().contains("shell$") }, "no shell:\n\(tmux.screen())")
        try tmux.keys(hostCommand(), "Enter")
        try #require(
            eventually(10) { tmux.screen().contains("you: Ana · host") }, "no room screen:\n\(tmux.screen())")
    }

    func close() {
        tmux.kill()
        for child in children { child.stop() }
        try? FileManager.default.removeItem(at: directory)
    }
}
