import Foundation

/// Freezing and thawing a child process by PID. A signal is delivered asynchronously: a process sent SIGSTOP may
/// still answer a request for a moment, so each call waits until the kernel reports the new state.
public enum ProcessFreezing {
    /// SIGSTOP, then waits (up to 2 s) until `/proc/PID/stat` shows the process stopped.
    public static func freeze(_ pid: pid_t) {
        guard pid > 0, kill(pid, SIGSTOP) == 0 else { return }
        wait(for: pid, stopped: true)
    }

    /// SIGCONT, then waits (up to 2 s) until the process runs again.
    public static func thaw(_ pid: pid_t) {
        guard pid > 0, kill(pid, SIGCONT) == 0 else { return }
        wait(for: pid, stopped: false)
    }

    /// Whether the process is stopped by a signal (state `T`), from `/proc/PID/stat`; nil when it is gone.
    public static func isStopped(_ pid: pid_t) -> Bool? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // The state is the first field after the parenthesised command name, which may itself hold spaces.
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state == "T"
    }

    private static func wait(for pid: pid_t, stopped: Bool) {
        let deadline = Date().addingTimeInterval(2)
        while let now = isStopped(pid), now != stopped, Date() < deadline { usleep(1_000) }
    }
}
