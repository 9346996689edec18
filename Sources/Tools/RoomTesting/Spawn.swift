import CSpawn
import Foundation

/// Runs `executable` with posix_spawn and waits for it with waitpid; its stdout goes through a file that is read
/// back, its stdin and stderr are `/dev/null`. Returns the exit status and the output.
///
/// For programs that fork a long-lived server (tmux): Foundation's `Process` can miss the exit of a client
/// whose server it forked, and a pipe would stay open in that server. For the same reason the child gets
/// nothing else of the test process: a tmux server that kept another test's pipe open would hold back the end
/// of that pipe, and the process reading it would never see its input end. Every signal starts at its default
/// and none is blocked, since signals ignored in the test runner would stay ignored in the child (and in the
/// server it forks, whose panes would then survive a hang-up).
public func spawnAndWait(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent(
        "clubroom-spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    ).path
    defer { unlink(outputPath) }
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
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = withIsolatedFileActions(standardOutput: outputPath) { actions in
        posix_spawnp(&pid, executable, actions, &attributes, argv, environ)
    }
    guard spawned == 0 else { return (-1, "") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    return ((status >> 8) & 0xff, output)
}

/// Runs `body` with file actions for a child that reads `/dev/null`, writes its stdout to `standardOutput` (created
/// when missing, emptied when not) and its stderr to `/dev/null`, and gets no other descriptor of this process.
///
/// Descriptors made by Foundation (a `Pipe`'s ends) are not close-on-exec. A child that kept another test's pipe
/// open, a `redis-server` living for a whole test, would hold back the end of that pipe: the test reading it would
/// wait for its child's output to end until its deadline, long after the child exited.
func withIsolatedFileActions<Result>(
    standardOutput: String = "/dev/null", _ body: (UnsafePointer<posix_spawn_file_actions_t>) -> Result
) -> Result {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    // Every other descriptor, including one another thread opens between now and the spawn.
    clubroom_spawn_close_from(&actions, 3)
    return body(&actions)
}
