import Foundation
import RoomTesting
import Testing

/// A tmux server of the test's own, so nothing the test does touches another tmux.
struct Tmux {
    let socket: String

    @discardableResult
    func run(_ arguments: String...) throws -> String {
        try shell("tmux", ["-L", socket, "-f", "/dev/null"] + arguments)
    }

    /// Starts the session running `command` at 80x24.
    func start(_ command: String) throws {
        try run("new-session", "-d", "-s", "demo", "-x", "80", "-y", "24", command)
    }

    /// Hangs up the pane's processes, as a closing terminal does, then stops the server.
    func kill() {
        let pane = (try? run("display-message", "-p", "-t", "demo", "#{pane_pid}"))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        if let pane { Glibc.kill(-pane, SIGHUP) }
        _ = try? run("kill-server")
    }

    /// The visible screen as text.
    func screen() throws -> String {
        try run("capture-pane", "-p", "-t", "demo")
    }

    /// The visible screen with its colour and attribute escapes.
    func styledScreen() throws -> String {
        try run("capture-pane", "-p", "-e", "-t", "demo")
    }

    /// Waits until the screen satisfies `match`; returns that screen.
    @discardableResult
    func wait(timeout: Double, for what: String, _ match: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = try screen()
            if match(last) { return last }
            usleep(200_000)
        }
        throw DemoTestError(description: "the screen never showed \(what); last screen:\n\(last)")
    }
}

/// Whether `name` appears on the screen in bold: the room screen draws the active speaker's name bold and
/// coloured, and other stage names plain. `styled` is a capture with escapes (`capture-pane -e`).
func isHighlighted(_ name: String, in styled: String) -> Bool {
    var searchStart = styled.startIndex
    while let found = styled.range(of: name, range: searchStart..<styled.endIndex) {
        searchStart = found.upperBound
        // The SGR sequences right before the name, nearest first.
        var before = styled[..<found.lowerBound]
        while before.hasSuffix("m"), let escape = before.range(of: "\u{1B}[", options: .backwards) {
            let parameters = before[escape.upperBound..<before.index(before: before.endIndex)]
            if boldIsSet(by: parameters) { return true }
            before = before[..<escape.lowerBound]
        }
    }
    return false
}

/// Whether an SGR parameter list (`1`, `0;1`, `38;5;48`) turns bold on; colour arguments are skipped.
func boldIsSet(by parameters: Substring) -> Bool {
    let values = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
    var index = 0
    while index < values.count {
        switch values[index] {
        case 1: return true
        case 38, 48: index += values.count > index + 1 && values[index + 1] == 2 ? 5 : 3
        default: index += 1
        }
    }
    return false
}

/// The lines of one section of the room screen: from its rule (`─ Stage`) to the next rule.
func section(_ title: String, of screen: String) -> [Substring] {
    let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0.contains("─ \(title)") }) else { return [] }
    let rest = lines[(start + 1)...]
    let end = rest.firstIndex(where: { $0.hasPrefix(" ─") }) ?? rest.endIndex
    return Array(rest[..<end])
}

/// `clubroom demo` on the room screen in tmux at 80x24: the speakers are highlighted in turn, a hand goes up, `n`
/// invites it, the listener arrives on stage and speaks, and `q` then `y` leaves with the terminal restored and no
/// process left behind.
@Suite(.ownThread, .enabled(if: installed("tmux"), "needs tmux"), .timeLimit(.minutes(2))) struct ScreenDemoTests {
    @Test func inviteARaisedHandThenQuit() throws {
        let scratch = try scratchDirectory("screen")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let tmux = Tmux(socket: "clubroom-demo-test-\(getpid())")
        defer { tmux.kill() }
        let command = [
            "env", "TMPDIR=\(scratch.path)/tmp", "XDG_STATE_HOME=\(scratch.path)/state", "TERM=xterm-256color",
            "USER=ana",
            try clubroomBinary().path, "demo",
        ].joined(separator: " ")
        try tmux.start("\(command); echo DEMO-EXIT=$?; sleep 120")

        // The speakers take turns: each in turn is drawn highlighted, and once the one before has been quiet for
        // the highlight's hold, alone.
        for speaker in ["Sam", "Imogen", "Callum"] {
            let others = ["Sam", "Imogen", "Callum"].filter { $0 != speaker }
            func alone(_ styled: String) -> Bool {
                isHighlighted(speaker, in: styled) && !others.contains { isHighlighted($0, in: styled) }
            }
            let deadline = Date().addingTimeInterval(30)
            var styled = try tmux.styledScreen()
            while !alone(styled), Date() < deadline {
                usleep(100_000)
                styled = try tmux.styledScreen()
            }
            #expect(alone(styled), "\(speaker) was never highlighted alone:\n\(styled)")
        }

        let filled = try tmux.wait(timeout: 30, for: "the stage and a raised hand") { screen in
            section("Raised hands", of: screen).contains { $0.contains("1. Zoë") }
                && section("Stage", of: screen).contains { $0.contains("Callum") }
        }
        let stage = section("Stage", of: filled).joined(separator: "\n")
        for name in ["Ana (host)", "Dara (mod)", "Sam", "Imogen", "Callum"] {
            #expect(stage.contains(name), "\(name) is not on stage:\n\(filled)")
        }
        #expect(!stage.contains("Zoë"))
        #expect(section("Audience", of: filled).joined().contains("健太"))

        try tmux.run("send-keys", "-t", "demo", "n")
        try tmux.wait(timeout: 15, for: "Zoë on stage") { screen in
            section("Stage", of: screen).contains { $0.contains("Zoë") }
                && !section("Raised hands", of: screen).contains { $0.contains("Zoë") }
        }
        // Dara greets her after the current line, then she speaks: her level bar rises.
        try tmux.wait(timeout: 30, for: "Zoë's level bar rising") { screen in
            section("Stage", of: screen).contains { line in
                guard let name = line.range(of: "Zoë") else { return false }
                let after = line[name.upperBound...].prefix(20)
                return after.contains { "▂▃▄▅▆▇█".contains($0) }
            }
        }
        #expect(processes(withEnvironment: "\(scratch.path)/tmp").count == 1)

        try tmux.run("send-keys", "-t", "demo", "q")
        // The question is about leaving the demo, whose room ends with it (it does not go on without a host).
        try tmux.wait(timeout: 5, for: "the leave confirmation") { $0.contains("Leave the demo?") }
        try tmux.run("send-keys", "-t", "demo", "y")
        let after = try tmux.wait(timeout: 15, for: "the demo's exit status") { $0.contains("DEMO-EXIT=") }
        #expect(after.contains("DEMO-EXIT=0"))
        #expect(try tmux.run("display-message", "-p", "-t", "demo", "#{alternate_on}") == "0\n")
        #expect(processes(withEnvironment: "\(scratch.path)/tmp").isEmpty)
        let left = try FileManager.default.contentsOfDirectory(atPath: "\(scratch.path)/tmp")
        #expect(left.isEmpty, "\(left)")
    }
}
