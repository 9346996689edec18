import BenchmarkSupport
import Crypto
import Dispatch
import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomServer
import RoomTokens
import RoomTransport
import Synchronization
import WebSocket

/// `clubroom bench directory`: the room directory under load. A real server in this process (its own event-loop
/// thread) holds `rooms` live rooms, each with its host connected, and `watchers` lobbies watch the list over
/// loopback. Hosts change their topics; each watcher notes when each change reaches it.
///
/// Measured: how long a change takes to reach the watchers (every delivery, and the last watcher of each change),
/// paced at 10 changes a second and in a burst of one change per room; how long the whole list takes to be served
/// (the answer to `list`, and a new lobby's first list); and the server thread's CPU per change, net of its idle
/// cost measured in the same run. The floor is the same change reaching a single watcher, measured in the same run
/// before the others connect.
///
/// The thousand watchers read on one thread of this process, so a change reaches the last of them only once that
/// thread has read it for the 999 before: their reading is part of the delivery times, and its CPU per change is
/// printed beside the server's. Each watcher only looks for the markers in the bytes it got, so what it costs is
/// the WebSocket client's own reading.
public enum DirectoryBenchmark {
    public struct Settings: Sendable {
        public var rooms = 1000
        public var watchers = 1000
        /// Changes at 10 a second.
        public var pacedChanges = 100
        public init() {}
    }

    /// When each change reached each watcher, in nanoseconds on the monotonic clock; 0 while it has not.
    final class Arrivals: @unchecked Sendable {
        // @unchecked: each watcher's row is written on the clients' loop thread only, and read after the phase,
        // once every expected arrival was counted under the lock.
        let lock = NSLock()
        var times: [[UInt64]]
        var count = 0

        init(changes: Int, watchers: Int) {
            times = Array(repeating: Array(repeating: 0, count: watchers), count: changes)
        }

        func record(change: Int, watcher: Int, at time: UInt64) {
            lock.withLock {
                guard change < times.count, times[change][watcher] == 0 else { return }
                times[change][watcher] = time
                count += 1
            }
        }

        var total: Int { lock.withLock { count } }
    }

    public static func run(settings: Settings = Settings(), roles: RoleTable) throws -> BenchmarkReport {
        raiseOpenFileLimit()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-directory-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let secretFile = folder.appendingPathComponent("secret").path
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataDirectory: folder.appendingPathComponent("data").path,
            secretFile: secretFile, roles: roles)
        configuration.maxLobbyWatchers = settings.watchers + 10
        let server = try RoomServerRuntime(configuration: configuration, log: ServerLog(minimum: .error))
        defer { server.shutdown() }
        let issuer = TokenIssuer(secret: try SecretFile.load(at: secretFile))
        let now = Int64(Date().timeIntervalSince1970)
        let base = "ws://127.0.0.1:\(server.port)/rooms"
        // Each loop's thread is named in the kernel, so the watchers' CPU can be read apart from the server's.
        let hostLoop = try EventLoop(name: "bench-hosts")
        let watcherLoop = try EventLoop(name: "bench-lobbies")
        defer {
            hostLoop.shutdown()
            watcherLoop.shutdown()
        }
        var options = WebSocketOptions()
        options.maxMessageSize = DirectoryCodec.maxMessageBytes

        // The rooms: a host in each.
        var hosts: [WebSocketClient] = []
        for index in 0..<settings.rooms {
            let token = try issuer.issue(
                TokenClaims(
                    subject: "host-\(index)", name: "Host \(index)", room: "room-\(index)", role: "host",
                    expiresAt: now + 3600, notBefore: now - 60))
            hosts.append(
                try WebSocketClient.connect(
                    to: "\(base)/room-\(index)", headers: HTTPHeaders([("Authorization", "Bearer \(token)")]),
                    options: options, loop: hostLoop, handler: .init(onMessage: { _ in }, onClose: { _, _ in })))
        }
        defer { for host in hosts { host.close() } }
        let invite = try issuer.invite(role: "audience", room: nil, ttl: 3600, now: now)
        let lobbyHeaders = HTTPHeaders([("Authorization", "Bearer \(invite)")])
        // Let the last rooms' starts reach the directory before anyone watches.
        usleep(200_000)

        let total = 20 + settings.pacedChanges + settings.rooms
        let arrivals = Arrivals(changes: total, watchers: settings.watchers)
        let firstLists = Mutex<[UInt64?]>(Array(repeating: nil, count: settings.watchers))
        let listAnswers = Mutex<[Int: UInt64]>([:])
        var sentAt = [UInt64](repeating: 0, count: total)
        var changeNumber = 0
        /// Sets a room's topic to a marker the watchers look for (`"topic":"m<number>"`), noting the time first.
        func change(room: Int) {
            let text = String(
                decoding: ControlCodec.encode(ClientMessage(.setTopic("m\(changeNumber)"))), as: UTF8.self)
            sentAt[changeNumber] = monotonicNanoseconds()
            hosts[room].send(text: text)
            changeNumber += 1
        }

        func watcher(_ index: Int) throws -> WebSocketClient {
            try WebSocketClient.connect(
                to: base, headers: lobbyHeaders, options: options, loop: watcherLoop,
                handler: .init(
                    onMessage: { payload in
                        let arrived = monotonicNanoseconds()
                        guard case .text(let text) = payload else { return }
                        if text.utf8.starts(with: #"{"type":"rooms","#.utf8) {
                            firstLists.withLock { if $0[index] == nil { $0[index] = arrived } }
                            listAnswers.withLock { $0[index] = arrived }
                            return
                        }
                        for number in markers(in: text) { arrivals.record(change: number, watcher: index, at: arrived) }
                    }, onClose: { _, _ in }))
        }

        // The floor: one watcher, twenty changes, 100 ms apart.
        var lobbies: [WebSocketClient] = [try watcher(0)]
        defer { for lobby in lobbies { lobby.close() } }
        try waitUntil(seconds: 30) { firstLists.withLock { $0[0] != nil } }
        for step in 0..<20 {
            change(room: step % settings.rooms)
            usleep(100_000)
        }
        try waitUntil(seconds: 30) { arrivals.total >= 20 }
        let floor = (0..<20).map { milliseconds(from: sentAt[$0], to: arrivals.times[$0][0]) }

        // The others, each timed from its connect to its first list.
        var connectLatencies: [Double] = []
        for index in 1..<settings.watchers {
            let started = monotonicNanoseconds()
            lobbies.append(try watcher(index))
            try waitUntil(seconds: 30) { firstLists.withLock { $0[index] != nil } }
            connectLatencies.append(milliseconds(from: started, to: firstLists.withLock { $0[index] } ?? started))
        }

        // The whole list on request, from watchers that have not asked before (each within its rate).
        var listLatencies: [Double] = []
        for index in stride(from: 1, to: settings.watchers, by: max(1, settings.watchers / 50)) {
            listAnswers.withLock { $0[index] = nil }
            let started = monotonicNanoseconds()
            lobbies[index].send(text: String(decoding: DirectoryCodec.encode(.list), as: UTF8.self))
            try waitUntil(seconds: 30) { listAnswers.withLock { $0[index] != nil } }
            listLatencies.append(milliseconds(from: started, to: listAnswers.withLock { $0[index] } ?? started))
        }

        // Idle: what the server thread costs with everyone connected and nothing changing.
        let idleSeconds = 2.0
        let idleStart = serverThreadCPU()
        let watchersIdleStart = watchersThreadCPU()
        usleep(UInt32(idleSeconds * 1e6))
        let idlePerSecond = (serverThreadCPU() - idleStart) / idleSeconds
        let watchersIdlePerSecond = (watchersThreadCPU() - watchersIdleStart) / idleSeconds

        func deliveries(_ range: Range<Int>) -> (all: [Double], last: [Double]) {
            var all: [Double] = []
            var last: [Double] = []
            for number in range {
                let times = arrivals.times[number]
                all.append(contentsOf: times.map { milliseconds(from: sentAt[number], to: $0) })
                last.append(milliseconds(from: sentAt[number], to: times.max() ?? 0))
            }
            return (all, last)
        }
        /// `count` changes at `perSecond`, each in another room; returns the phase's server CPU, the watchers'
        /// CPU and its length.
        func phase(
            count: Int, perSecond: Int, expecting expected: Int
        ) throws -> (
            cpu: Double, watchersCPU: Double, seconds: Double
        ) {
            let cpuStart = serverThreadCPU()
            let watchersStart = watchersThreadCPU()
            let clock = ContinuousClock.now
            let interval = 1_000_000_000 / UInt64(perSecond)
            let first = monotonicNanoseconds()
            for step in 0..<count {
                // Sent on schedule, not after a sleep's drift: step k goes at first + k × interval.
                let due = first + UInt64(step) * interval
                let wait = Int64(due) - Int64(monotonicNanoseconds())
                if wait > 0 { usleep(UInt32(wait / 1000)) }
                change(room: (step * 7) % settings.rooms)
            }
            try waitUntil(seconds: 60) { arrivals.total >= expected }
            return (serverThreadCPU() - cpuStart, watchersThreadCPU() - watchersStart, seconds(since: clock))
        }

        // Steady: ten changes a second. Busy: every room changes once in five seconds (200 a second), so most
        // changes wait for the 50 ms gathering window and share a message.
        let pacedRange = 20..<(20 + settings.pacedChanges)
        let pacedExpected = 20 + settings.pacedChanges * settings.watchers
        let (pacedCPU, pacedWatchersCPU, pacedSeconds) = try phase(
            count: settings.pacedChanges, perSecond: 10, expecting: pacedExpected)
        let burstRange = pacedRange.upperBound..<total
        let burstExpected = pacedExpected + settings.rooms * settings.watchers
        let (burstCPU, burstWatchersCPU, burstSeconds) = try phase(
            count: settings.rooms, perSecond: max(1, settings.rooms / 5), expecting: burstExpected)

        let paced = deliveries(pacedRange)
        let burst = deliveries(burstRange)
        let pacedNet = max(0, pacedCPU - idlePerSecond * pacedSeconds) / Double(settings.pacedChanges)
        let burstNet = max(0, burstCPU - idlePerSecond * burstSeconds) / Double(settings.rooms)
        let pacedWatchersNet =
            max(0, pacedWatchersCPU - watchersIdlePerSecond * pacedSeconds) / Double(settings.pacedChanges)
        let burstWatchersNet = max(0, burstWatchersCPU - watchersIdlePerSecond * burstSeconds) / Double(settings.rooms)
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        return BenchmarkReport(
            name: "directory: \(settings.rooms) live rooms, \(settings.watchers) lobbies watching",
            rows: [
                .init("floor: change to 1 watcher, p50", percentile(floor, 0.5), "ms"),
                .init("floor: change to 1 watcher, p99", percentile(floor, 0.99), "ms"),
                .init("steady (10/s): change to every watcher, p50", percentile(paced.all, 0.5), "ms"),
                .init("steady (10/s): change to every watcher, p99", percentile(paced.all, 0.99), "ms", target: 100),
                .init(
                    "steady (10/s): change to its last watcher, p99", percentile(paced.last, 0.99), "ms", target: 100),
                .init(
                    "busy (\(max(1, settings.rooms / 5))/s): change to every watcher, p50", percentile(burst.all, 0.5),
                    "ms"),
                .init(
                    "busy (\(max(1, settings.rooms / 5))/s): change to every watcher, p99", percentile(burst.all, 0.99),
                    "ms",
                    target: 100),
                .init("busy: change to its last watcher, max", burst.last.max() ?? 0, "ms"),
                .init("full list on request, p50", percentile(listLatencies, 0.5), "ms"),
                .init("full list on request, p99", percentile(listLatencies, 0.99), "ms", target: 50),
                .init("new lobby to its full list, p99", percentile(connectLatencies, 0.99), "ms", target: 50),
                .init("server CPU per steady change (net of idle)", pacedNet * 1000, "ms"),
                .init("server CPU per busy change (net of idle)", burstNet * 1000, "ms"),
                .init("server CPU idle", idlePerSecond * 100, "% of a core"),
                .init("watchers' CPU per steady change, all of them (net of idle)", pacedWatchersNet * 1000, "ms"),
                .init("watchers' CPU per busy change, all of them (net of idle)", burstWatchersNet * 1000, "ms"),
            ],
            notes: [
                "\(build) build; \(settings.pacedChanges) changes at 10/s, then \(settings.rooms) in 5 s; "
                    + "each change sets one room's topic; the list of \(settings.rooms) rooms is "
                    + "\(listBytes(settings.rooms)) bytes",
                "CPU is the server's event-loop thread (/proc/self/task), net of its idle cost measured in the "
                    + "same run; the watchers' and hosts' loops run on threads of their own",
                "the \(settings.watchers) watchers read on one thread of this process: a change reaches the last "
                    + "one after that thread has read it for all the others, so their CPU per change is part of "
                    + "every delivery time above",
            ])
    }

    /// The change numbers of the markers in a `rooms_changed`, found in its bytes (a watcher costs what its
    /// WebSocket client costs, not what a text search would).
    static func markers(in text: String) -> [Int] {
        var text = text
        return text.withUTF8 { bytes in markers(in: bytes) }
    }

    static let markerKey = Array(#""topic":"m"#.utf8)

    static func markers(in bytes: UnsafeBufferPointer<UInt8>) -> [Int] {
        var found: [Int] = []
        let key = markerKey
        var index = 0
        let end = bytes.count - key.count
        while index <= end {
            guard bytes[index] == key[0] else {
                index += 1
                continue
            }
            var matched = 1
            while matched < key.count && bytes[index + matched] == key[matched] { matched += 1 }
            guard matched == key.count else {
                index += 1
                continue
            }
            index += key.count
            var number = 0
            var digits = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, digits < 18 {
                number = number * 10 + Int(bytes[index] - 0x30)
                digits += 1
                index += 1
            }
            if digits > 0 { found.append(number) }
        }
        return found
    }

    static func listBytes(_ rooms: Int) -> Int {
        let listings = (0..<rooms).map {
            RoomListing(
                room: "room-\($0)", topic: "m\($0)", stage: [.init(name: "Host \($0)", role: .host)], onStage: 1,
                listeners: 0, raisedHands: 0, startedAt: 1_764_412_800_000)
        }
        return DirectoryCodec.encode(.rooms(listings, seq: 1)).count
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded(.up)))]
    }

    static func milliseconds(from start: UInt64, to end: UInt64) -> Double {
        end > start ? Double(end - start) / 1e6 : 0
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds
    }

    static func waitUntil(seconds: Double, line: Int = #line, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else {
                throw BenchmarkFailure(
                    text:
                        "the directory benchmark waited \(Int(seconds)) s in vain (line \(line)); is the machine busy?")
            }
            usleep(1000)
        }
    }

    static func monotonicNanoseconds() -> UInt64 { UInt64(MonotonicClock.nanoseconds()) }

    /// CPU seconds the server's event-loop thread (named `room-server`) has used.
    static func serverThreadCPU() -> Double {
        ProcessSample.current()?.cpuSecondsByThreadName["room-server"] ?? 0
    }

    /// CPU seconds the watchers' event-loop thread (named `bench-lobbies`) has used.
    static func watchersThreadCPU() -> Double {
        ProcessSample.current()?.cpuSecondsByThreadName["bench-lobbies"] ?? 0
    }

    /// 1,000 rooms and 1,000 lobbies need a few thousand descriptors: raise the soft limit to the hard one.
    static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// The benchmark could not finish.
public struct BenchmarkFailure: Error, CustomStringConvertible {
    public var text: String
    public var description: String { text }
}
