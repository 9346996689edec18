import Foundation
import RoomTesting
import Synchronization

/// Something a demo test waited for and did not get, with what it saw instead.
struct DemoTestError: Error, CustomStringConvertible {
    var description: String
}

/// The built `clubroom` executable: `CLUBROOM_BINARY` when set, else next to the test bundle, else under this
/// package's `.build/debug`.
func clubroomBinary() throws -> URL {
    var candidates: [URL] = []
    if let override = ProcessInfo.processInfo.environment["CLUBROOM_BINARY"] {
        candidates.append(URL(fileURLWithPath: override))
    }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
    candidates.append(directory.appendingPathComponent("clubroom"))
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(packageRoot.appendingPathComponent(".build/debug/clubroom"))
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
    }
    throw DemoTestError(description: "clubroom binary not found in \(candidates.map(\.path))")
}

/// A fresh directory for one test: the demo's TMPDIR (where it makes its data directory) and XDG_STATE_HOME (its
/// log), so a test can check that the demo removed what it made.
func scratchDirectory(_ name: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "clubroom-demo-test-\(name)-\(getpid())")
    try? FileManager.default.removeItem(at: directory)
    try FileManager.default.createDirectory(
        at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
        at: directory.appendingPathComponent("state"), withIntermediateDirectories: true)
    return directory
}

extension LineCollector {
    /// Waits until a line at or after `start` satisfies `match`; a missing line fails the test with what was seen.
    func expect(from start: Int = 0, timeout: Double, _ match: (String) -> Bool) throws -> Int {
        guard let index = wait(from: start, timeout: timeout, match) else {
            throw DemoTestError(
                description: "no matching line after line \(start); saw:\n" + all.joined(separator: "\n"))
        }
        return index
    }
}

/// Runs a program from the PATH with posix_spawn, waits for it with waitpid, and returns its stdout, which goes
/// through a file. (Foundation's `Process` can miss the exit of a tmux client whose server it forked, and a pipe
/// would stay open in that server.)
@discardableResult
func shell(_ command: String, _ arguments: [String]) throws -> String {
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent(
        "clubroom-demo-spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    ).path
    defer { unlink(outputPath) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = (["env", command] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    // Signals ignored in the test runner would stay ignored in the child (and in a tmux server it forks, whose
    // panes would then survive a hang-up): start with every signal at its default and none blocked.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var all = sigset_t()
    var none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/usr/bin/env", &actions, &attributes, argv, environ)
    guard spawned == 0 else { throw DemoTestError(description: "cannot run \(command): error \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
}

/// The pids of running processes whose environment holds `marker` (a test's unique scratch path): whatever the
/// demo started inherits it, so after the demo has exited this must be empty.
func processes(withEnvironment marker: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry), pid != getpid(),
            let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ")
        else { return nil }
        return String(decoding: environment, as: UTF8.self).contains(marker) ? pid : nil
    }
}

/// Whether a program is on the PATH.
func installed(_ program: String) -> Bool {
    (try? shell("sh", ["-c", "command -v \(program)"]).isEmpty == false) ?? false
}
