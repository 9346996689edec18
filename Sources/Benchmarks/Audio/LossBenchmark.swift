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

    /// Runs every condition with redundancy on and off, each once, on `seconds` of speech.
    public static func report(seconds: Int, seed: UInt64) throws -> BenchmarkReport {
        let speech = try speech(seconds: seconds)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-loss-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let reference = folder.appendingPathComponent("reference.wav").path
        try writeWideband(speech, to: reference)

        struct Run {
            var condition: Condition
            var redundancy: Bool
            var result: PathQuality.Result
            var path: String
            var opus: String
        }
        var runs: [Run] = []
        for condition in conditions {
            for redundancy in [true, false] {
                let result = try PathQuality.run(
                    speech: speech, lossPercent: condition.lossPercent, seed: seed, voiceProcessing: false,
                    meanBurst: condition.meanBurst, redundancy: redundancy)
                let tag = "\(runs.count)"
                let path = folder.appendingPathComponent("path-\(tag).wav").path
                let opus = folder.appendingPathComponent("opus-\(tag).wav").path
                try writeWideband(result.path, to: path)
                try writeWideband(result.opusAlone, to: opus)
                runs.append(Run(condition: condition, redundancy: redundancy, result: result, path: path, opus: opus))
            }
        }
        let scores = try pesq(reference: reference, degraded: runs.flatMap { [$0.path, $0.opus] })

        var rows: [BenchmarkReport.Row] = []
        func run(_ condition: Condition, _ redundancy: Bool) -> (index: Int, run: Run) {
            let index = runs.firstIndex { $0.condition == condition && $0.redundancy == redundancy }!
            return (index, runs[index])
        }
        let clean = run(conditions[0], true).run
        let cleanOff = run(conditions[0], false).run
        for condition in conditions {
            let on = run(condition, true)
            let off = run(condition, false)
            let name = condition.name
            rows.append(
                .init(
                    "\(name): PESQ-WB, RED on", scores[2 * on.index], "MOS", target: condition.goal, goal: .atLeast))
            rows.append(.init("\(name): PESQ-WB, RED off", scores[2 * off.index], "MOS"))
            rows.append(.init("\(name): PESQ-WB, libopus alone (FEC)", scores[2 * on.index + 1], "MOS"))
            rows.append(.init("\(name): frames lost", Double(on.run.result.lostFrames), "frames"))
            rows.append(
                .init("\(name): frames rebuilt from RED", Double(on.run.result.receiver?.recoveredByRED ?? 0), "frames")
            )
            rows.append(
                .init("\(name): frames concealed, RED on", Double(on.run.result.receiver?.concealed ?? 0), "frames"))
            rows.append(
                .init("\(name): frames concealed, RED off", Double(off.run.result.receiver?.concealed ?? 0), "frames"))
            rows.append(.init("\(name): payload bitrate, RED on", on.run.result.payloadKilobitsPerSecond, "kbit/s"))
            rows.append(.init("\(name): payload bitrate, RED off", off.run.result.payloadKilobitsPerSecond, "kbit/s"))
            let delayOn = on.run.result.receiver?.playoutDelayMilliseconds ?? 0
            let delayOff = off.run.result.receiver?.playoutDelayMilliseconds ?? 0
            rows.append(.init("\(name): playout delay, RED on", delayOn, "ms"))
            rows.append(.init("\(name): extra delay of RED (on − off)", delayOn - delayOff, "ms", target: 20))
            if condition.lossPercent == 10, condition.meanBurst == 1, clean.result.payloadKilobitsPerSecond > 0 {
                rows.append(
                    .init(
                        "10%: bitrate against clean, RED on",
                        on.run.result.payloadKilobitsPerSecond / clean.result.payloadKilobitsPerSecond, "x",
                        target: 2.2))
            }
        }
        rows.append(
            .init(
                "0%: bitrate, RED on against off",
                cleanOff.result.payloadKilobitsPerSecond > 0
                    ? clean.result.payloadKilobitsPerSecond / cleanOff.result.payloadKilobitsPerSecond : 0, "x"))
        return BenchmarkReport(
            name: "loss: PESQ-WB under packet loss, redundancy on and off",
            rows: rows,
            notes: [
                "\(Double(speech.count) / Double(AudioFormat.sampleRate)) s of natural speech (alsa-utils), loss seed \(seed), "
                    + "one run per condition and setting, each after a 3 s lead-in of the same speech",
                "playout delay: the listener's jitter buffer at the end of the run; bitrate: the payload the "
                    + "listener was sent (RTP header, level extension and SRTP tag left out)",
            ])
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
