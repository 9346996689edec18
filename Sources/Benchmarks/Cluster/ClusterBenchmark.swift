import BenchmarkSupport
import ClusterState
import Crypto
import Foundation
import Platform
import RedisClient
import RoomCore
import RoomProtocol
import RoomTokens
import RoomTransport
import ServerBenchmarks
import StrictJSON
import Synchronization
import WebSocket

/// `clubroom bench requests` and `clubroom bench failover`: a cluster of `clubroom serve` nodes on 127.0.0.2-4
/// sharing a `redis-server` of the bench's own (Debian's `redis-server` must be installed).
///
/// - requests: a client of a node that does not own the room chats to itself; each chat crosses to the owner
///   through Redis and its outcome comes back the same way. The floor is the same round trip through a server
///   alone, measured in the same run.
/// - failover: the room's owner is killed (`kill -9`) again and again while a client of another node chats;
///   the time until Redis holds another owner's lease, and every event the clients of the other nodes saw,
///   checked for losses and repeats.
public enum ClusterBenchmark {
    static let hosts = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    static let room = "bench"

    /// A bench cluster: its Redis, its token secret, its nodes.
    final class Cluster {
        let folder: URL
        let redis: Process
        let redisPort: Int
        let issuer: TokenIssuer
        var nodes: [String: ServerChild] = [:]
        var nodeHosts: [String: String] = [:]

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "clubroom-bench-cluster-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            issuer = TokenIssuer(secret: try SecretFile.loadOrCreate(at: folder.appendingPathComponent("secret").path))
            guard
                let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first(where: {
                    FileManager.default.isExecutableFile(atPath: $0)
                })
            else {
                throw PlacedError(
                    place: "bench", problem: "redis-server is not installed (apt-get install redis-server)")
            }
            redisPort = Int.random(in: 20_000...60_000)
            redis = Process()
            redis.executableURL = URL(fileURLWithPath: executable)
            redis.arguments = [
                "--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
                folder.path, "--daemonize", "no", "--protected-mode", "no",
            ]
            redis.standardOutput = FileHandle.nullDevice
            redis.standardError = FileHandle.nullDevice
            try redis.run()
            let connection = RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: redisPort))
            let deadline = Date().addingTimeInterval(5)
            while (try? connection.connect()) == nil, Date() < deadline { usleep(20_000) }
            connection.close()
        }

        deinit {
            for node in nodes.values { node.stop() }
            kill(redis.processIdentifier, SIGKILL)
            redis.waitUntilExit()
            try? FileManager.default.removeItem(at: folder)
        }

        var redisURL: String { "redis://127.0.0.1:\(redisPort)" }

        func start(_ name: String, on host: String) throws {
            nodes[name] = try ServerChild(
                binary: "/proc/self/exe",
                arguments: [
                    "serve", "--listen", "\(host):0", "--media", "\(host):0", "--data",
                    folder.appendingPathComponent("data-\(name)").path, "--secret-file",
                    folder.appendingPathComponent("secret").path, "--cluster", redisURL, "--node", name,
                ], host: host)
            nodeHosts[name] = host
        }

        func url(_ name: String) -> String { "ws://\(nodeHosts[name] ?? ""):\(nodes[name]?.port ?? 0)/rooms/\(room)" }

        func token(_ identity: String, role: String) throws -> String {
            let now = Int64(Date().timeIntervalSince1970)
            return try issuer.issue(
                TokenClaims(
                    subject: identity, name: identity, room: ClusterBenchmark.room, role: role, expiresAt: now + 3600,
                    notBefore: now - 60))
        }

        /// The node name in the room's lease, if any.
        func owner(_ connection: RedisConnection) -> String? {
            guard let reply = try? connection.command("GET", ClusterKeys.owner(ClusterBenchmark.room)),
                let text = reply.string
            else { return nil }
            return text.split(separator: "|").first.map(String.init)
        }
    }

    /// A client of one node: what it was sent, in order, with the time it came.
    final class Client: Sendable {
        struct State {
            var joined = false
            var messages: [(at: Int64, text: String)] = []
            var closed = false
        }

        final class Box: Sendable {
            let state = Mutex(State())
        }

        let box = Box()
        let connection: WebSocketClient

        init(url: String, token: String, loop: EventLoop) throws {
            let box = self.box
            var headers = HTTPHeaders()
            headers.add("Authorization", "Bearer \(token)")
            var options = WebSocketOptions()
            options.maxMessageSize = ControlLimits.maxServerMessageBytes
            connection = try WebSocketClient.connect(
                to: url, headers: headers, options: options, loop: loop,
                handler: WebSocketClient.Handler(
                    onMessage: { payload in
                        guard case .text(let text) = payload else { return }
                        let now = MonotonicClock.nanoseconds()
                        box.state.withLock { state in
                            if text.hasPrefix(#"{"type":"joined""#) { state.joined = true }
                            state.messages.append((now, text))
                        }
                    },
                    onClose: { _, _ in box.state.withLock { $0.closed = true } }))
        }

        func waitJoined(seconds: Double = 10) throws {
            let deadline = Date().addingTimeInterval(seconds)
            while !box.state.withLock({ $0.joined }), Date() < deadline { usleep(10_000) }
            guard box.state.withLock({ $0.joined }) else {
                throw PlacedError(place: "bench", problem: "a client did not join within \(Int(seconds)) s")
            }
        }

        /// The chats received, by number ("ping N"), in order, with when each came.
        func chats() -> [(number: Int, at: Int64)] {
            box.state.withLock { $0.messages }.compactMap { message in
                guard message.text.hasPrefix(#"{"type":"chat""#),
                    let range = message.text.range(of: #""text":"ping "#),
                    let number = Int(message.text[range.upperBound...].prefix { $0.isNumber })
                else { return nil }
                return (number, message.at)
            }
        }

        /// The `seq` of every numbered event received since `since` (monotonic ns), in order. (Joins announced
        /// together right after a client's own join may repeat numbers its snapshot covered: clients ignore
        /// those, and a round starts well after every join.)
        func sequence(since: Int64) -> [Int64] {
            box.state.withLock { $0.messages }.filter { $0.at >= since }.compactMap { message in
                guard case .object(let object)? = try? StrictJSONParser(maxBytes: 1 << 24).parse(message.text),
                    case .integer(let seq)? = object["seq"]
                else { return nil }
                return seq
            }
        }
    }

    /// Sends `count` chats to the client itself, 110 ms apart (under the rate limit), and returns each round
    /// trip in milliseconds.
    static func roundTrips(_ client: Client, count: Int, identity: String, from first: Int = 1) -> [Double] {
        var sent: [Int: Int64] = [:]
        for number in first..<(first + count) {
            sent[number] = MonotonicClock.nanoseconds()
            client.connection.send(text: #"{"type":"chat","text":"ping \#(number)","to":{"peer":"\#(identity)"}}"#)
            usleep(110_000)
        }
        usleep(500_000)
        return client.chats().compactMap { chat in
            sent[chat.number].map { Double(chat.at - $0) / 1e6 }
        }
    }

    // MARK: requests

    public static func runRequests(seconds: Int) throws -> BenchmarkReport {
        let count = max(20, seconds * 1000 / 110)
        let loop = try EventLoop(name: "bench-clients")
        defer { loop.shutdown() }

        // The floor: a server alone, in the same run.
        let alone = try ServerFolder()
        defer { alone.remove() }
        let issuer = alone.issuer
        let server = try ServerChild(binary: "/proc/self/exe", arguments: alone.serveArguments)
        let now = Int64(Date().timeIntervalSince1970)
        let lone = try Client(
            url: "ws://127.0.0.1:\(server.port)/rooms/\(room)",
            token: try issuer.issue(
                TokenClaims(
                    subject: "edge", name: "edge", room: room, role: "audience", expiresAt: now + 3600,
                    notBefore: now - 60)), loop: loop)
        try lone.waitJoined()
        let floor = roundTrips(lone, count: count, identity: "edge")
        server.stop()

        // Across nodes: the room's owner is the node its first client joined through.
        let cluster = try Cluster()
        try cluster.start("a", on: hosts[0])
        try cluster.start("b", on: hosts[1])
        let host = try Client(url: cluster.url("a"), token: try cluster.token("host", role: "host"), loop: loop)
        try host.waitJoined()
        let edge = try Client(url: cluster.url("b"), token: try cluster.token("edge", role: "audience"), loop: loop)
        try edge.waitJoined()
        let across = roundTrips(edge, count: count, identity: "edge")
        let floorP99 = percentile(floor, 0.99)
        var notes = [
            "\(count) chats per condition, 110 ms apart, from a client to itself; the floor is the same client and "
                + "server alone; across nodes, the chat goes from node b through Redis to the owner, node a, and "
                + "its outcome back: \(across.count) of \(count) answered"
        ]
        #if DEBUG
        notes.append("debug build: build with 'swift build -c release' for real figures")
        #endif
        return BenchmarkReport(
            name: "requests",
            rows: [
                .init("alone: request to event, p50", percentile(floor, 0.5), "ms"),
                .init("alone: request to event, p99", floorP99, "ms"),
                .init("across nodes: request to event, p50", percentile(across, 0.5), "ms"),
                .init("across nodes: request to event, p99", percentile(across, 0.99), "ms", target: 25),
                .init(
                    "across nodes: answered", Double(across.count), "requests", target: Double(count), goal: .atLeast),
            ], notes: notes)
    }

    // MARK: failover

    public static func runFailover(kills: Int) throws -> BenchmarkReport {
        let loop = try EventLoop(name: "bench-clients")
        defer { loop.shutdown() }
        let cluster = try Cluster()
        var next = 1
        var clients: [String: Client] = [:]
        /// A node named anew on `host`, with a listener in the room (so it watches the room and may take it over).
        func startNode(on host: String) throws -> String {
            let name = "n\(next)"
            next += 1
            try cluster.start(name, on: host)
            let client = try Client(
                url: cluster.url(name), token: try cluster.token("listener-\(name)", role: "host"), loop: loop)
            try client.waitJoined()
            clients[name] = client
            return name
        }
        var names = try hosts.map { try startNode(on: $0) }
        let redis = RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: cluster.redisPort))
        defer { redis.close() }

        var times: [Double] = []
        var lost = 0
        var repeated = 0
        var outOfOrder = 0
        var chatNumber = 0
        for _ in 0..<kills {
            guard let owner = cluster.owner(redis), let victim = names.firstIndex(of: owner) else {
                throw PlacedError(place: "bench failover", problem: "the room has no owner in Redis")
            }
            // A survivor chats throughout, to itself and everyone.
            let survivors = names.filter { $0 != owner }
            let chatter = clients[survivors[0]]!
            let chatting = Atomic<Bool>(true)
            let sent = Mutex<[Int]>([])
            let first = chatNumber + 1
            let roundStart = MonotonicClock.nanoseconds()
            startThread(named: "bench-chatter") {
                var number = first
                while chatting.load(ordering: .relaxed) {
                    chatter.connection.send(text: #"{"type":"chat","text":"ping \#(number)"}"#)
                    sent.withLock { $0.append(number) }
                    number += 1
                    usleep(150_000)
                }
            }
            usleep(500_000)
            let killedAt = Date()
            kill(cluster.nodes[owner]!.process.processIdentifier, SIGKILL)
            cluster.nodes[owner]!.process.waitUntilExit()
            var newOwner: String?
            while Date().timeIntervalSince(killedAt) < 30 {
                if let found = cluster.owner(redis), found != owner {
                    newOwner = found
                    break
                }
                usleep(10_000)
            }
            guard newOwner != nil else {
                throw PlacedError(place: "bench failover", problem: "no new owner 30 s after killing \(owner)")
            }
            times.append(Date().timeIntervalSince(killedAt))
            usleep(1_500_000)
            chatting.store(false, ordering: .relaxed)
            usleep(600_000)
            chatNumber = sent.withLock { $0.last ?? chatNumber }
            // What the survivors' clients saw: each event once, in order; every chat the chatter saw come back
            // (it took effect) seen by every survivor.
            let echoed = Set(chatter.chats().map(\.number).filter { $0 >= first })
            for name in survivors {
                guard let client = clients[name] else { continue }
                let numbers = client.chats().map(\.number).filter { $0 >= first }
                repeated += numbers.count - Set(numbers).count
                lost += echoed.subtracting(numbers).count
                let seqs = client.sequence(since: roundStart)
                outOfOrder += zip(seqs, seqs.dropFirst()).filter { $0.1 <= $0.0 }.count

            }
            // The killed node's host comes back under a new name, with a listener of its own.
            cluster.nodes[owner] = nil
            clients[owner] = nil
            names.remove(at: victim)
            names.insert(try startNode(on: cluster.nodeHosts[owner] ?? hosts[0]), at: victim)
            usleep(1_000_000)
        }
        let sorted = times.sorted()
        var notes = [
            "\(kills) kills of the room's owner (kill -9), three nodes, a listener on each; time from the kill until "
                + "Redis holds another node's lease; events checked on the clients of the nodes left"
        ]
        #if DEBUG
        notes.append("debug build: build with 'swift build -c release' for real figures")
        #endif
        return BenchmarkReport(
            name: "failover",
            rows: [
                .init("time to a new owner, median", percentile(sorted, 0.5), "s", target: 6.5),
                .init("time to a new owner, max", sorted.last ?? 0, "s", target: 10),
                .init("time to a new owner, min", sorted.first ?? 0, "s"),
                .init("events lost", Double(lost), "events", target: 0),
                .init("events repeated", Double(repeated), "events", target: 0),
                .init("events out of order", Double(outOfOrder), "events", target: 0),
            ], notes: notes)
    }
}
