import Foundation
import Glibc
import Platform

/// A `redis-server` of a test's own: a free port, a fresh folder, killed by its PID. It can be killed (`kill -9`),
/// restarted on the same port (with or without its append-only file), and paused (SIGSTOP) and resumed.
public final class RedisServerProcess: @unchecked Sendable {
    // Safe to share: `pid` changes only in `start`/`kill`, and `port` only in `init`, which a test calls from one
    // thread.
    public private(set) var port: Int
    public let host: String
    /// Whether the server keeps an append-only file (fsync every second), so a restart keeps its data.
    public let appendOnly: Bool
    /// The default user's password (`--requirepass`), when the server wants one.
    public let password: String?
    public let folder: TemporaryDirectory
    /// The network namespace the server runs in, if any (then only processes inside it reach the server).
    public let namespace: NetworkNamespace?
    public private(set) var pid: pid_t = 0

    /// Whether `redis-server` is installed (`make test` installs it).
    public static var isInstalled: Bool { executable != nil }

    private static let executable: String? = [
        "/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server",
    ]
    .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Starts a server on a free port of `host` (inside `namespace` when one is given) and waits until it
    /// answers PING. With `password`, the server wants it (`--requirepass`).
    public init(
        host: String = "127.0.0.1", appendOnly: Bool = true, namespace: NetworkNamespace? = nil,
        password: String? = nil
    ) throws {
        self.host = host
        self.appendOnly = appendOnly
        self.namespace = namespace
        self.password = password
        folder = TemporaryDirectory()
        port = try freeLoopbackPort()
        // A free port can be taken by another process (another test's server or client) before Redis binds it:
        // the first start moves to another free port then. Restarts keep the port they were given.
        for attempt in 1...Self.startAttempts {
            do {
                try start()
                return
            } catch RedisServerError.couldNotStart(let reason)
                where attempt < Self.startAttempts && reason.contains("Address already in use")
            {
                port = try freeLoopbackPort()
            }
        }
    }

    /// How many free ports the first start tries.
    static let startAttempts = 5

    deinit {
        kill()
        folder.remove()
    }

    /// `redis://HOST:PORT`.
    public var url: String { "redis://\(host):\(port)" }

    /// Starts (or restarts after `kill`) the server on the same port and folder; waits until it answers.
    /// `keepingData: false` removes the append-only file first: Redis comes back empty.
    public func start(keepingData: Bool = true) throws {
        guard pid == 0 else { return }
        guard let executable = Self.executable else { throw RedisServerError.notInstalled }
        if !keepingData {
            try? FileManager.default.removeItem(atPath: folder.file("appendonlydir"))
            try? FileManager.default.removeItem(atPath: folder.file("dump.rdb"))
        }
        let command =
            [
                executable, "--port", String(port), "--bind", host, "--save", "", "--appendonly",
                appendOnly ? "yes" : "no", "--appendfsync", "everysec", "--dir", folder.path, "--logfile",
                folder.file("redis.log"), "--daemonize", "no", "--protected-mode", "no",
            ] + (password.map { ["--requirepass", $0] } ?? [])
        // nsenter execs the server without forking, so the PID is the server's own.
        let arguments = namespace?.wrap(command) ?? command
        let child: pid_t
        do {
            child = try spawnIsolated(arguments[0], Array(arguments.dropFirst()))
        } catch {
            throw RedisServerError.couldNotStart(error.description)
        }
        pid = child
        for _ in 0..<500 {
            if ping() { return }
            var exitStatus: Int32 = 0
            if waitpid(child, &exitStatus, WNOHANG) == child {
                pid = 0
                let log = (try? String(contentsOfFile: folder.file("redis.log"), encoding: .utf8)) ?? ""
                throw RedisServerError.couldNotStart("redis-server exited: \(log.suffix(400))")
            }
            usleep(10_000)
        }
        kill()
        throw RedisServerError.couldNotStart("redis-server did not answer on port \(port) within 5 s")
    }

    /// `kill -9`, then reaps the process. Nothing is saved beyond what the append-only file already holds.
    public func kill() {
        guard pid != 0 else { return }
        Glibc.kill(pid, SIGCONT)
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is answered.
    public func pause() {
        if pid != 0 { ProcessFreezing.freeze(pid) }
    }

    /// Thaws a paused server (SIGCONT).
    public func resume() {
        if pid != 0 { ProcessFreezing.thaw(pid) }
    }

    /// Whether the server answers PING now (with a password wanted, by asking for it).
    public func ping() -> Bool {
        let answer: String?
        if let namespace {
            answer = namespace.run(["redis-cli", "-h", host, "-p", String(port), "ping"]).output
        } else {
            answer = rawCommand("*1\r\n$4\r\nPING\r\n")
        }
        guard let answer else { return false }
        return answer.hasPrefix("+PONG") || answer.hasPrefix("PONG")
            || (password != nil && (answer.hasPrefix("-NOAUTH") || answer.hasPrefix("NOAUTH")))
    }

    /// Sends a command in RESP over a fresh TCP connection and returns the first line of the answer (for the
    /// readiness checks of this type; tests talk to Redis through the product's client).
    private func rawCommand(_ text: String) -> String? {
        askOnce(host: host, port: port, text, milliseconds: 200, capacity: 256)
    }
}

/// Why a test's `redis-server` could not run.
public enum RedisServerError: Error, CustomStringConvertible {
    case notInstalled
    case couldNotStart(String)

    public var description: String {
        switch self {
        case .notInstalled: "redis-server is not installed; 'make test-deps' installs it"
        case .couldNotStart(let reason): "redis-server did not start: \(reason)"
        }
    }
}
