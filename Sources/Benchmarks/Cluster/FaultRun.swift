import BenchmarkSupport
import Crypto
import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomTokens
import ServerBenchmarks
import StrictJSON
import Synchronization

/// `clubroom bench faults`: the cluster under one fault at a time, judged by what its clients saw.
///
/// Three `clubroom serve --cluster` nodes (127.0.0.2-4) and one `redis-server` with its append-only file
/// (127.0.0.5), all inside a network namespace of their own when one can be made (root, `ip`, `nsenter`, `nft`),
/// else on the machine's loopback; a dozen `clubroom bot`s, four through each node, send uniquely numbered chats
/// and topics, raise and lower hands, and move one another between speaker and audience, about ten requests a
/// second in all. Faults, one at a time and in turn: `kill -9` of a node (started again 3 s later, on its port
/// and data), `SIGSTOP` of a node for 6–12 s, `kill -9` of Redis (started again on its file 3 s later),
/// `SIGSTOP` of Redis for 8 s, a node cut from Redis both ways for 8 s, and only Redis → node for 8 s (the two
/// cuts with nftables rules inside the namespace; skipped, and said so, without one).
///
/// The figures (`FaultAnalysis`): requests sent; refused but applied (an `error` answer, other than
/// `unconfirmed`, to a request whose effect appeared anyway: goal 0); duplicates (a numbered chat or topic a
/// client saw take effect twice: goal 0); ghosts (a client connected and joined that another client's list of
/// the room lacks, at two looks 3 s apart once the cluster has settled after a fault: goal 0); and for each
/// fault kind, the longest time from the fault's end until every client had a chat of its own answered again.
public enum FaultRun {
    static let room = "faults"
    static let nodeHosts = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]

    /// One fault kind, as the report names it.
    public enum Fault: String, CaseIterable, Sendable {
        case nodeKill = "kill -9 of a node"
        case nodeStop = "SIGSTOP of a node"
        case redisKill = "kill -9 of Redis"
        case redisStop = "SIGSTOP of Redis"
        case nodeCut = "a node cut from Redis"
        case redisToNodeCut = "only Redis -> node cut"

        var needsNamespace: Bool { self == .nodeCut || self == .redisToNodeCut }
    }

    /// A network namespace with a firewall table whose input-hook rules drop packets silently.
    final class Namespace {
        let name = "clubroom-faults-\(getpid())"
        let nsenter: String

        /// Why a namespace cannot be made here, or nil.
        static var unavailableReason: String? {
            if getuid() != 0 { return "network namespaces need root" }
            for name in ["ip", "nsenter", "nft"] where tool(name) == nil { return "'\(name)' is not installed" }
            return nil
        }

        static func tool(_ name: String) -> String? {
            ["/usr/sbin/", "/usr/bin/", "/sbin/", "/bin/"].map { $0 + name }
                .first { FileManager.default.isExecutableFile(atPath: $0) }
        }

        init() throws {
            nsenter = Self.tool("nsenter") ?? "/usr/bin/nsenter"
            try run(["ip", "netns", "add", name])
            try run(["ip", "-n", name, "link", "set", "lo", "up"])
            try run(["ip", "netns", "exec", name, "nft", "add", "table", "inet", "faults"])
            try run([
                "ip", "netns", "exec", name, "nft", "add", "chain", "inet", "faults", "input",
                "{ type filter hook input priority 0; }",
            ])
        }

        deinit { try? run(["ip", "netns", "delete", name]) }

        /// The command run inside the namespace with its own PID (nsenter does not fork).
        func wrap(_ command: [String]) -> [String] { [nsenter, "--net=/run/netns/\(name)", "--"] + command }

        func drop(from source: String, to destination: String) throws {
            try run([
                "ip", "netns", "exec", name, "nft", "add", "rule", "inet", "faults", "input", "ip", "saddr", source,
                "ip", "daddr", destination, "drop",
            ])
        }

        func heal() throws {
            try run(["ip", "netns", "exec", name, "nft", "flush", "chain", "inet", "faults", "input"])
        }

        private func run(_ command: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.tool(command[0]) ?? command[0])
            process.arguments = Array(command.dropFirst())
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw PlacedError(place: "bench faults", problem: "\(command.joined(separator: " ")) failed")
            }
        }
    }

    /// Something shared between the run's threads, behind a lock.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>

        init(_ value: Value) { self.value = Mutex(value) }

        func withLock<Result>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
    }

    /// A `clubroom bot` in the room: its command lines in, its event lines out, each with when it came.
    final class Bot: @unchecked Sendable {
        let identity: String
        let role: String
        let node: Int
        let process = Process()
        private let input: FileHandle
        let lines = Shared<[FaultAnalysis.Line]>([])

        init(identity: String, role: String, node: Int, command: [String]) throws {
            self.identity = identity
            self.role = role
            self.node = node
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            let stdin = Pipe()
            let stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            input = stdin.fileHandleForWriting
            try process.run()
            let reader = stdout.fileHandleForReading
            let lines = lines
            startThread(named: "bench-log") {
                var pending = Data()
                while true {
                    let chunk = reader.availableData
                    if chunk.isEmpty { return }
                    pending.append(chunk)
                    let now = MonotonicClock.milliseconds()
                    while let end = pending.firstIndex(of: 0x0A) {
                        let text = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
                        pending.removeSubrange(pending.startIndex...end)
                        lines.withLock { $0.append(FaultAnalysis.Line(at: now, text: text)) }
                    }
                }
            }
        }

        func send(_ line: String) { try? input.write(contentsOf: Data((line + "\n").utf8)) }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        var record: FaultAnalysis.BotRecord {
            FaultAnalysis.BotRecord(identity: identity, lines: lines.withLock { $0 })
        }
    }

    /// Runs faults in turn for about `minutes` minutes (every kind at least once) and reports.
    public static func run(minutes: Int, log: @escaping @Sendable (String) -> Void) throws -> BenchmarkReport {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        // A bot that ended must not end the run when it is written to.
        signal(SIGPIPE, SIG_IGN)
        var notes: [String] = []
        let namespace: Namespace?
        if let reason = Namespace.unavailableReason {
            namespace = nil
            notes.append("no network namespace (\(reason)): the two Redis cuts were skipped")
            log("skipping the Redis cuts: \(reason)")
        } else {
            namespace = try Namespace()
        }
        let wrap: ([String]) -> [String] = { namespace?.wrap($0) ?? $0 }
        let redisHost = namespace == nil ? "127.0.0.1" : "127.0.0.5"

        // Redis, with its append-only file.
        guard let redisServer = Namespace.tool("redis-server") else {
            throw PlacedError(
                place: "bench faults", problem: "redis-server is not installed (apt-get install redis-server)")
        }
        let redisPort = Int.random(in: 20_000...60_000)
        var redis = Process()
        func startRedis() throws {
            redis = Process()
            let command = wrap([
                redisServer, "--port", String(redisPort), "--bind", redisHost, "--save", "", "--appendonly", "yes",
                "--appendfsync", "everysec", "--dir", folder.path, "--daemonize", "no", "--protected-mode", "no",
            ])
            redis.executableURL = URL(fileURLWithPath: command[0])
            redis.arguments = Array(command.dropFirst())
            redis.standardOutput = FileHandle.nullDevice
            redis.standardError = FileHandle.nullDevice
            try redis.run()
            usleep(300_000)
        }
        try startRedis()
        defer {
            kill(redis.processIdentifier, SIGCONT)
            kill(redis.processIdentifier, SIGKILL)
            redis.waitUntilExit()
        }

        // The nodes, each on a port of its own kept across restarts.
        let secretPath = folder.appendingPathComponent("secret").path
        let issuer = TokenIssuer(secret: try SecretFile.loadOrCreate(at: secretPath))
        let ports = nodeHosts.map { _ in Int.random(in: 20_000...60_000) }
        var nodes: [ServerChild?] = [nil, nil, nil]
        func startNode(_ index: Int) throws {
            let arguments = [
                executable, "serve", "--listen", "\(nodeHosts[index]):\(ports[index])", "--media",
                "\(nodeHosts[index]):0", "--data", folder.appendingPathComponent("data-n\(index + 1)").path,
                "--secret-file", secretPath, "--cluster", "redis://\(redisHost):\(redisPort)", "--node",
                "n\(index + 1)",
            ]
            let command = wrap(arguments)
            // A node killed a moment ago is still registered (for up to 5 s): its name is taken until then.
            let deadline = Date().addingTimeInterval(20)
            while true {
                do {
                    nodes[index] = try ServerChild(
                        binary: command[0], arguments: Array(command.dropFirst()), host: nodeHosts[index])
                    return
                } catch  where Date() < deadline {
                    usleep(500_000)
                }
            }
        }
        for index in nodes.indices { try startNode(index) }
        defer {
            for node in nodes {
                guard let node else { continue }
                kill(node.process.processIdentifier, SIGCONT)
                node.stop()
            }
        }

        // A dozen bots, four through each node; the host's node claims the room first.
        let now = Int64(Date().timeIntervalSince1970)
        var bots: [Bot] = []
        let roles = ["host", "moderator", "moderator"] + Array(repeating: "audience", count: 9)
        for (index, role) in roles.enumerated() {
            let identity = "b\(index)"
            let token = try issuer.issue(
                TokenClaims(
                    subject: identity, name: identity, room: room, role: role, expiresAt: now + 86_400,
                    notBefore: now - 60))
            let node = index % 3
            let url = "ws://\(nodeHosts[node]):\(ports[node])/rooms/\(room)"
            bots.append(
                try Bot(
                    identity: identity, role: role, node: node,
                    command: wrap([executable, "bot", url, "--token", token])))
            if index == 0 { usleep(1_000_000) }
        }
        defer { for bot in bots { bot.stop() } }
        usleep(3_000_000)

        // Requests: about ten a second, from bots at random, each numbered.
        let operations = Shared<[FaultAnalysis.Operation]>([])
        let sending = Atomic<Bool>(true)
        let botList = bots
        startThread(named: "bench-operate") {
            var number = 1
            var generator = SystemRandomNumberGenerator()
            while sending.load(ordering: .relaxed) {
                let bot = botList.randomElement(using: &generator)!
                let operation = FaultRun.nextOperation(number: number, bot: bot, bots: botList, using: &generator)
                operations.withLock { $0.append(operation) }
                bot.send(operation.command)
                number += 1
                usleep(100_000)
            }
        }

        let kinds = Fault.allCases.filter { !$0.needsNamespace || namespace != nil }
        let deadline = Date().addingTimeInterval(Double(minutes) * 60)
        var round = 0
        var serveTimes: [Fault: [Double]] = [:]
        var ghosts: [String] = []
        var faultCount = 0
        while Date() < deadline || round < kinds.count {
            let fault = kinds[round % kinds.count]
            // Each round of the kinds moves the node faults on to the next node.
            let target = (round + round / kinds.count) % 3
            round += 1
            usleep(3_000_000)
            log(
                "fault \(round): \(fault.rawValue)\(fault == .redisKill || fault == .redisStop ? "" : " (n\(target + 1))")"
            )
            switch fault {
            case .nodeKill:
                if let node = nodes[target] {
                    kill(node.process.processIdentifier, SIGKILL)
                    node.process.waitUntilExit()
                }
                usleep(3_000_000)
                try startNode(target)
            case .nodeStop:
                guard let node = nodes[target] else { continue }
                kill(node.process.processIdentifier, SIGSTOP)
                usleep(UInt32(6_000_000 + (round % 4) * 2_000_000))
                kill(node.process.processIdentifier, SIGCONT)
            case .redisKill:
                kill(redis.processIdentifier, SIGKILL)
                redis.waitUntilExit()
                usleep(3_000_000)
                try startRedis()
            case .redisStop:
                kill(redis.processIdentifier, SIGSTOP)
                usleep(8_000_000)
                kill(redis.processIdentifier, SIGCONT)
            case .nodeCut, .redisToNodeCut:
                guard let namespace else { continue }
                if fault == .nodeCut { try namespace.drop(from: nodeHosts[target], to: redisHost) }
                try namespace.drop(from: redisHost, to: nodeHosts[target])
                usleep(8_000_000)
                try namespace.heal()
            }
            faultCount += 1
            let repaired = MonotonicClock.milliseconds()
            // Settling: every bot sends chats of its own until each has had one answered.
            let settle = Self.settle(bots: bots, after: repaired, limitSeconds: 40)
            serveTimes[fault, default: []].append(settle)
            usleep(2_000_000)
            // A bot that ended is in nobody's list, rightly: only running bots count.
            let first = FaultAnalysis.ghosts(bots.filter(\.process.isRunning).map(\.record))
            usleep(3_000_000)
            let second = FaultAnalysis.ghosts(bots.filter(\.process.isRunning).map(\.record))
            let lasting = first.intersection(second).sorted()
            if !lasting.isEmpty { log("ghosts after \(fault.rawValue): \(lasting.joined(separator: ", "))") }
            ghosts += lasting.map { "\(fault.rawValue): \($0)" }
            if Date() >= deadline, round >= kinds.count { break }
        }
        sending.store(false, ordering: .relaxed)
        usleep(3_000_000)
        let ended = bots.filter { !$0.process.isRunning }.map(\.identity)
        if !ended.isEmpty { notes.append("bots that ended during the run: \(ended.joined(separator: ", "))") }

        let analysis = FaultAnalysis(
            operations: operations.withLock { $0 }, bots: bots.map(\.record))
        var rows: [BenchmarkReport.Row] = [
            .init("faults", Double(faultCount), "faults"),
            .init("operations", Double(analysis.operations.count), "requests"),
            .init("applied", Double(analysis.applied), "requests"),
            .init("refused", Double(analysis.refused), "requests"),
            .init("unconfirmed (outcome unknown)", Double(analysis.unconfirmed), "requests"),
            .init("refused but applied", Double(analysis.refusedButApplied.count), "requests", target: 0),
            .init("duplicates", Double(analysis.duplicates.count), "effects", target: 0),
            .init("ghosts", Double(ghosts.count), "clients", target: 0),
        ]
        for fault in Fault.allCases {
            guard let times = serveTimes[fault], let worst = times.max() else { continue }
            rows.append(.init("serving again after \(fault.rawValue), worst of \(times.count)", worst, "s"))
        }
        notes.append(
            "\(minutes) min, 3 nodes, Redis with appendonly everysec, \(bots.count) bots; serving again: from the "
                + "fault's end until every bot had a chat of its own answered (40 s at most)")
        let codes = analysis.refusedByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        notes.append("refusals by code: \(codes.isEmpty ? "none" : codes.joined(separator: ", "))")
        for item in analysis.refusedButApplied.prefix(10) { notes.append("refused but applied: \(item)") }
        for item in analysis.duplicates.prefix(10) { notes.append("duplicate: \(item)") }
        for item in ghosts.prefix(10) { notes.append("ghost: \(item)") }
        return BenchmarkReport(name: "faults", rows: rows, notes: notes)
    }

    /// One random request from `bot`, numbered `number`.
    static func nextOperation(
        number: Int, bot: Bot, bots: [Bot], using generator: inout some RandomNumberGenerator
    ) -> FaultAnalysis.Operation {
        let at = MonotonicClock.milliseconds()
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        let roll = Int.random(in: 0..<100, using: &generator)
        let moderates = bot.role == "host" || bot.role == "moderator"
        if moderates, roll < 12 {
            return .init(id: number, bot: bot.identity, kind: .topic, text: "t\(number)", at: at, wallAt: wall)
        }
        if moderates, roll < 30 {
            let target = bots.filter { $0.role == "audience" }.randomElement(using: &generator)!
            let role = Bool.random(using: &generator) ? "speaker" : "audience"
            return .init(
                id: number, bot: bot.identity, kind: .setRole, target: target.identity, role: role, at: at, wallAt: wall
            )
        }
        if !moderates, roll < 20 {
            return .init(
                id: number, bot: bot.identity, kind: Bool.random(using: &generator) ? .raiseHand : .lowerHand, at: at,
                wallAt: wall)
        }
        return .init(id: number, bot: bot.identity, kind: .chat, text: "c\(number)", at: at, wallAt: wall)
    }

    /// Every 250 ms, each bot not yet answered sends a chat of its own, until each had one answered after
    /// `after`: the seconds that took (`limitSeconds` when some never were).
    static func settle(
        bots: [Bot], after: Int64, limitSeconds: Int
    ) -> Double {
        var waiting = Set(bots.map(\.identity))
        var probes: [String: [String]] = [:]
        var number = 0
        let start = MonotonicClock.milliseconds()
        var last = start
        while !waiting.isEmpty, MonotonicClock.milliseconds() - start < Int64(limitSeconds) * 1000 {
            for bot in bots where waiting.contains(bot.identity) {
                number += 1
                let text = "p\(after)-\(bot.identity)-\(number)"
                probes[bot.identity, default: []].append(text)
                bot.send(#"{"cmd":"chat","text":"\#(text)"}"#)
            }
            usleep(250_000)
            for bot in bots where waiting.contains(bot.identity) {
                let mine = Set(probes[bot.identity] ?? [])
                let answered = bot.lines.withLock { lines in
                    lines.first { line in
                        guard line.at >= after, line.text.contains(#""event":"chat""#),
                            case .object(let event)? = try? StrictJSONParser().parse(line.text),
                            case .string(let text)? = event["text"]
                        else { return false }
                        return mine.contains(text)
                    }
                }
                if let answered {
                    waiting.remove(bot.identity)
                    last = max(last, answered.at)
                }
            }
        }
        guard waiting.isEmpty else { return Double(limitSeconds) }
        return Double(last - after) / 1000
    }
}
