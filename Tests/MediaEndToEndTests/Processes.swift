import Foundation
import RoomTesting
import Synchronization
import Testing

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A running `clubroom` process whose output is collected as it comes.
final class RunningProcess: @unchecked Sendable {
    // Safe to share: `process` and the pipes are set up once; the collected text is behind locks.
    let process = Process()
    private let input = Pipe()
    private let output = TextBox()
    private let errors = TextBox()

    /// Starts `clubroom` with `arguments` in `directory`, with `environment` added to this process's own.
    init(_ arguments: [String], directory: URL, environment: [String: String] = [:]) throws {
        process.executableURL = try clubroomBinary()
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        process.standardInput = input
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        out.fileHandleForReading.readToEnd(
            chunk: { [output] in output.append($0) }, ended: { [output] in output.close() })
        err.fileHandleForReading.readToEnd(
            chunk: { [errors] in errors.append($0) }, ended: { [errors] in errors.close() })
    }

    var standardOutput: String { output.text }
    var standardError: String { errors.text }

    /// Writes one line to the process's stdin.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes stdin (a bot leaves) and waits for the exit, at most `seconds`.
    func finish(seconds: Double = 10) {
        try? input.fileHandleForWriting.close()
        waitForExit(seconds: seconds)
    }

    /// Closes the stdin of every one of `processes` at once, then waits for each to exit (at most `seconds`
    /// from the first close): on a busy machine their leaving overlaps instead of adding up.
    static func finish(_ processes: [RunningProcess], seconds: Double = 20) {
        for process in processes { try? process.input.fileHandleForWriting.close() }
        let deadline = Date().addingTimeInterval(seconds)
        for process in processes { process.waitForExit(seconds: max(0, deadline.timeIntervalSinceNow)) }
    }

    /// SIGTERM (a server stops) and waits.
    func terminate(seconds: Double = 10) {
        process.terminate()
        waitForExit(seconds: seconds)
    }

    private func waitForExit(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // The pipes are read on another queue: what the process wrote last is read once both have ended (a
        // child that inherited them and lives on would hold them open, hence the bound).
        let drained = Date().addingTimeInterval(5)
        while !(output.isClosed && errors.isClosed), Date() < drained { usleep(10_000) }
    }

    /// Waits until the output (or errors) contain `text`; false after `seconds`.
    func waitFor(_ text: String, inErrors: Bool = false, seconds: Double = 10) -> Bool {
        waitUntil(inErrors: inErrors, seconds: seconds) { $0.contains(text) }
    }

    /// Waits until `condition` holds for the output (or errors) so far; false after `seconds`.
    func waitUntil(inErrors: Bool = false, seconds: Double = 10, _ condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(inErrors ? standardError : standardOutput) { return true }
            usleep(20_000)
        }
        return false
    }
}

/// A server on free ports with a fresh data directory, and a way to mint tokens for it.
final class TestServer {
    let directory: URL
    let server: RunningProcess
    let url: String
    let mediaPort: Int

    /// `serveArguments` are added to `serve`'s (a stream destination, say).
    init(name: String, serveArguments: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-media-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A random media port can be taken by another test between choosing it and binding it: try another.
        var attempt = 0
        while true {
            let port = Int.random(in: 30_000...60_000)
            let started = try RunningProcess(
                ["serve", "--listen", "127.0.0.1:0", "--data", directory.path, "--media", "127.0.0.1:\(port)"]
                    + serveArguments,
                directory: directory)
            if started.waitFor("listening on ws://", inErrors: true) {
                (mediaPort, server) = (port, started)
                break
            }
            started.terminate()
            attempt += 1
            guard started.standardError.contains("Address already in use"), attempt < 5 else {
                throw TestFailure("the server did not start: \(started.standardError)")
            }
        }
        let log = server.standardError
        guard let range = log.range(of: "listening on ws://127.0.0.1:"),
            let port = Int(log[range.upperBound...].prefix(while: \.isNumber))
        else { throw TestFailure("no port in the server's log: \(log)") }
        url = "ws://127.0.0.1:\(port)/rooms/stage"
    }

    func token(_ identity: String, role: String) throws -> String {
        let minting = try RunningProcess(
            [
                "token", "--room", "stage", "--identity", identity, "--role", role, "--secret-file",
                directory.appendingPathComponent("secret").path,
            ], directory: directory)
        minting.process.waitUntilExit()
        usleep(50_000)
        return minting.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func bot(_ identity: String, role: String, _ options: [String] = []) throws -> RunningProcess {
        try RunningProcess(["bot", url, "--token", try token(identity, role: role)] + options, directory: directory)
    }

    func path(_ file: String) -> String { directory.appendingPathComponent(file).path }

    /// Stops the server and returns its log.
    func stop() -> String {
        server.terminate()
        return server.standardError
    }

    deinit {
        if server.process.isRunning { server.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Text collected from a pipe's handler thread.
final class TextBox: Sendable {
    private let value = Mutex("")
    private let closed = Atomic(false)

    func append(_ data: Data) {
        value.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }

    /// The stream has ended: everything the process wrote is in `text`.
    func close() { closed.store(true, ordering: .releasing) }

    var text: String { value.withLock { $0 } }
    var isClosed: Bool { closed.load(ordering: .acquiring) }
}

/// Whether a bot's output has an `audio_stats` line with a packet received from some speaker (a count of 1 or
/// more, whatever its first digit).
func receivedAudio(_ output: String) -> Bool {
    var rest = output[...]
    while let found = rest.range(of: "\"received\":") {
        if let digit = rest[found.upperBound...].first, digit.isNumber, digit != "0" { return true }
        rest = rest[found.upperBound...]
    }
    return false
}

/// What `clubroom bench SUITE --json` printed: its rows by metric, and its notes.
struct BenchReport {
    let rows: [[String: Any]]
    let notes: [String]

    /// Runs `clubroom bench` with `arguments` and `--json` in a folder of its own, waits at most `seconds` for it
    /// to end, and reads its report; records an issue (and throws) when it does not end or prints no report.
    init(_ arguments: [String], within seconds: Double) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-\(arguments.first ?? "")-test-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bench = try RunningProcess(["bench"] + arguments + ["--json"], directory: directory)
        #expect(eventually(seconds: seconds) { !bench.process.isRunning }, "still running: \(bench.standardError)")
        let report = try #require(
            try? JSONSerialization.jsonObject(with: Data(bench.standardOutput.utf8)) as? [String: Any],
            "not a report: \(bench.standardOutput) \(bench.standardError)")
        rows = try #require(report["rows"] as? [[String: Any]])
        notes = report["notes"] as? [String] ?? []
    }

    /// The value of the first row named `metric`.
    func value(_ metric: String) -> Double? {
        rows.first { $0["metric"] as? String == metric }?["value"] as? Double
    }
}
