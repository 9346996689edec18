import Glibc

/// The client's own folder for its state: `$XDG_STATE_HOME/clubroom`, or `~/.local/state/clubroom`. It holds the
/// guest key, the logs (which may quote what the room said) and the volumes: only its owner may enter it.
public enum StateFolder {
    /// The folder's path for `environment` (`XDG_STATE_HOME` when it is an absolute path, else `HOME`).
    public static func path(environment: [String: String], home: String) -> String {
        if let configured = environment["XDG_STATE_HOME"], configured.hasPrefix("/") {
            return configured + "/clubroom"
        }
        return (environment["HOME"] ?? home) + "/.local/state/clubroom"
    }

    /// Creates `path` (and missing parents, which keep the usual mode) with mode 0700, or makes an existing one of
    /// this user 0700; true when it is there afterwards.
    @discardableResult
    public static func prepare(_ path: String) -> Bool {
        var prefix = path.hasPrefix("/") ? "" : "."
        let components = path.split(separator: "/")
        for (index, component) in components.enumerated() {
            prefix += "/" + component
            let mode: mode_t = index == components.count - 1 ? 0o700 : 0o755
            if mkdir(prefix, mode) != 0 && errno != EEXIST { return false }
        }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return false }
        if info.st_uid == geteuid(), info.st_mode & 0o077 != 0 { _ = chmod(path, 0o700) }
        return true
    }
}
