import Foundation
import Platform

/// Runs `executable` (looked up in `PATH`) as an isolated child (`spawnIsolated`) and waits for it with waitpid;
/// its stdout goes through a file that is read back, its stdin and stderr are `/dev/null`. Returns the exit status
/// and the output.
///
/// For programs that fork a long-lived server (tmux): Foundation's `Process` can miss the exit of a client
/// whose server it forked, and a pipe would stay open in that server.
public func spawnAndWait(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String) {
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent(
        "clubroom-spawn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    ).path
    defer { unlink(outputPath) }
    guard let pid = try? spawnIsolated(executable, arguments, output: .file(outputPath), searchingPath: true) else {
        return (-1, "")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    return ((status >> 8) & 0xff, output)
}
