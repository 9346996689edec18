import Crypto
import Foundation
import RoomProtocol
import RoomTesting
import RoomTokens
import StrictJSON
import Synchronization
import Testing

/// Something the harness waited for and did not get, with what it saw instead.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
}

/// A `clubroom serve` process on a free loopback port with its own data directory and secret.
final class ServerProcess {
    let directory: URL
    let process = Process()
    let log: LineCollector
    private(set) var port = 0
    let binary: URL

    var secretFile: String { directory.appendingPathComponent("secret").path }
    var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// Starts a server; with `directory`, reuses that folder's data and secret (a restart). `launcher` runs it
    /// through another program (`nsenter … --`, for a filesystem of its own). `host` is the `--listen` host;
    /// `environment` is added to the server's (and so to its children's).
    init(
        directory: URL? = nil, host: String = "127.0.0.1", port requestedPort: Int = 0, extraArguments: [String] = [],
        launcher: [String] = [], environment: [String: String] = [:]
    ) throws {
        binary = try clubroomBinary()
        self.directory =
            directory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-it-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        let folder = self.directory
        let arguments =
            [
                "serve", "--listen", "\(host.contains(":") ? "[\(host)]" : host):\(requestedPort)", "--data",
                folder.appendingPathComponent("data").path,
                "--secret-file", folder.appendingPathComponent("secret").path,
            ] + extraArguments
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = Array(launcher.dropFirst()) + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        log = LineCollector(errors.fileHandleForReading)
        try process.run()
        guard let index = log.wait(timeout: 15, { $0.contains("listening on ws") }) else {
            process.terminate()
            throw HarnessError(description: "the server did not start: \(log.all)")
        }
        let line = log.all[index]
        // "listening on ws://HOST:PORT/rooms/ROOM, …"
        let address = line.components(separatedBy: "/rooms/ROOM")[0]
        port = Int(address.split(separator: ":").last ?? "") ?? 0
    }

    func url(room: String = "lobby") -> String { "ws://127.0.0.1:\(port)/rooms/\(room)" }

    /// A token from `clubroom token`.
    func token(_ identity: String, role: String, room: String = "lobby", name: String? = nil) throws -> String {
        let arguments =
            ["token", "--room", room, "--identity", identity, "--role", role, "--secret-file", secretFile]
            + (name.map { ["--name", $0] } ?? [])
        let minting = try ChildProcess(executable: binary, arguments: arguments).finish()
        guard minting.status == 0 else {
            throw HarnessError(description: "clubroom token exited with \(minting.status)")
        }
        return minting.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Signs arbitrary claims with the server's secret, for tokens `clubroom token` would not make.
    func signed(_ claims: TokenClaims) throws -> String {
        let secret = try SecretFile.load(at: secretFile)
        return try TokenIssuer(secret: secret).issue(claims)
    }

    /// Starts a bot in the room with a token.
    func bot(_ token: String, room: String = "lobby", autoAccept: Bool = false) throws -> BotProcess {
        try BotProcess(binary: binary, url: url(room: room), token: token, autoAccept: autoAccept)
    }

    /// Joins a bot and waits for its snapshot.
    func joinedBot(_ identity: String, role: String, autoAccept: Bool = false) throws -> BotProcess {
        let bot = try bot(try token(identity, role: role, name: identity.capitalized), autoAccept: autoAccept)
        try bot.expect("joined")
        return bot
    }

    /// Stops with SIGTERM (killed after 10 s) and waits.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Kills the server with SIGKILL, as a crash would: nothing of it runs after this.
    func crash() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The log lines so far that contain `text`.
    func logLines(containing text: String) -> [String] {
        log.all.filter { $0.contains(text) }
    }

    /// Stops and deletes the data.
    func stopAndClean() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A `clubroom bot` process: commands in, events out.
final class BotProcess {
    let process = Process()
    let input: FileHandle
    let output: LineCollector
    let errors: LineCollector
    /// Where the next `expect` starts looking.
    private(set) var cursor = 0

    init(binary: URL, url: String, token: String, autoAccept: Bool) throws {
        process.executableURL = binary
        process.arguments = ["bot", url, "--token", token] + (autoAccept ? ["--auto-accept"] : [])
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        input = stdin.fileHandleForWriting
        output = LineCollector(stdout.fileHandleForReading)
        errors = LineCollector(stderr.fileHandleForReading)
        try process.run()
    }

    /// Sends one command line.
    func send(_ line: String) {
        try? input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the next event named `event` whose fields satisfy `match`, and moves past it.
    @discardableResult
    func expect(
        _ event: String, timeout: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
        where match: (JSONObject) -> Bool = { _ in true }
    ) throws -> JSONObject {
        let found = output.wait(from: cursor, timeout: timeout) { line in
            guard let object = Self.object(line), case .string(event)? = object["event"] else { return false }
            return match(object)
        }
        guard let found else {
            throw HarnessError(
                description: "no \(event) event after line \(cursor); saw \(output.all) stderr \(errors.all)")
        }
        cursor = found + 1
        return Self.object(output.all[found])!
    }

    /// Whether an event named `event` matching `match` appears within `timeout` (from the cursor, not moving it).
    func sees(_ event: String, within timeout: Double, where match: (JSONObject) -> Bool = { _ in true }) -> Bool {
        output.wait(from: cursor, timeout: timeout) { line in
            guard let object = Self.object(line), case .string(event)? = object["event"] else { return false }
            return match(object)
        } != nil
    }

    /// Ends stdin (the bot leaves) and returns the exit status.
    func finish(timeout: Double = 10) throws -> Int32 {
        try? input.close()
        return try waitForExit(timeout: timeout)
    }

    /// Waits for the process to exit by itself.
    func waitForExit(timeout: Double = 10) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw HarnessError(description: "the bot did not exit; output \(output.all) stderr \(errors.all)")
        }
        process.waitUntilExit()
        // The readers may still be draining the pipes: what the bot printed last is read before anyone looks.
        let drained = Date().addingTimeInterval(5)
        while !(output.isClosed && errors.isClosed), Date() < drained { usleep(5_000) }
        return process.terminationStatus
    }

    /// Kills the process if it still runs.
    func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    static func object(_ line: String) -> JSONObject? {
        guard case .object(let object)? = try? StrictJSONParser().parse(line) else { return nil }
        return object
    }
}

extension JSONObject {
    func string(_ key: String) -> String? {
        if case .string(let value)? = self[key] { return value }
        return nil
    }

    func bool(_ key: String) -> Bool? {
        if case .bool(let value)? = self[key] { return value }
        return nil
    }

    func object(_ key: String) -> JSONObject? {
        if case .object(let value)? = self[key] { return value }
        return nil
    }

    func array(_ key: String) -> [JSONValue]? {
        if case .array(let value)? = self[key] { return value }
        return nil
    }
}

/// Runs `body` with a fresh server and kills every bot it started, whatever happens.
func withServer(_ body: (ServerProcess, inout [BotProcess]) throws -> Void) throws {
    let server = try ServerProcess()
    var bots: [BotProcess] = []
    defer {
        for bot in bots { bot.kill() }
        server.stopAndClean()
    }
    try body(server, &bots)
}
