import AudioCodec
import AudioCore
import BenchmarkSupport
import Foundation
import Platform
import RoomTesting
import StreamOutputs
import Synchronization

/// `clubroom bench stream`: each live output against the real servers from Debian (icecast2, nginx-rtmp, nginx
/// serving the HLS folder, each of the bench's own on loopback), read back by ffmpeg.
///
/// - Delay: a click (100 ms of 1 kHz at 90 % of full scale) handed to the output between frames of a quiet hum, to its first sample decoded by ffmpeg reading the stream; the median of three clicks. ffmpeg reads
///   HLS from three segments behind the playlist's end as fast as it can: a player that plays in real time from
///   there hears the room the length of those segments later still.
/// - CPU: the process's CPU time while one output (or the Ogg Opus file alone, beside it) is fed a frame every
///   20 ms for `seconds` (at most `cpuSecondsAtMost`), in percent of one core; the feeding thread is counted in each.
/// - Nothing lost: the three outputs and the file fed together for `seconds`, each stream read back whole by ffmpeg
///   (`LosslessRun`).
public enum StreamBenchmark {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The CPU of each output is measured for the run's `seconds`, or this many when the run is longer.
    public static let cpuSecondsAtMost = 30

    public static func report(seconds: Int) throws -> BenchmarkReport {
        guard ServerProcess.binary("ffmpeg") != nil else {
            throw Failure(description: "ffmpeg is not installed (make test-deps installs it)")
        }
        let folder = NSTemporaryDirectory() + "clubroom-bench-stream-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (icecast, icecastPort) = try icecastServer(in: folder + "/icecast", password: "benchpw")
        defer { icecast.stop() }
        let (rtmp, rtmpPort) = try rtmpServer(in: folder + "/rtmp")
        defer { rtmp.stop() }
        let (web, webPort) = try hlsWebServer(in: folder + "/web", root: folder + "/hls")
        defer { web.stop() }
        let icecastURL = "icecast://source:benchpw@127.0.0.1:\(icecastPort)/bench.opus"

        var report = BenchmarkReport(name: "stream")
        let icecastDelay = try delay(
            try StreamOutputs.start(.icecast(icecastURL)) { _ in },
            reading: "http://127.0.0.1:\(icecastPort)/bench.opus",
            warmUp: 1)
        report.rows.append(.init("Icecast: click to reader", icecastDelay, "s", target: 3))
        let rtmpDelay = try delay(
            try StreamOutputs.start(.rtmp("rtmp://127.0.0.1:\(rtmpPort)/live/bench")) { _ in },
            reading: "rtmp://127.0.0.1:\(rtmpPort)/live/bench", options: ["-analyzeduration", "1000000"], warmUp: 1)
        report.rows.append(.init("RTMP: click to reader (nginx-rtmp)", rtmpDelay, "s", target: 3))
        let hlsDelay = try delay(
            try StreamOutputs.start(.hls(folder + "/hls")) { _ in }, reading: "http://127.0.0.1:\(webPort)/live.m3u8",
            warmUp: 7)
        report.rows.append(.init("HLS: click to reader (2 s segments)", hlsDelay, "s", target: 8))

        let cpuSeconds = min(seconds, cpuSecondsAtMost)
        let file = try cpu(seconds: cpuSeconds) { try OggOpusWriter(path: folder + "/bench-file.opus", tags: []) }
        report.rows.append(.init("CPU: the Ogg Opus file alone", file, "% core"))
        let outputs: [(String, () throws -> any MixOutput)] = [
            (
                "Icecast",
                {
                    try StreamOutputs.start(
                        .icecast(icecastURL.replacingOccurrences(of: "bench.opus", with: "cpu.opus"))
                    ) { _ in }
                }
            ),
            ("HLS", { try StreamOutputs.start(.hls(folder + "/hls-cpu")) { _ in } }),
            ("RTMP", { try StreamOutputs.start(.rtmp("rtmp://127.0.0.1:\(rtmpPort)/live/cpu")) { _ in } }),
        ]
        for (name, make) in outputs {
            report.rows.append(.init("CPU: \(name) alone", try cpu(seconds: cpuSeconds, make), "% core"))
        }
        let lossless = try LosslessRun.run(
            seconds: seconds,
            .init(
                folder: folder, icecastPort: icecastPort, icecastPassword: "benchpw", rtmpPort: rtmpPort,
                webPort: webPort, hlsRoot: folder + "/hls"))
        report.rows += lossless.rows
        report.notes.append(lossless.note)
        report.notes.append(
            "Delay is from the frame handed to the output to ffmpeg's decoded sample; a player adds its own buffer.")
        return report
    }

    /// The median delay of three clicks through `output` to ffmpeg reading `url`, in seconds.
    static func delay(
        _ output: LiveOutput, reading url: String, options: [String] = [], warmUp: Double
    ) throws
        -> Double
    {
        let feeder = ClickFeeder(output)
        defer {
            feeder.stop()
            try? output.close()
        }
        usleep(UInt32(warmUp * 1_000_000))
        let reader = try ClickReader(url, options: options)
        defer { reader.stop() }
        guard waitUntil(limit: 30, { reader.samples.load(ordering: .relaxed) > 48_000 }) else {
            throw Failure(description: "ffmpeg read nothing from \(url)")
        }
        var delays: [Double] = []
        for _ in 0..<3 {
            reader.heardAt.store(0, ordering: .relaxed)
            feeder.clickRequested.store(true, ordering: .relaxed)
            guard waitUntil(limit: 30, { reader.heardAt.load(ordering: .relaxed) != 0 }) else {
                throw Failure(description: "no click came back from \(url)")
            }
            let sent = feeder.clickSentAt.load(ordering: .relaxed)
            delays.append(Double(reader.heardAt.load(ordering: .relaxed) - sent) / 1e9)
            usleep(2_500_000)
        }
        return delays.sorted()[1]
    }

    /// The process's CPU, percent of one core, while `make()`'s output is fed for `seconds`.
    static func cpu(seconds: Int, _ make: () throws -> any MixOutput) throws -> Double {
        let output = try make()
        usleep(500_000)
        let feeder = ClickFeeder(SendableOutput(output))
        let cpuStart = MonotonicClock.processCPUNanoseconds()
        let start = MonotonicClock.nanoseconds()
        usleep(UInt32(seconds) * 1_000_000)
        let cpuEnd = MonotonicClock.processCPUNanoseconds()
        let end = MonotonicClock.nanoseconds()
        feeder.stop()
        try output.close()
        return Double(cpuEnd - cpuStart) / Double(end - start) * 100
    }
}

/// An output handed to the feeding thread, which alone writes to it.
final class SendableOutput: @unchecked Sendable {
    let output: any MixOutput
    init(_ output: any MixOutput) { self.output = output }
}

/// A quiet hum every 20 ms, paced, and a click of five frames when asked.
final class ClickFeeder: Sendable {
    let stopped = Atomic<Bool>(false)
    let clickRequested = Atomic<Bool>(false)
    let clickSentAt = Atomic<Int64>(0)
    /// Frames written so far.
    let framesFed = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    convenience init(_ output: LiveOutput) { self.init(SendableOutput(output)) }

    init(_ box: SendableOutput) {
        startThread(named: "bench-feed") { [self] in
            var clock = PeriodClock(periodNanoseconds: Int64(AudioFormat.frameMilliseconds) * 1_000_000)
            var tone = ToneGenerator(frequency: 1_000, amplitude: 0.9)
            var click = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            tone.fill(&click)
            // A quiet hum, not digital silence, between clicks (far below the click's threshold).
            var hum = ToneGenerator(frequency: 200, amplitude: 0.01)
            var quiet = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            var offset: Int64 = 0
            var clickFrames = 0
            while !stopped.load(ordering: .relaxed) {
                if clickFrames == 0, clickRequested.exchange(false, ordering: .relaxed) {
                    clickSentAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
                    clickFrames = 5
                }
                hum.fill(&quiet)
                try? box.output.write(clickFrames > 0 ? click : quiet, offset: offset)
                framesFed.add(1, ordering: .relaxed)
                clickFrames = max(0, clickFrames - 1)
                offset += Int64(AudioFormat.frameMilliseconds)
                clock.wait()
            }
            done.signal()
        }
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }
}

/// ffmpeg decoding a stream to 48 kHz mono samples, noting when the first loud sample arrives.
final class ClickReader: Sendable {
    let samples = Atomic<Int>(0)
    let heardAt = Atomic<Int64>(0)
    /// Set when ffmpeg's output ended (the stream ended, or ffmpeg stopped).
    let ended = Atomic<Bool>(false)
    private let process: Process

    /// `whole`: every sample from the stream's first packet, not the least delay. With `-fflags nobuffer` ffmpeg
    /// decodes from where probing the stream stopped and lets what it probed go (a second of RTMP).
    init(_ url: String, options: [String], whole: Bool = false) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binary("ffmpeg") ?? "/usr/bin/ffmpeg")
        process.arguments =
            ["-v", "error", "-nostdin"] + (whole ? [] : ["-fflags", "nobuffer"]) + options + [
                "-i", url, "-f", "s16le", "-ac", "1", "-ar", "48000", "-",
            ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let handle = pipe.fileHandleForReading
        startThread(named: "bench-read") { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty {
                    ended.store(true, ordering: .relaxed)
                    return
                }
                let loud = data.withUnsafeBytes { $0.bindMemory(to: Int16.self).contains { abs(Int($0)) > 8_000 } }
                if loud, heardAt.load(ordering: .relaxed) == 0 {
                    heardAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
                }
                samples.add(data.count / 2, ordering: .relaxed)
            }
        }
    }

    /// SIGKILL: `clubroom` blocks SIGTERM in every thread for its signal watcher, and a child inherits the mask.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
