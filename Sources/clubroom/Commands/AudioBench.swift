import Arguments
import AudioBenchmarks
import AudioCodec
import AudioCore
import AudioDevices
import BenchmarkSupport
import ClubroomResources
import Foundation
import RoomCore

/// The audio benchmarks behind `clubroom bench latency`, `bench cpu` and `bench quality-path`.
enum AudioBench {
    /// Options only these suites take.
    static let options: [Option] = [
        .value(
            "seed", placeholder: "N", type: .integer(0...1_000_000), default: "1",
            help: "latency, quality-path: the loss and jitter pattern."),
        .value("in", placeholder: "FILE.wav", type: .path, help: "quality-path: speech to send (16-bit PCM WAV)."),
        .value("out", placeholder: "FILE.wav", type: .path, help: "quality-path: what the listening client heard."),
        .value(
            "opus-out", placeholder: "FILE.wav", type: .path, help: "quality-path: what came through libopus alone."),
        .value("reference-out", placeholder: "FILE.wav", type: .path, help: "quality-path: the input at --rate."),
        .value(
            "loss", placeholder: "PERCENT", type: .integer(0...50), default: "0",
            help: "quality-path: random loss of the packets the listener receives."),
        .value(
            "rate", placeholder: "HZ", type: .integer(8_000...48_000), default: "48000",
            help: "quality-path: sample rate of the files written."),
        .flag("voice-processing", help: "quality-path: noise suppression and gain control on the sent speech."),
        .value(
            "runs", placeholder: "N", type: .integer(1...20), default: "3",
            help: "highlight: how many runs (the report gives their medians)."),
        .flag(
            "pulse",
            help: "latency: also measure through real ALSA devices on PulseAudio null sinks (needs pulseaudio)."),
    ]

    /// The names of the options `quality-path` takes.
    static let qualityPathOptions: Set<String> = [
        "seed", "in", "out", "opus-out", "reference-out", "loss", "rate", "voice-processing",
    ]

    static func emit(_ report: BenchmarkReport, json: Bool) -> ExitStatus {
        writeOutput(json ? report.jsonText() : report.tableText())
        return report.allPassed ? .success : .failure
    }

    // MARK: cpu

    static func runCPU(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = arguments.isGiven("seconds") ? arguments.integer("seconds") ?? 60 : 60
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return emit(try ClientCPUBenchmark.report(executable: executable, seconds: seconds), json: json)
    }

    // MARK: highlight

    static func runHighlight(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = arguments.isGiven("seconds") ? arguments.integer("seconds") ?? 20 : 20
        let runs = arguments.integer("runs") ?? 3
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        let report = try HighlightBenchmark.report(
            seconds: seconds, runs: runs, roles: roles, configuration: isDebugBuild ? "debug" : "release")
        return emit(report, json: json)
    }

    // MARK: latency

    static func runLatency(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = arguments.isGiven("seconds") ? arguments.integer("seconds") ?? 20 : 20
        let report = try PathLatencyBenchmark.report(
            seconds: seconds, seed: UInt64(arguments.integer("seed") ?? 1), pulse: arguments.flag("pulse"))
        return emit(report, json: json)
    }

    // MARK: quality-path

    /// Why `quality-path` could not run.
    struct QualityPathFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func runQualityPath(_ arguments: ParsedArguments) throws -> ExitStatus {
        guard let input = arguments.path("in") else {
            throw QualityPathFailure(description: "give the speech to send with --in FILE.wav")
        }
        guard arguments.path("out") != nil || arguments.path("opus-out") != nil else {
            throw QualityPathFailure(description: "give --out FILE.wav, --opus-out FILE.wav or both")
        }
        let speech: [Int16]
        do {
            speech = try WAVFileInput(path: input, loops: false, pacing: .unpaced).samples
        } catch {
            throw QualityPathFailure(description: "\(error)")
        }
        let rate = arguments.integer("rate") ?? 48_000
        let result = try PathQuality.run(
            speech: speech, lossPercent: Double(arguments.integer("loss") ?? 0),
            seed: UInt64(arguments.integer("seed") ?? 1), voiceProcessing: arguments.flag("voice-processing"))
        let files: [(String?, [Int16])] = [
            (arguments.path("out"), result.path), (arguments.path("opus-out"), result.opusAlone),
            (arguments.path("reference-out"), speech),
        ]
        for case (let path?, let samples) in files {
            let converted =
                rate == AudioFormat.sampleRate
                ? samples : try Resampler(inputRate: AudioFormat.sampleRate, outputRate: rate).process(samples)
            let bytes = try WAVAudio(sampleRate: rate, channelCount: 1, samples: converted).encoded()
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
                throw QualityPathFailure(description: "\(path): cannot be written")
            }
        }
        let receiver = result.receiver
        writeOutput(
            "{\"frames\": \(result.frames), \"lost\": \(result.lostFrames), "
                + "\"recovered_by_fec\": \(receiver?.recoveredByFEC ?? 0), \"concealed\": \(receiver?.concealed ?? 0)}\n"
        )
        return .success
    }
}
