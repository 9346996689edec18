import Foundation
import Platform

/// Sends what C libraries print on stderr (speexdsp's warnings, ALSA's complaints) to a log file while the room
/// screen is up, so nothing scribbles over it; ``restore()`` puts stderr back.
public final class StandardErrorLog {
    /// The log file: `$XDG_STATE_HOME/clubroom/<name>.log`, or `~/.local/state/clubroom/<name>.log`.
    public let path: String
    private var saved: Int32 = -1

    /// Redirects stderr to the log for `name` (`join`, `demo`). When the log cannot be opened, stderr goes to
    /// `/dev/null` instead: the screen matters more than the library's chatter.
    public init(name: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let directory = StateFolder.path(environment: environment, home: NSHomeDirectory())
        path = directory + "/\(name).log"
        StateFolder.prepare(directory)
        var log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        if log < 0 { log = open("/dev/null", O_WRONLY | O_CLOEXEC) }
        guard log >= 0 else { return }
        saved = dup(2)
        dup2(log, 2)
        close(log)
    }

    /// Puts stderr back as it was. Calling it again does nothing.
    public func restore() {
        guard saved >= 0 else { return }
        dup2(saved, 2)
        close(saved)
        saved = -1
    }

    deinit { restore() }
}
