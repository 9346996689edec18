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
    /// Options only these suites take: those of `quality-path`, then `--runs` and `--pulse`.
    static let options: [Option] = qualityPathOptions + [runs.option, pulse.option]

    static let seed = TypedOption.integer(
        "seed", placeholder: "N", in: 0...1_000_000, default: 1,
        help: "latency, loss, quality-path: the loss and jitter pattern.")
    static let input = TypedOption.path(
        "in", placeholder: "FILE.wav", help: "quality-path: speech to send (16-bit PCM WAV).")
    static let output = TypedOption.path(
        "out", placeholder: "FILE.wav", help: "quality-path: what the listening client heard.")
    static let opusOutput = TypedOption.path(
        "opus-out", placeholder: "FILE.wav", help: "quality-path: what came through libopus alone.")
    static let referenceOutput = TypedOption.path(
        "reference-out", placeholder: "FILE.wav", help: "quality-path: the input at --rate.")
    static let loss = TypedOption.integer(
        "loss", placeholder: "PERCENT", in: 0...50, default: 0,
        help: "quality-path: random loss of the packets the listener receives.")
    static let rate = TypedOption.integer(
        "rate", placeholder: "HZ", in: 8_000...48_000, default: 48_000,
        help: "quality-path: sample rate of the files written.")
    static let voiceProcessing = TypedOption.flag(
        "voice-processing", help: "quality-path: noise suppression and gain control on the sent speech.")
    static let runs = TypedOption.integer(
        "runs", placeholder: "N", in: 1...20, default: 3,
        help: "highlight, loss: how many runs (the report gives their medians; loss: seeds --seed, --seed + 1, …).")
    static let pulse = TypedOption.flag(
        "pulse", help: "latency: also measure through real ALSA devices on PulseAudio null sinks (needs pulseaudio).")

    /// The options `quality-path` takes.
    static let qualityPathOptions: [Option] = [
        seed.option, input.option, output.option, opusOutput.option, referenceOutput.option, loss.option,
        rate.option, voiceProcessing.option,
    ]

    // MARK: cpu

    static func runCPU(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = BenchCommand.seconds(arguments, for: .cpu)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return BenchCommand.emit(try ClientCPUBenchmark.report(executable: executable, seconds: seconds), json: json)
    }

    // MARK: highlight

    static func runHighlight(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = BenchCommand.seconds(arguments, for: .highlight)
        let runs = arguments[AudioBench.runs]
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        let report = try HighlightBenchmark.report(
            seconds: seconds, runs: runs, roles: roles, configuration: isDebugBuild ? "debug" : "release")
        return BenchCommand.emit(report, json: json)
    }

    // MARK: latency

    static func runLatency(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = BenchCommand.seconds(arguments, for: .latency)
        let report = try PathLatencyBenchmark.report(
            seconds: seconds, seed: UInt64(arguments[AudioBench.seed]), pulse: arguments[AudioBench.pulse])
        return BenchCommand.emit(report, json: json)
    }

    // MARK: quality-path

    /// Why `quality-path` could not run.
    struct QualityPathFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func runQualityPath(_ arguments: ParsedArguments) throws -> ExitStatus {
        guard let speechFile = arguments[AudioBench.input] else {
            throw QualityPathFailure(description: "give the speech to send with --in FILE.wav")
        }
        guard arguments[AudioBench.output] != nil || arguments[AudioBench.opusOutput] != nil else {
            throw QualityPathFailure(description: "give --out FILE.wav, --opus-out FILE.wav or both")
        }
        let speech: [Int16]
        do {
            speech = try WAVFileInput(path: speechFile, loops: false, pacing: .unpaced).samples
        } catch {
            throw QualityPathFailure(description: "\(error)")
        }
        let rate = arguments[AudioBench.rate]
        let result = try PathQuality.run(
            speech: speech, lossPercent: Double(arguments[AudioBench.loss]),
            seed: UInt64(arguments[AudioBench.seed]), voiceProcessing: arguments[AudioBench.voiceProcessing])
        let files: [(String?, [Int16])] = [
            (arguments[AudioBench.output], result.path), (arguments[AudioBench.opusOutput], result.opusAlone),
            (arguments[AudioBench.referenceOutput], speech),
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
