import Dispatch
import Foundation
import Glibc
import Synchronization

/// What a finished child process left behind.
public struct ProcessResult: Sendable, Equatable {
    /// The exit status.
    public var status: Int32
    /// Everything written to stdout.
    public var standardOutput: String
    /// Everything written to stderr.
    public var standardError: String

    /// The first line written to stderr, without its newline.
    public var firstErrorLine: String {
        String(standardError.split(separator: "\n", omittingEmptySubsequences: false)[0])
    }
}

/// Why a child process could not be found, or did not finish as a test needs.
public enum ChildProcessError: Error, Equatable, CustomStringConvertible {
    /// The built `clubroom` executable is in none of these places.
    case binaryNotFound(searched: [String])
    /// The command outlived its deadline and was killed. `exited` says it had exited but its output had not ended:
    /// another process held its pipe open. `printed` is what it wrote to stdout and stderr by then.
    case timedOut(command: [String], seconds: Double, exited: Bool = false, printed: String = "")
    /// The command exited with a failure status.
    case failed(command: [String], status: Int32, standardError: String)

    public var description: String {
        switch self {
        case .binaryNotFound(let searched):
            return "clubroom binary not found; build it with 'swift build --build-tests'. Looked in: "
                + searched.joined(separator: ", ")
        case .timedOut(let command, let seconds, let exited, let printed):
            let held = exited ? " (it exited, but another process held its output open)" : ""
            let output = printed.isEmpty ? "" : "; it printed: \(printed)"
            return "\(command.joined(separator: " ")) did not finish within \(seconds) s\(held)\(output)"
        case .failed(let command, let status, let standardError):
            return "\(command.joined(separator: " ")) exited with \(status): \(standardError)"
        }
    }
}

/// A child process with a hard deadline: killed when it outlives it, so no test can hang. Its stdin is /dev/null.
public struct ChildProcess {
    /// The running process.
    public let process = Process()
    /// The executable and its arguments, for messages.
    public let command: [String]
    private let output = Pipe()
    private let errors = Pipe()

    /// Starts `executable` with `arguments`.
    public init(executable: URL, arguments: [String]) throws {
        command = [executable.lastPathComponent] + arguments
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Starts a program found on `PATH`: `command[0]` with the rest as its arguments.
    public init(_ command: [String]) throws {
        try self.init(executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: command)
    }

    /// The first line the child prints, or nil when it printed none within `seconds`.
    public func firstLine(seconds: Double = 10) -> String? {
        let handle = output.fileHandleForReading
        let line = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var bytes: [UInt8] = []
            while true {
                let chunk = handle.readData(ofLength: 1)
                guard let byte = chunk.first, byte != 0x0A else { break }
                bytes.append(byte)
            }
            line.withLock { $0 = String(decoding: bytes, as: UTF8.self) }
            done.signal()
        }
        if done.wait(timeout: .now() + seconds) == .timedOut { return nil }
        return line.withLock { $0 }
    }

    /// Waits for the child to exit within `seconds` and returns what it wrote; kills it and throws otherwise.
    ///
    /// Both pipes are drained at once so that a chatty child cannot block on a full pipe. What it printed before
    /// a deadline passed is in the error.
    public func finish(seconds: Double = 30) throws -> ProcessResult {
        let group = DispatchGroup()
        let collected = Mutex<(output: Data, errors: Data)>((Data(), Data()))
        let outputHandle = output.fileHandleForReading
        let errorsHandle = errors.fileHandleForReading
        // Threads of their own: blocking reads on Dispatch's shared pool wait for a free worker when many tests
        // block there at once, and what the child printed would come in late.
        for (handle, isOutput) in [(outputHandle, true), (errorsHandle, false)] {
            group.enter()
            handle.readToEnd(
                chunk: { chunk in collected.withLock { isOutput ? $0.output.append(chunk) : $0.errors.append(chunk) } },
                ended: { group.leave() })
        }
        if group.wait(timeout: .now() + seconds) == .timedOut {
            let exited = hasExited
            // A child that exited is not waited for: Foundation sees its end only once the process holding its
            // output lets go, which may be never.
            if !exited {
                process.terminate()
                if group.wait(timeout: .now() + 5) == .timedOut, process.isRunning {
                    Glibc.kill(process.processIdentifier, SIGKILL)
                }
                process.waitUntilExit()
            }
            let printed = collected.withLock { String(decoding: $0.output + $0.errors, as: UTF8.self) }
            throw ChildProcessError.timedOut(command: command, seconds: seconds, exited: exited, printed: printed)
        }
        process.waitUntilExit()
        let (out, err) = collected.withLock { $0 }
        return ProcessResult(
            status: process.terminationStatus, standardOutput: String(decoding: out, as: UTF8.self),
            standardError: String(decoding: err, as: UTF8.self))
    }

    /// Whether the child has exited: it is gone, or a zombie not reaped yet. Foundation's `isRunning` cannot say:
    /// it stays true while a process the child left behind holds the socket that Foundation watches.
    private var hasExited: Bool {
        let path = "/proc/\(process.processIdentifier)/stat"
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8), let name = stat.lastIndex(of: ")") else {
            return true
        }
        // After the name in parentheses: a space, then the state.
        return stat[name...].dropFirst(2).first == "Z"
    }

    /// Kills the child if it still runs.
    public func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// The built `clubroom` executable: `CLUBROOM_BINARY` when set, else next to the test bundle in the build
/// products directory (where `swift build --build-tests` puts both), else under this package's `.build/debug`.
public func clubroomBinary() throws -> URL {
    var candidates: [URL] = []
    if let override = ProcessInfo.processInfo.environment["CLUBROOM_BINARY"] {
        candidates.append(URL(fileURLWithPath: override))
    }
    let testExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = testExecutable.deletingLastPathComponent()
    // On Darwin the test binary sits inside Foo.xctest/Contents/MacOS; step out of the bundle.
    while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
    candidates.append(directory.appendingPathComponent("clubroom"))
    if let packageRoot = packageRoot(of: #filePath) {
        candidates.append(packageRoot.appendingPathComponent(".build/debug/clubroom"))
    }
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
    }
    throw ChildProcessError.binaryNotFound(searched: candidates.map(\.path))
}

/// The package root a source file stands in: the nearest folder above it that holds `Package.swift`.
public func packageRoot(of sourceFile: String) -> URL? {
    var directory = URL(fileURLWithPath: sourceFile).deletingLastPathComponent()
    while directory.path != "/" {
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            return directory
        }
        directory.deleteLastPathComponent()
    }
    return nil
}

/// Runs the built `clubroom` with the arguments and waits for it; killed and thrown after `seconds`.
public func runClubroom(_ arguments: [String], seconds: Double = 30) throws -> ProcessResult {
    try ChildProcess(executable: try clubroomBinary(), arguments: arguments).finish(seconds: seconds)
}

/// A loopback TCP port that was free a moment ago: bound to port 0, read back, and closed again.
public func freeLoopbackPort() throws -> Int {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(listener) }
    return try bindLoopback(listener)
}

/// A self-signed certificate for 127.0.0.1 and localhost (or the subjectAltName `names`), made by the `openssl`
/// command in a fresh folder that the caller removes.
public func makeSelfSignedCertificate(
    names: String = "IP:127.0.0.1,DNS:localhost"
) throws -> (certificate: String, key: String, folder: String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let certificate = folder.appendingPathComponent("cert.pem").path
    let key = folder.appendingPathComponent("key.pem").path
    let command = [
        "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=" + names,
    ]
    let result = try ChildProcess(command).finish(seconds: 30)
    guard result.status == 0 else {
        throw ChildProcessError.failed(command: command, status: result.status, standardError: result.standardError)
    }
    return (certificate, key, folder.path)
}
