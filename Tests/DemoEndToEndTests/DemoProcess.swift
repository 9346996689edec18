import Foundation
import RoomTesting
import Synchronization

/// Something a demo test waited for and did not get, with what it saw instead.
struct DemoTestError: Error, CustomStringConvertible {
    var description: String
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

/// Runs a program from the PATH (see RoomTesting's `spawnAndWait`) and returns its stdout.
@discardableResult
func shell(_ command: String, _ arguments: [String]) throws -> String {
    let (status, output) = spawnAndWait(command, arguments)
    guard status != -1 else { throw DemoTestError(description: "cannot run \(command)") }
    return output
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

/// Starts `clubroom demo` with `arguments`, its temporary and state directories in `scratch`, stdin and stdout
/// on pipes and stderr discarded: the process, its stdin, and the lines it prints.
func startDemo(in scratch: URL, arguments: [String]) throws -> (Process, Pipe, LineCollector) {
    let process = Process()
    process.executableURL = try clubroomBinary()
    process.arguments = ["demo"] + arguments
    var environment = ProcessInfo.processInfo.environment
    environment["TMPDIR"] = scratch.appendingPathComponent("tmp").path
    environment["XDG_STATE_HOME"] = scratch.appendingPathComponent("state").path
    // As in a container: no login name to name the host after, so it is "Host" whoever runs the tests.
    environment["USER"] = "root"
    process.environment = environment
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    return (process, input, LineCollector(output.fileHandleForReading))
}

/// Sends one line to the demo's stdin.
func send(_ line: String, to input: Pipe) {
    input.fileHandleForWriting.write(Data(line.utf8 + [0x0A]))
}
