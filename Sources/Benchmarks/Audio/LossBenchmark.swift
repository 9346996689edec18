import AudioCodec
import AudioCore
import AudioDevices
import BenchmarkSupport
import Foundation

/// `clubroom bench loss`: PESQ-WB of natural speech through the whole path (``PathQuality``: client, server,
/// client behind a lossy relay) at 0, 5, 10 and 20 % random loss and with bursty loss (Gilbert–Elliott, 10 %
/// overall in runs of 3 packets on average), with RFC 2198 redundancy on and off, beside libopus alone (with FEC)
/// on the same lost frames in the same run; the listener's playout delay, and the payload bitrate it receives.
///
/// PESQ (ITU-T P.862.2) is scored by Python's `pesq` package, on 16 kHz copies of what each path gave.
public enum LossBenchmark {
    /// One loss condition.
    public struct Condition: Sendable, Equatable {
        public var name: String
        public var lossPercent: Double
        public var meanBurst: Double
        /// The PESQ-WB the path must reach with redundancy on, if the issue sets one.
        public var goal: Double?
    }

    public static let conditions = [
        Condition(name: "0%", lossPercent: 0, meanBurst: 1, goal: nil),
        Condition(name: "5%", lossPercent: 5, meanBurst: 1, goal: nil),
        Condition(name: "10%", lossPercent: 10, meanBurst: 1, goal: 3.8),
        Condition(name: "20%", lossPercent: 20, meanBurst: 1, goal: 3.4),
        Condition(name: "bursty 10% (mean 3)", lossPercent: 10, meanBurst: 3, goal: 3.3),
    ]

    /// Seconds of the same speech under the same loss before the measured speech. A call in steady loss has its
    /// redundancy settled after its first seconds: the speaker's level moves on reports that take up to two
    /// seconds to come back (the listener's, then the server's answer to the speaker's), two frames need a few
    /// packets lost in runs or three reports of heavy loss, and a listener anchors its wait for them at the next
    /// pause. With 3 s, a run could begin measuring before that (docs/media.md, "Figures").
    static let leadInSeconds = 6

    /// The speech: the natural recordings alsa-utils installs, one after another, up to `seconds`.
    static func speech(seconds: Int) throws -> [Int16] {
        let folder = "/usr/share/sounds/alsa"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".wav") && $0 != "Noise.wav" }.sorted()
        guard !names.isEmpty else {
            throw PathBenchmarkError("no natural speech in \(folder) (Debian's alsa-utils installs it)")
        }
        var samples: [Int16] = []
        let limit = seconds * AudioFormat.sampleRate
        for name in names where samples.count < limit {
            samples += try WAVFileInput(path: "\(folder)/\(name)", loops: false, pacing: .unpaced).samples
        }
        return Array(samples.prefix(limit))
    }

    /// Runs every condition with redundancy on and off on `seconds` of speech, `runs` times (loss seeds `seed`,
    /// `seed + 1`, …), and reports each figure's median over the runs, with each run's PESQ in the notes: one run's
    /// score hangs on where its few lost packets fall, and on a shared machine on how its threads were served.
    public static func report(seconds: Int, seed: UInt64, runs: Int = 3) throws -> BenchmarkReport {
        let speech = try speech(seconds: seconds)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-loss-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let reference = folder.appendingPathComponent("reference.wav").path
        try writeWideband(speech, to: reference)

        struct Run {
            var seed: UInt64
            var condition: Condition
            var redundancy: Bool
            var result: PathQuality.Result
            /// The path, libopus alone with FEC, then libopus alone repeating one and two frames.
            var files: [String]
        }
        var measured: [Run] = []
        for run in 0..<max(1, runs) {
            for condition in conditions {
                for redundancy in [true, false] {
                    let result = try PathQuality.run(
                        speech: speech, lossPercent: condition.lossPercent, seed: seed + UInt64(run),
                        voiceProcessing: false, leadInSeconds: leadInSeconds, meanBurst: condition.meanBurst,
                        redundancy: redundancy)
                    var files: [String] = []
                    for (index, samples) in ([result.path, result.opusAlone] + result.redundantAlone).enumerated() {
                        // The references do not depend on the path's setting: scored once, with redundancy on.
                        guard index < 2 || redundancy else { break }
                        let path = folder.appendingPathComponent("\(measured.count)-\(index).wav").path
                        try writeWideband(samples, to: path)
                        files.append(path)
                    }
                    measured.append(
                        Run(
                            seed: seed + UInt64(run), condition: condition, redundancy: redundancy, result: result,
                            files: files))
                }
            }
        }
        let allFiles = measured.flatMap(\.files)
        let allScores = try pesq(reference: reference, degraded: allFiles)
        let score = Dictionary(uniqueKeysWithValues: zip(allFiles, allScores))

        /// The median over the runs of `value` for `condition` with redundancy `on` or off.
        func median(_ condition: Condition, _ on: Bool, _ value: (Run) -> Double) -> Double {
            let values = measured.filter { $0.condition == condition && $0.redundancy == on }.map(value).sorted()
            guard !values.isEmpty else { return 0 }
            let middle = values.count / 2
            return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
        }
        func pesqOf(_ file: Int) -> (Run) -> Double { { run in file < run.files.count ? score[run.files[file]]! : 0 } }
        let bitrate: (Run) -> Double = { $0.result.payloadKilobitsPerSecond }
        let delay: (Run) -> Double = { $0.result.receiver?.playoutDelayMilliseconds ?? 0 }

        var rows: [BenchmarkReport.Row] = []
        var notes: [String] = []
        let clean = conditions[0]
        for condition in conditions {
            let name = condition.name
            rows.append(
                .init(
                    "\(name): PESQ-WB, RED on", median(condition, true, pesqOf(0)), "MOS", target: condition.goal,
                    goal: .atLeast))
            rows.append(.init("\(name): PESQ-WB, RED off", median(condition, false, pesqOf(0)), "MOS"))
            rows.append(.init("\(name): PESQ-WB, libopus alone (FEC)", median(condition, true, pesqOf(1)), "MOS"))
            rows.append(
                .init("\(name): PESQ-WB, libopus alone repeating 1 frame", median(condition, true, pesqOf(2)), "MOS"))
            rows.append(
                .init("\(name): PESQ-WB, libopus alone repeating 2 frames", median(condition, true, pesqOf(3)), "MOS"))
            rows.append(
                .init("\(name): frames lost", median(condition, true) { Double($0.result.lostFrames) }, "frames"))
            rows.append(
                .init(
                    "\(name): frames rebuilt from RED",
                    median(condition, true) { Double($0.result.receiver?.recoveredByRED ?? 0) }, "frames"))
            rows.append(
                .init(
                    "\(name): frames concealed, RED on",
                    median(condition, true) { Double($0.result.receiver?.concealed ?? 0) }, "frames"))
            rows.append(
                .init(
                    "\(name): frames concealed, RED off",
                    median(condition, false) { Double($0.result.receiver?.concealed ?? 0) }, "frames"))
            rows.append(.init("\(name): payload bitrate, RED on", median(condition, true, bitrate), "kbit/s"))
            rows.append(.init("\(name): payload bitrate, RED off", median(condition, false, bitrate), "kbit/s"))
            let delayOn = median(condition, true, delay)
            rows.append(.init("\(name): playout delay, RED on", delayOn, "ms"))
            rows.append(
                .init(
                    "\(name): extra delay of RED (on − off)", delayOn - median(condition, false, delay), "ms",
                    target: 20))
            if condition.lossPercent == 10, condition.meanBurst == 1 {
                let cleanRate = median(clean, true, bitrate)
                rows.append(
                    .init(
                        "10%: bitrate against clean, RED on",
                        cleanRate > 0 ? median(condition, true, bitrate) / cleanRate : 0, "x", target: 2.2))
            }
            let each = measured.filter { $0.condition == condition && $0.redundancy }.map { run in
                "seed \(run.seed) " + String(format: "%.2f", score[run.files[0]]!)
            }
            notes.append("\(name), PESQ-WB with RED on in each run: " + each.joined(separator: ", "))
        }
        let cleanOff = median(clean, false, bitrate)
        rows.append(
            .init("0%: bitrate, RED on against off", cleanOff > 0 ? median(clean, true, bitrate) / cleanOff : 0, "x"))
        return BenchmarkReport(
            name: "loss: PESQ-WB under packet loss, redundancy on and off",
            rows: rows,
            notes: [
                "\(Double(speech.count) / Double(AudioFormat.sampleRate)) s of natural speech (alsa-utils), \(max(1, runs)) "
                    + "runs (loss seeds \(seed)–\(seed + UInt64(max(1, runs)) - 1)), each condition and setting once a run, "
                    + "after a \(leadInSeconds) s lead-in of the same speech under the same loss, so that the "
                    + "redundancy has settled as in a call after its first seconds; every figure is the median over "
                    + "the runs",
                "libopus alone: one encoder and decoder on the frames the path lost, with FEC, or repeating one or two "
                    + "frames before: what redundancy can give on this loss without the network, the jitter buffer or "
                    + "the machine's timing",
                "playout delay: the listener's jitter buffer at the end of the run; bitrate: the payload the "
                    + "listener was sent (RTP header, level extension and SRTP tag left out)",
            ] + notes)
    }

    /// `samples` (48 kHz) as a 16 kHz WAV file, as PESQ-WB takes it.
    static func writeWideband(_ samples: [Int16], to path: String) throws {
        let converted = try Resampler(inputRate: AudioFormat.sampleRate, outputRate: 16_000).process(samples)
        let bytes = try WAVAudio(sampleRate: 16_000, channelCount: 1, samples: converted).encoded()
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw PathBenchmarkError("\(path): cannot be written")
        }
    }

    /// PESQ-WB of each degraded file against the reference, from `python3` with `pesq` and `numpy`.
    static func pesq(reference: String, degraded: [String]) throws -> [Double] {
        let script = """
            import sys, wave
            import numpy as np
            from pesq import pesq
            def read(path):
                with wave.open(path, "rb") as f:
                    return np.frombuffer(f.readframes(f.getnframes()), dtype=np.int16).astype(np.float32)
            ref = read(sys.argv[1])
            for path in sys.argv[2:]:
                deg = read(path)
                n = min(len(ref), len(deg))
                print(pesq(16000, ref[:n], deg[:n], "wb"))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, reference] + degraded
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let scores = text.split(separator: "\n").compactMap { Double($0) }
        guard process.terminationStatus == 0, scores.count == degraded.count else {
            throw PathBenchmarkError(
                "PESQ needs python3 with pesq and numpy (python3 -m pip install pesq numpy): "
                    + (complaint.split(separator: "\n").last.map(String.init) ?? "no scores"))
        }
        return scores
    }
}
