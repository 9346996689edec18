import Foundation
import RoomTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The package's root, found from this file's place in it.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The `clubroom` executable of the build being tested (`swift build --build-tests` builds it too).
func clubroomExecutable() throws -> URL {
    for configuration in ["debug", "release"] {
        let url = packageRoot.appendingPathComponent(".build/\(configuration)/clubroom")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    throw HarnessError("the clubroom executable is not built; run swift build --build-tests first")
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Finds a program on PATH.
func which(_ program: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(program)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Text collected from a pipe on a background thread.
final class Collector: @unchecked Sendable {
    // @unchecked: `text` is only touched under the lock.
    private let lock = NSLock()
    private var text = ""

    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readToEnd { [self] data in
            lock.withLock { text += String(decoding: data, as: UTF8.self) }
        }
    }

    var contents: String { lock.withLock { text } }
}

/// A child process that is always ended: terminated when the test is done, killed if it does not stop.
final class Child {
    let process = Process()
    let stdin = Pipe()
    let output: Collector
    let errors: Collector

    /// Starts `executable`; `environment` adds to (or replaces in) this process's environment.
    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardInput = stdin
        process.standardOutput = out
        process.standardError = err
        output = Collector(out)
        errors = Collector(err)
        try process.run()
    }

    func write(_ line: String) {
        stdin.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Polls `condition` every 100 ms until it holds or `seconds` pass.
func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(100_000)
    }
    return try condition()
}

/// A tmux server of the test's own (its own socket), so nothing touches anyone else's sessions.
final class Tmux {
    let tmux: String
    let socket: String
    let session = "room"
    private var serverPID: pid_t?
    private var panePID: pid_t?

    init(tmux: String) {
        self.tmux = tmux
        socket = "clubroom-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    private func tmuxCommand(_ arguments: [String]) -> (status: Int32, output: String) {
        spawnAndWait(tmux, ["-L", socket] + arguments)
    }

    func start(width: Int, height: Int, command: String) throws {
        let started = tmuxCommand(["new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)", command])
        guard started.status == 0 else { throw HarnessError("tmux new-session failed (\(started.status))") }
        let pids = tmuxCommand(["display-message", "-p", "-t", session, "#{pid} #{pane_pid}"]).output
            .split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        if pids.count == 2 {
            serverPID = pids[0]
            panePID = pids[1]
        }
    }

    /// The process the pane's shell runs now (its only child), by its parent's id in `/proc`.
    func paneChild() -> pid_t? {
        guard let panePID else { return nil }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After the command's name in parentheses: the state, then the parent's id.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == panePID { return pid }
        }
        return nil
    }

    func keys(_ keys: String...) throws {
        _ = tmuxCommand(["send-keys", "-t", session] + keys)
    }

    func resize(width: Int, height: Int) {
        _ = tmuxCommand(["resize-window", "-t", session, "-x", "\(width)", "-y", "\(height)"])
    }

    func screen() -> String {
        tmuxCommand(["capture-pane", "-p", "-t", session]).output
    }

    /// Ends everything in the pane (hang-up to its process group, as a closing terminal does), then the server.
    func kill() {
        if let panePID { Glibc.kill(-panePID, SIGHUP) }
        _ = tmuxCommand(["kill-server"])
        if let serverPID {
            usleep(200_000)
            if Glibc.kill(serverPID, 0) == 0 { Glibc.kill(serverPID, SIGKILL) }
        }
        // A server that had to be killed leaves its socket behind.
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(directory)/tmux-\(getuid())/\(socket)")
    }
}

/// The lines of a screen between a section's title and the next section's.
func section(_ title: String, of screen: String) -> [String] {
    var lines: [String] = []
    var inside = false
    for line in screen.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.contains("─ ") && line.contains("──") {
            inside = line.contains("─ \(title)")
            continue
        }
        if inside { lines.append(String(line)) }
    }
    return lines
}
