import CSpawn
import Glibc

/// Where a child's standard output or standard error goes.
public enum ChildOutput: Sendable, Equatable {
    /// Nowhere: `/dev/null`.
    case discarded
    /// Into a file, created (mode 0600) when missing and emptied when not.
    case file(String)
    /// At the end of a file, created (mode 0600) when missing.
    case appended(String)
}

/// Starts `executable` with `arguments` in a child that gets nothing of this process but its environment: its stdin
/// reads `/dev/null`, its stdout and stderr go where `output` and `errors` say, it holds no other descriptor of this
/// process (not even one another thread opens between now and the spawn), and every signal starts at its default
/// with none blocked. `searchingPath` looks a name without a slash up in `PATH` (posix_spawnp). Returns the child's
/// process id; the caller reaps it.
///
/// Descriptors made by Foundation (a `Pipe`'s ends) are not close-on-exec: a child that kept one open (a recorder, a
/// `redis-server`, a tmux server it forks) would hold back the end of that pipe, and whoever reads it would wait for
/// its input to end long after the child that was meant to write it exited. A signal ignored or blocked here would
/// stay so in the child and in whatever it starts (a tmux server whose panes would then survive a hang-up).
public func spawnIsolated(
    _ executable: String, _ arguments: [String], output: ChildOutput = .discarded, errors: ChildOutput = .discarded,
    searchingPath: Bool = false
) throws(PlacedError) -> pid_t {
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
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    for (descriptor, target) in [(Int32(1), output), (Int32(2), errors)] {
        switch target {
        case .discarded: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        case .appended(let path):
            posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        }
    }
    clubroom_spawn_close_from(&actions, 3)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let status =
        searchingPath
        ? posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        : posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
    guard status == 0 else {
        throw PlacedError(
            place: searchingPath ? "posix_spawnp" : "posix_spawn", problem: String(cString: strerror(status)))
    }
    return pid
}
