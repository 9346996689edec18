import BenchmarkSupport
import Foundation
import Platform
import RoomApp
import RoomAppRuntime
import RoomCore
import RuntimeTesting
import TermUI

/// `clubroom bench ui`: how long a frame of a very large room takes, and what an idle client costs.
public enum UIBenchmark {
    /// A room of `size` peers: a host, `speakers - 1` more speakers, twenty raised hands, and the rest listening.
    public static func room(size: Int, speakers: Int, roles: RoleTable, now: Timestamp) -> RoomSnapshot {
        var peers: [Peer] = []
        peers.reserveCapacity(size)
        peers.append(Peer(id: "host", name: "Host", role: .host, muted: false, joinedAt: 0))
        for index in 1..<speakers {
            peers.append(Peer(id: PeerID("speaker-\(index)"), name: "Speaker \(index)", role: .speaker, muted: false))
        }
        let first = ["Ana", "Bo", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea", "Mio"]
        var index = 0
        while peers.count < size {
            let name = "\(first[index % first.count]) \(index)"
            let hand: Timestamp? = index < 20 ? now - Timestamp(60_000 - index * 1000) : nil
            peers.append(
                Peer(id: PeerID("listener-\(index)"), name: name, handRaisedAt: hand, joinedAt: Timestamp(index)))
            index += 1
        }
        return RoomSnapshot(roomID: "bench", topic: "Benchmark", selfID: "host", peers: peers, seq: 1)
    }

    /// Levels for the speakers at step `step`: a deterministic wobble, different for each speaker.
    static func levels(speakers: Int, step: Int) -> [SpeakerLevel] {
        (0..<speakers).map { index in
            let id: PeerID = index == 0 ? "host" : PeerID("speaker-\(index)")
            let phase = (step * 7 + index * 13) % 40
            return SpeakerLevel(peer: id, level: phase < 20 ? 20 + phase * 4 : 0)
        }
    }

    /// The median and 99th percentile, in milliseconds, of the time to map the state, render the screen and diff
    /// it against the previous frame, over `frames` frames with the speakers' levels changing before each.
    public static func frameTimes(
        size: Int, speakers: Int, width: Int, height: Int, frames: Int, roles: RoleTable
    ) -> (median: Double, p99: Double, runs: Double) {
        let start: Timestamp = 1_800_000_000_000
        var state = AppState(roles: roles)
        _ = reduceApp(&state, .resize(width: width, height: height))
        _ = reduceApp(
            &state, .server(.joined(room(size: size, speakers: speakers, roles: roles, now: start)), seq: 1, at: start))
        // Put the selection in the middle of the audience, where scrolling and windowing work hardest.
        _ = reduceApp(&state, .key(.end, at: start))
        for _ in 0..<(size / 20) { _ = reduceApp(&state, .key(.up, at: start)) }
        let theme = Theme(level: .ansi256)
        var previous = CellBuffer(width: width, height: height)
        var times: [Double] = []
        times.reserveCapacity(frames)
        var totalRuns = 0
        for frame in 0..<frames {
            let now = start + Timestamp(frame) * RoomScreenMapper.frameInterval
            _ = reduceApp(
                &state, .server(.speakers(levels(speakers: speakers, step: frame)), seq: UInt64(frame + 2), at: now))
            let began = MonotonicClock.nanoseconds()
            var buffer = CellBuffer(width: width, height: height)
            RoomScreen.render(RoomScreenMapper.model(state), into: &buffer, theme: theme)
            let runs = buffer.diff(from: previous)
            let ended = MonotonicClock.nanoseconds()
            totalRuns += runs.count
            previous = buffer
            times.append(Double(ended - began) / 1_000_000)
        }
        times.sort()
        return (
            times[times.count / 2], times[min(times.count - 1, times.count * 99 / 100)],
            Double(totalRuns) / Double(frames)
        )
    }

    /// The share of one core an idle client uses (its real screen loop, drawing into memory and diffing as the
    /// terminal would) in a room of `size` while the server sends level updates `rate` times a second.
    public static func idleCPU(
        size: Int, speakers: Int, seconds: Double, rate: Int, roles: RoleTable
    ) throws -> (percent: Double, frames: Int, wakeups: Int) {
        let start = wallClock()
        let snapshot = room(size: size, speakers: speakers, roles: roles, now: start)
        let connection = ScriptedConnection { $0.deliver(.server(.joined(snapshot), seq: 1, at: start)) }
        let sink = HeadlessSink(width: 80, height: 24)
        let loop = try ScreenLoop(state: AppState(roles: roles), connection: connection, theme: Theme(level: .ansi256))
        let stop = StopFlag()
        nonisolated(unsafe) let unsafeLoop = loop
        let finished = DispatchSemaphore(value: 0)
        startThread(named: "bench-ui-loop") {
            _ = unsafeLoop.run(on: sink, stop: { stop.isSet })
            finished.signal()
        }
        // Let the snapshot settle before measuring.
        Thread.sleep(forTimeInterval: 0.5)
        let cpuBefore = MonotonicClock.processCPUNanoseconds()
        let wallBefore = MonotonicClock.nanoseconds()
        let framesBefore = loop.statistics.frames
        let wakeupsBefore = loop.statistics.wakeups
        let updates = Int(seconds * Double(rate))
        for step in 0..<updates {
            connection.deliver(
                .server(.speakers(levels(speakers: speakers, step: step)), seq: UInt64(step + 2), at: wallClock()))
            Thread.sleep(forTimeInterval: 1 / Double(rate))
        }
        let cpu = Double(MonotonicClock.processCPUNanoseconds() - cpuBefore) / 1e9
        let wall = Double(MonotonicClock.nanoseconds() - wallBefore) / 1e9
        let frames = loop.statistics.frames - framesBefore
        let wakeups = loop.statistics.wakeups - wakeupsBefore
        stop.set()
        sink.press(.unknown(0))
        _ = finished.wait(timeout: .now() + 5)
        return (cpu / wall * 100, frames, wakeups)
    }

    /// Runs both measurements and reports them against their targets.
    public static func report(roles: RoleTable, configuration: String) throws -> BenchmarkReport {
        var report = BenchmarkReport(name: "ui")
        let small = frameTimes(size: 10_000, speakers: 10, width: 80, height: 24, frames: 2000, roles: roles)
        report.rows.append(
            .init("frame (map + render + diff), 10,000 peers, 80x24, median", small.median, "ms", target: 2))
        report.rows.append(.init("frame, 10,000 peers, 80x24, p99", small.p99, "ms"))
        let large = frameTimes(size: 10_000, speakers: 10, width: 200, height: 60, frames: 1000, roles: roles)
        report.rows.append(.init("frame, 10,000 peers, 200x60, median", large.median, "ms", target: 2))
        report.rows.append(.init("diff runs written per frame, 80x24", small.runs, "runs"))
        let idle = try idleCPU(size: 5_000, speakers: 10, seconds: 10, rate: 4, roles: roles)
        report.rows.append(.init("idle client CPU, 5,000 peers, levels 4/s", idle.percent, "% of a core", target: 1))
        report.rows.append(.init("frames drawn in 10 s", Double(idle.frames), "frames"))
        report.rows.append(.init("loop wakeups in 10 s", Double(idle.wakeups), "wakeups"))
        report.notes = [
            "build: \(configuration)",
            "frame: state to screen model, render into a cell buffer, diff against the previous frame; levels of 10 speakers change before every frame",
            "idle CPU: getrusage over 10 s of the real screen loop drawing into memory, level updates at 4/s",
        ]
        return report
    }
}

/// A flag set once from another thread.
final class StopFlag: @unchecked Sendable {
    // @unchecked: the value is behind the lock.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
