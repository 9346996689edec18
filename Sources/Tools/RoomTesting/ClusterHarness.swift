import Foundation
import Glibc
import Synchronization

/// The addresses cluster tests run their nodes on: Linux routes all of 127.0.0.0/8 to the loopback interface,
/// so each node gets an address of its own without any setup.
public enum NodeAddresses {
    public static let all = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]

    /// The first of `all` that does not bind a TCP socket here, or `nil` when they all do.
    public static func unbindable() -> String? {
        all.first { host in
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return true }
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr(host)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } != 0
        }
    }
}

/// One `clubroom serve` process of a multi-node test, on an address of its own, with the fault tools a test
/// needs: `kill -9`, SIGSTOP and SIGCONT, all by its PID. Its stderr (the server's log) is collected.
public final class ServeNode: @unchecked Sendable {
    // Safe to share: the process and the collector are set up once; the collector locks its own lines.
    public let host: String
    public let data: TemporaryDirectory
    public let process = Process()
    public let log: LineCollector
    /// The WebSocket port, read from the log's "listening on" line.
    public let port: Int

    /// Starts `clubroom serve --listen HOST:0 --media HOST:0 --data DIR` plus `arguments`, inside the network
    /// namespace when one is given, and waits for it to listen. `data` is DIR: a new folder unless given (a
    /// server started again on the data of one stopped).
    public init(
        host: String, arguments: [String] = [], namespace: NetworkNamespace? = nil, data: TemporaryDirectory? = nil
    ) throws {
        self.host = host
        self.data = data ?? TemporaryDirectory()
        let serve =
            [
                try clubroomBinary().path, "serve", "--listen", "\(host):0", "--media", "\(host):0", "--data",
                self.data.path,
            ]
            + arguments
        let command = namespace.map { $0.wrap(serve) } ?? serve
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        log = LineCollector(errors.fileHandleForReading)
        try process.run()
        let prefix = "listening on ws://\(host):"
        guard let index = log.wait(timeout: 20, { $0.contains(prefix) }) else {
            process.terminate()
            throw ChildProcessError.failed(
                command: command, status: -1, standardError: log.all.joined(separator: "\n"))
        }
        let line = log.all[index]
        let rest = line[line.range(of: prefix)!.upperBound...]
        port = Int(rest.prefix { $0.isNumber }) ?? 0
    }

    deinit {
        stop()
        data.remove()
    }

    public var pid: pid_t { process.processIdentifier }

    /// `kill -9`: the node dies at once, leaving everything as a crash would.
    public func kill9() {
        guard process.isRunning else { return }
        kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP: the node is frozen; its sockets stay open and nothing answers.
    public func freeze() { if process.isRunning { ProcessFreezing.freeze(pid) } }

    /// SIGCONT: a frozen node runs again.
    public func thaw() { if process.isRunning { ProcessFreezing.thaw(pid) } }

    /// SIGTERM, then `kill -9` if it is still running after `seconds`.
    public func stop(seconds: Double = 10) {
        guard process.isRunning else { return }
        kill(pid, SIGCONT)
        process.terminate()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        kill9()
        process.waitUntilExit()
    }
}

/// A network namespace of a test's own, for partitions and loss between nodes: its own loopback (all of
/// 127.0.0.0/8), where nftables rules on the input hook drop packets silently (rules on the output hook would
/// return EPERM to the sender instead, which no real partition does). The kernel here has no netem, so delay
/// is made elsewhere (a relay in the process).
///
/// Needs root, `ip` (iproute2), `nsenter` and `nft` (nftables); `unavailableReason` says what is missing, for
/// a test's skip message.
public final class NetworkNamespace: @unchecked Sendable {
    // Safe to share: `name` is fixed; the namespace is changed only through commands.
    public let name: String

    /// Why namespaces cannot be used here, or `nil` when they can.
    public static let unavailableReason = missingRootOrTools(
        "network namespaces need root", tools: ["ip", "nsenter", "nft"],
        from: "make test-deps installs iproute2 and nftables")

    /// Creates the namespace and brings its loopback up.
    public init() throws {
        name = "clubroom-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try Self.run(["ip", "netns", "add", name])
        try Self.run(["ip", "-n", name, "link", "set", "lo", "up"])
        try Self.run(["ip", "netns", "exec", name, "nft", "add", "table", "inet", "clubroom"])
        try Self.run([
            "ip", "netns", "exec", name, "nft", "add", "chain", "inet", "clubroom", "input",
            "{ type filter hook input priority 0; }",
        ])
    }

    deinit {
        _ = try? Self.run(["ip", "netns", "delete", name])
    }

    /// The command run inside the namespace, keeping its PID (nsenter execs it without forking), so that
    /// signals sent to the process reach the program itself.
    public func wrap(_ command: [String]) -> [String] {
        [findTool("nsenter") ?? "/usr/bin/nsenter", "--net=/run/netns/\(name)", "--"] + command
    }

    /// Drops every packet from `source` to `destination` silently (one direction; call twice for both).
    public func partition(from source: String, to destination: String) throws {
        try nft(["add", "rule", "inet", "clubroom", "input", "ip", "saddr", source, "ip", "daddr", destination, "drop"])
    }

    /// Drops `percent` of the packets arriving at `destination`, at random.
    public func loss(percent: Int, to destination: String) throws {
        try nft([
            "add", "rule", "inet", "clubroom", "input", "ip", "daddr", destination, "numgen", "random", "mod", "100",
            "<", String(percent), "drop",
        ])
    }

    /// Removes every partition and loss rule.
    public func heal() throws {
        try nft(["flush", "chain", "inet", "clubroom", "input"])
    }

    /// Runs a command inside the namespace and waits for it; returns its exit status and output.
    @discardableResult
    public func run(_ command: [String]) -> (status: Int32, output: String) {
        let wrapped = wrap(command)
        return spawnAndWait(wrapped[0], Array(wrapped.dropFirst()))
    }

    private func nft(_ arguments: [String]) throws {
        try Self.run(["ip", "netns", "exec", name, "nft"] + arguments)
    }

    private static func run(_ command: [String]) throws {
        guard let tool = findTool(command[0]) else {
            throw ChildProcessError.binaryNotFound(searched: [command[0]])
        }
        let result = spawnAndWait(tool, Array(command.dropFirst()))
        guard result.status == 0 else {
            throw ChildProcessError.failed(command: command, status: result.status, standardError: result.output)
        }
    }
}

/// Tries a TCP connection from `source` to `host:port` for at most `milliseconds`: `.connected`, `.refused`, or
/// `.silent` when nothing answered (a partition, or a frozen listener's full backlog).
public enum ConnectProbe: Equatable, Sendable {
    case connected
    case refused
    case silent

    public static func probe(
        from source: String? = nil, to host: String, port: Int, milliseconds: Int32 = 300
    )
        -> ConnectProbe
    {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return .refused }
        defer { close(descriptor) }
        if let source {
            var local = ipv4Address(source, port: 0)
            _ = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if connectIPv4(descriptor, host: host, port: port) == 0 { return .connected }
        guard errno == EINPROGRESS else { return .refused }
        var descriptorPoll = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptorPoll, 1, milliseconds) > 0 else { return .silent }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length)
        return code == 0 ? .connected : .refused
    }
}

/// Sends a plain HTTP request to a server and returns its status line, or `nil` when nothing answered within
/// `milliseconds` (a frozen server still accepts connections, but answers nothing).
public func httpStatusLine(host: String, port: Int, milliseconds: Int = 500) -> String? {
    let request = "GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n"
    let answer = askOnce(host: host, port: port, request, milliseconds: milliseconds, capacity: 512)
    return answer?.split(separator: "\r\n").first.map(String.init)
}
