import BenchmarkSupport
import Crypto
import Dispatch
import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomTokens
import RoomTransport
import StrictJSON
import Synchronization
import WebSocket

/// `clubroom bench departures`: a crowd of N listeners leaves a room at once while a host chats, against a real
/// `clubroom serve` in a process of its own (so its memory and CPU are the server's alone). Two ways of
/// leaving: the crowd goes silent and the server times it out (a network failing under many listeners), and
/// the crowd closes its connections together. Prints the server's RSS before, at its peak and after, its CPU
/// for the departures, how many messages the host got for them, and the host's chat round trip during the
/// departures beside the same measure before them (the run's own baseline).
public enum DepartureBenchmark {
    /// How the crowd leaves.
    enum Mode: String, CaseIterable {
        /// Stops reading and answering pings; the server's idle timeout removes it.
        case silent
        /// Closes every connection at once.
        case closing
    }

    /// How often the host sends a chat message, for the round trip: under the server's limit of 10 a second.
    static let chatInterval: Duration = .milliseconds(150)
    /// How long the round trip is measured before the crowd leaves.
    static let baselineSeconds = 3.0

    public static func run(clients count: Int, serverBinary: String?) throws -> BenchmarkReport {
        var rows: [BenchmarkReport.Row] = []
        var notes = [
            "\(count) listeners per run; 'clubroom serve' in its own process with its defaults (idle timeout 15 s, "
                + "media on); the host sends a chat to itself every "
                + "\(chatInterval.inMilliseconds) ms"
        ]
        #if DEBUG
        notes.append("debug build: build with 'swift build -c release' for real figures")
        #endif
        for mode in Mode.allCases {
            let result = try measure(mode: mode, clients: count, serverBinary: serverBinary)
            rows += result.rows
            notes += result.notes
        }
        return BenchmarkReport(name: "departures", rows: rows, notes: notes)
    }

    /// What the host saw: chat round trips by when they were sent, and the departures announced.
    final class Host: Sendable {
        struct State {
            var sent: [Int: Int64] = [:]
            var roundTrips: [(sentAt: Int64, milliseconds: Double)] = []
            var departed: Set<String> = []
            var departureMessages = 0
            var firstDeparture: Int64?
            var lastDeparture: Int64?
        }

        let state = Mutex(State())

        func received(_ text: String) {
            let now = MonotonicClock.nanoseconds()
            if text.hasPrefix(#"{"type":"chat""#), let range = text.range(of: #""text":"ping "#) {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                guard let number = Int(digits) else { return }
                state.withLock { state in
                    guard let sent = state.sent.removeValue(forKey: number) else { return }
                    state.roundTrips.append((sent, Double(now - sent) / 1e6))
                }
                return
            }
            guard text.hasPrefix(#"{"type":"peer_left""#) || text.hasPrefix(#"{"type":"peers_left""#),
                case .object(let object)? = try? StrictJSONParser(maxBytes: 1 << 24).parse(text)
            else { return }
            var peers: [String] = []
            if case .string(let peer)? = object["peer"] { peers.append(peer) }
            if case .array(let list)? = object["peers"] {
                for case .object(let entry) in list {
                    if case .string(let peer)? = entry["peer"] { peers.append(peer) }
                }
            }
            state.withLock { state in
                state.departureMessages += 1
                state.departed.formUnion(peers)
                state.firstDeparture = state.firstDeparture ?? now
                state.lastDeparture = now
            }
        }
    }

    static func measure(
        mode: Mode, clients count: Int, serverBinary: String?
    ) throws -> (rows: [BenchmarkReport.Row], notes: [String]) {
        let folder = try ServerFolder()
        defer { folder.remove() }
        let issuer = folder.issuer
        let server = try ServerChild(
            binary: serverBinary ?? "/proc/self/exe",
            arguments: folder.serveArguments + ["--max-peers", "\(max(count + 10, 10_000))"])
        defer { server.stop() }
        let now = Int64(Date().timeIntervalSince1970)
        func token(_ identity: String, role: String) throws -> String {
            try issuer.issue(
                TokenClaims(
                    subject: identity, name: identity, room: "bench", role: role, expiresAt: now + 3600,
                    notBefore: now - 60))
        }
        let url = "ws://127.0.0.1:\(server.port)/rooms/bench"
        var clientOptions = WebSocketOptions()
        clientOptions.maxMessageSize = ControlLimits.maxServerMessageBytes
        clientOptions.handshakeTimeout = .seconds(30)
        let options = clientOptions
        let startRSS = server.residentMegabytes()
        let startAnonymous = server.anonymousMegabytes()

        // The crowd, on loops of its own that can be frozen.
        let crowdLoops = try (0..<2).map { _ in try EventLoop(name: "bench-crowd") }
        let joined = Atomic<Int>(0)
        let joinedPrefix = Array(#"{"type":"joined""#.utf8)
        let crowd = Mutex<[WebSocketClient]>([])
        let tokens = try (0..<count).map { try token("listener-\($0)", role: "audience") }
        let group = DispatchGroup()
        for connector in 0..<JoinBenchmark.connectors {
            group.enter()
            startThread(named: "bench-connect") {
                defer { group.leave() }
                for index in stride(from: connector, to: count, by: JoinBenchmark.connectors) {
                    var headers = HTTPHeaders()
                    headers.add("Authorization", "Bearer \(tokens[index])")
                    let handler = WebSocketClient.Handler(onMessage: { payload in
                        if case .text(let text) = payload, text.utf8.starts(with: joinedPrefix) {
                            joined.add(1, ordering: .relaxed)
                        }
                    })
                    if let client = try? WebSocketClient.connect(
                        to: url, headers: headers, options: options, loop: crowdLoops[index % crowdLoops.count],
                        handler: handler)
                    {
                        crowd.withLock { $0.append(client) }
                    }
                }
            }
        }
        group.wait()
        let joinDeadline = Date().addingTimeInterval(120)
        while joined.load(ordering: .relaxed) < count, Date() < joinDeadline { usleep(20_000) }
        let joinedCount = joined.load(ordering: .relaxed)

        // The host, chatting.
        let host = Host()
        let hostLoop = try EventLoop(name: "bench-host")
        defer { hostLoop.shutdown() }
        var hostHeaders = HTTPHeaders()
        hostHeaders.add("Authorization", "Bearer \(try token("host", role: "host"))")
        let hostClient = try WebSocketClient.connect(
            to: url, headers: hostHeaders, options: options, loop: hostLoop,
            handler: WebSocketClient.Handler(onMessage: { payload in
                if case .text(let text) = payload { host.received(text) }
            }))
        let chatting = Atomic<Bool>(true)
        startThread(named: "bench-chatter") {
            var number = 0
            while chatting.load(ordering: .relaxed) {
                number += 1
                let sentAt = MonotonicClock.nanoseconds()
                host.state.withLock { $0.sent[number] = sentAt }
                // To the host itself: the round trip through the server's loop and its commit, without the bench's
                // own crowd receiving every message.
                hostClient.send(text: #"{"type":"chat","text":"ping \#(number)","to":{"peer":"host"}}"#)
                MonotonicClock.sleep(microseconds: chatInterval.inMicroseconds)
            }
        }
        usleep(UInt32(baselineSeconds * 1_000_000))

        // The departure.
        let withCrowdRSS = server.residentMegabytes()
        let withCrowdAnonymous = server.anonymousMegabytes()
        let cpuBefore = server.cpuSeconds()
        let departStart = MonotonicClock.nanoseconds()
        let thaw = DispatchSemaphore(value: 0)
        switch mode {
        case .silent:
            for loop in crowdLoops { loop.execute { thaw.wait() } }
        case .closing:
            for client in crowd.withLock({ $0 }) { client.close(code: .normal, reason: "") }
        }
        var peakRSS = withCrowdRSS
        let departDeadline = Date().addingTimeInterval(90)
        while host.state.withLock({ $0.departed.count }) < joinedCount, Date() < departDeadline {
            peakRSS = max(peakRSS, server.residentMegabytes())
            usleep(50_000)
        }
        let cpuAfter = server.cpuSeconds()
        let departEnd = MonotonicClock.nanoseconds()
        // Connections the server closed drain for its close timeout (3 s) before they are gone.
        for _ in 0..<80 {
            peakRSS = max(peakRSS, server.residentMegabytes())
            usleep(50_000)
        }
        chatting.store(false, ordering: .relaxed)
        usleep(200_000)
        let afterRSS = server.residentMegabytes()
        let afterAnonymous = server.anonymousMegabytes()
        if mode == .silent {
            for _ in crowdLoops { thaw.signal() }
        }
        for loop in crowdLoops { loop.shutdown() }
        hostClient.close()

        let state = host.state.withLock { $0 }
        let baseline = state.roundTrips.filter { $0.sentAt < departStart }.map(\.milliseconds).sorted()
        let during = state.roundTrips.filter { $0.sentAt >= departStart && $0.sentAt <= departEnd }
            .map(\.milliseconds).sorted()
        let lost = state.sent.keys.filter { $0 > 0 }.count
        let baselineP99 = percentile(baseline, 0.99)
        let spread = Double((state.lastDeparture ?? departEnd) - (state.firstDeparture ?? departEnd)) / 1e9
        let name = mode.rawValue
        let rows: [BenchmarkReport.Row] = [
            .init(
                "\(name): listeners who left", Double(state.departed.count), "peers", target: Double(count),
                goal: .atLeast),
            .init("\(name): server RSS with the crowd", withCrowdRSS, "MB"),
            .init("\(name): server RSS at its peak while they leave", peakRSS, "MB"),
            .init("\(name): server RSS after they left", afterRSS, "MB"),
            // The resident set kept also holds the pages of the program and its libraries first run by the joins
            // and departures (about 5 MB of code read in from their files, shared and clean: libcrypto, NSS, the
            // program's own), which the kernel keeps while memory is plentiful; the memory the crowd cost is the
            // anonymous part, checked below.
            .init("\(name): server RSS kept after they left", afterRSS - startRSS, "MB"),
            // Departures cost memory linear in the crowd and give it back: what stays is at most a tenth of what
            // the crowd itself took, or 8 MB (the store's page caches: three SQLite connections of 2 MB at most).
            .init(
                "\(name): server anonymous memory kept after they left", afterAnonymous - startAnonymous, "MB",
                target: max(8, (withCrowdAnonymous - startAnonymous) / 10)),
            .init("\(name): server CPU for the departures", cpuAfter - cpuBefore, "s"),
            .init("\(name): departure messages the host got", Double(state.departureMessages), "messages"),
            .init("\(name): first to last departure announced", spread, "s"),
            .init("\(name): chat round trip before, p50", percentile(baseline, 0.5), "ms"),
            .init("\(name): chat round trip before, p99", baselineP99, "ms"),
            .init("\(name): chat round trip while they leave, p50", percentile(during, 0.5), "ms"),
            .init("\(name): chat round trip while they leave, p99", percentile(during, 0.99), "ms"),
            // Never stalled: no chat waits more than 100 ms beyond the run's own p99 before the departure.
            .init(
                "\(name): chat round trip while they leave, max", during.last ?? 0, "ms", target: baselineP99 + 100),
        ]
        var notes = [
            "\(name): \(joinedCount) of \(count) joined; server RSS before anyone joined \(Int(startRSS)) MB; "
                + "\(during.count) chat round trips while they left, \(lost) unanswered"
        ]
        if let problem = server.problem { notes.append("\(name): server: \(problem)") }
        return (rows, notes)
    }
}

/// A `clubroom serve` child process: its port from its log, its memory and CPU from /proc.
public final class ServerChild {
    public let process = Process()
    public private(set) var port = 0
    private let errors = Pipe()
    private let firstError = FirstErrorLine()

    /// The server's first error line, if it logged one.
    public var problem: String? { firstError.line.withLock { $0 } }

    final class FirstErrorLine: Sendable {
        let line = Mutex<String?>(nil)
    }

    public init(binary: String, arguments: [String], host: String = "127.0.0.1") throws {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = errors.fileHandleForReading
        var buffer = Data()
        let deadline = Date().addingTimeInterval(30)
        while port == 0, Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            if let range = text.range(of: "listening on ws://\(host):") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
            }
        }
        guard port != 0 else {
            stop()
            throw PlacedError(
                place: "bench server", problem: "did not start: \(String(decoding: buffer, as: UTF8.self))")
        }
        // Keep reading the log so the server never blocks on a full pipe; remember the first error.
        let firstError = firstError
        startThread(named: "bench-log") {
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                if let line = String(decoding: chunk, as: UTF8.self).split(separator: "\n")
                    .first(where: { $0.contains(" ERROR ") })
                {
                    firstError.line.withLock { $0 = $0 ?? String(line) }
                }
            }
        }
    }

    /// The server's resident memory, in megabytes (MiB).
    public func residentMegabytes() -> Double {
        Double(ProcessSample.residentBytes(pid: process.processIdentifier)) / 1_048_576
    }

    /// The anonymous part of the server's resident memory (its heap, without its code read in from files), in
    /// megabytes (MiB).
    public func anonymousMegabytes() -> Double {
        Double(ProcessSample.anonymousResidentBytes(pid: process.processIdentifier)) / 1_048_576
    }

    /// The server's CPU time so far (user and system), in seconds.
    public func cpuSeconds() -> Double {
        guard let sample = ProcessSample(pid: process.processIdentifier) else { return 0 }
        return Double(sample.ticks) / ProcessSample.ticksPerSecond
    }

    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
