import BenchmarkSupport
import Dispatch
import Foundation
import Platform
import RoomProtocol
import RoomServer
import RoomTransport
import Synchronization
import WebSocket

/// `clubroom bench join`: N WebSocket clients join one room of a real server running in this process on its
/// own thread, over loopback, each with its own token.
public enum JoinBenchmark {
    /// Threads that open connections at the same time.
    static let connectors = 8

    /// Per client: when it started connecting, when its snapshot arrived, and what failed.
    final class Tally: Sendable {
        struct State {
            var started: [Int64]
            var joined: [Int64?]
            var errors: [String] = []
        }

        let state: Mutex<State>
        let finished = DispatchSemaphore(value: 0)

        init(count: Int) {
            state = Mutex(
                State(started: Array(repeating: 0, count: count), joined: Array(repeating: nil, count: count)))
        }
    }

    /// Joins `count` clients and reports how long it took.
    public static func run(clients count: Int) throws -> BenchmarkReport {
        let server = try BenchServer(
            room: "bench", media: false, maxPeersPerRoom: max(count, RoomAuthority.defaultMaxPeers),
            logLevel: .warning)
        defer { server.shutdown() }
        let tokens = try (0..<count).map { index in
            try server.token("bench-\(index)", role: "audience", name: "Bench \(index)")
        }
        let url = server.url
        let loops = try (0..<2).map { _ in try EventLoop(name: "bench-clients") }
        let tally = Tally(count: count)
        let clients = Mutex<[WebSocketClient]>([])
        var clientOptions = WebSocketOptions()
        clientOptions.maxMessageSize = ControlLimits.maxServerMessageBytes
        clientOptions.handshakeTimeout = .seconds(30)
        let options = clientOptions
        let joinedPrefix = Array(#"{"type":"joined""#.utf8)
        let start = MonotonicClock.nanoseconds()
        // Threads of their own: connecting blocks, and the global queues would run only one per core.
        let group = DispatchGroup()
        for connector in 0..<connectors {
            group.enter()
            startThread(named: "bench-connect") {
                defer { group.leave() }
                for index in stride(from: connector, to: count, by: connectors) {
                    var headers = HTTPHeaders()
                    headers.add("Authorization", "Bearer \(tokens[index])")
                    let handler = WebSocketClient.Handler(
                        onMessage: { payload in
                            guard case .text(let text) = payload, text.utf8.starts(with: joinedPrefix) else { return }
                            let time = MonotonicClock.nanoseconds()
                            let all = tally.state.withLock { state -> Bool in
                                guard state.joined[index] == nil else { return false }
                                state.joined[index] = time
                                return state.joined.allSatisfy { $0 != nil }
                            }
                            if all { tally.finished.signal() }
                        },
                        onClose: { code, reason in
                            let joined = tally.state.withLock { $0.joined[index] != nil }
                            if !joined {
                                tally.state.withLock { $0.errors.append("client \(index) closed: \(code) \(reason)") }
                                tally.finished.signal()
                            }
                        })
                    tally.state.withLock { $0.started[index] = MonotonicClock.nanoseconds() }
                    do {
                        let client = try WebSocketClient.connect(
                            to: url, headers: headers, options: options, loop: loops[index % loops.count],
                            handler: handler)
                        clients.withLock { $0.append(client) }
                    } catch {
                        tally.state.withLock { $0.errors.append("client \(index): \(error)") }
                        tally.finished.signal()
                    }
                }
            }
        }
        group.wait()
        let deadline = DispatchTime.now() + .seconds(60)
        while true {
            let (done, failed) = tally.state.withLock { state in
                (
                    state.joined.allSatisfy { $0 != nil },
                    state.errors.count + state.joined.filter { $0 != nil }.count >= count
                )
            }
            if done || failed { break }
            if tally.finished.wait(timeout: deadline) == .timedOut { break }
        }
        let state = tally.state.withLock { $0 }
        let cpu = ProcessSample.current()?.cpuSecondsByThreadName ?? [:]
        for client in clients.withLock({ $0 }) { client.close(code: .goingAway, reason: "") }
        usleep(200_000)
        for loop in loops { loop.shutdown() }

        let latencies = zip(state.started, state.joined).compactMap { started, joined in
            joined.map { Double($0 - started) / 1e6 }
        }.sorted()
        let lastJoin = state.joined.compactMap { $0 }.max() ?? start
        let joinedCount = latencies.count
        let errors = state.errors.count + (count - joinedCount - state.errors.count)
        var notes = ["\(count) clients, \(connectors) connecting at a time, server in this process, loopback"]
        if isDebugBuild { notes.append(buildNote) }
        if let first = state.errors.first { notes.append("first error: \(first)") }
        let threads = cpu.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", $0.value)) s" }
        notes.append("CPU by thread: " + threads.joined(separator: ", "))
        return BenchmarkReport(
            name: "join",
            rows: [
                .init("clients joined", Double(joinedCount), "clients", target: Double(count), goal: .atLeast),
                .init("join latency p50", percentile(latencies, 0.5), "ms"),
                .init("join latency p99", percentile(latencies, 0.99), "ms", target: 1000),
                .init("time until all joined", Double(lastJoin - start) / 1e9, "s", target: 10),
                .init("errors", Double(errors), "errors", target: 0),
            ],
            notes: notes)
    }
}
