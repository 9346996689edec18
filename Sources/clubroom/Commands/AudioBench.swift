import Arguments
import AudioCodec
import AudioCore
import AudioDevices
import AudioEngine
import AudioPathBenchmarks
import Benchmarks
import Foundation
import RoomAppRuntime

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
        .flag(
            "pulse",
            help: "latency: also measure through real ALSA devices on PulseAudio null sinks (needs pulseaudio)."),
    ]

    /// The names of the options `quality-path` takes.
    static let qualityPathOptions: Set<String> = [
        "seed", "in", "out", "opus-out", "reference-out", "loss", "rate", "voice-processing",
    ]

    static var buildNote: String {
        #if DEBUG
        return "debug build: figures are many times those of 'swift build -c release'"
        #else
        return "release build"
        #endif
    }

    static func emit(_ report: BenchmarkReport, json: Bool) -> ExitStatus {
        writeOutput(json ? report.jsonText() : report.tableText())
        return report.allPassed ? .success : .failure
    }

    // MARK: cpu

    static func runCPU(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = arguments.isGiven("seconds") ? arguments.integer("seconds") ?? 60 : 60
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let result = try ClientCPUBenchmark.run(executable: executable, seconds: seconds)
        let speakers = Double(ClientCPUBenchmark.speakerTones.count)
        let rows: [BenchmarkReport.Row] = [
            .init("speaking client hearing 3 speakers", result.speaking.cpuSecondsPerMinute, "CPU s/min", target: 1.5),
            .init("listener hearing 3 speakers", result.listening.cpuSecondsPerMinute, "CPU s/min", target: 0.6),
            .init("libopus alone: encode 1 + decode 3", result.opusAlone, "CPU s/min"),
            .init("libopus alone: decode 3", result.opusDecodingAlone, "CPU s/min"),
            .init("voice processing alone (speexdsp)", result.voiceProcessingAlone, "CPU s/min"),
            .init("a thread waking every 10 ms, alone", result.periodicThreadAlone, "CPU s/min"),
            .init("speaking client: wake-ups", result.speaking.wakeUpsPerSecond, "per s"),
            .init("listener: wake-ups", result.listening.wakeUpsPerSecond, "per s"),
            .init(
                "speaking client: speakers heard", Double(result.speaking.speakersHeard), "of 3", target: speakers,
                goal: .atLeast),
            .init(
                "speaking client: heard by speakers", Double(result.speaking.heardBy), "of 3", target: speakers,
                goal: .atLeast),
            .init(
                "listener: speakers heard", Double(result.listening.speakersHeard), "of 3", target: speakers,
                goal: .atLeast),
        ]
        let tones = ClientCPUBenchmark.speakerTones.map(String.init).joined(separator: ", ")
        func threads(_ client: ClientCPUBenchmark.Client) -> String {
            client.threads.prefix(6).map {
                "\($0.name) " + String(format: "%.3f s/min %.0f/s", $0.cpuSecondsPerMinute, $0.wakeUpsPerSecond)
            }.joined(separator: ", ")
        }
        let report = BenchmarkReport(
            name: "cpu: CPU seconds per minute of audio, the client 'clubroom join' as its own process", rows: rows,
            notes: [
                "a clubroom serve on loopback, three speaker bots sending tones (\(tones) Hz), "
                    + "and 'clubroom join --plain' measured for \(seconds) s after 2 s of warm-up, first speaking "
                    + "(role speaker, unmuted, --input wav: speech), then listening (role audience)",
                "the client's devices are paced virtual ones: a WAV microphone (no voice processing, as for any "
                    + "virtual input; a person's ALSA microphone adds the voice processing row) and a loudspeaker "
                    + "that records what it plays (record:PATH), where the speakers' tones are looked for",
                "CPU: the process's utime + stime from /proc/PID/stat over the window; wake-ups: voluntary context "
                    + "switches summed over its threads",
                "speaking threads: \(threads(result.speaking))",
                "listening threads: \(threads(result.listening))",
                "libopus alone and voice processing alone: one thread of this process over \(seconds) s of audio "
                    + "(thread CPU time), in the same run; the thread waking every 10 ms does nothing else, for "
                    + "\(min(seconds, 10)) s: what each device thread's wake-ups cost on this machine",
                "signal: \(result.signal)", buildNote,
            ])
        return emit(report, json: json)
    }

    // MARK: latency

    static func runLatency(_ arguments: ParsedArguments, json: Bool) throws -> ExitStatus {
        let seconds = arguments.isGiven("seconds") ? arguments.integer("seconds") ?? 20 : 20
        let seed = UInt64(arguments.integer("seed") ?? 1)
        // Fresh rooms of 5 s each (ten clicks), so the clients' device and media-thread phases vary.
        let rounds = max(1, seconds / 5)
        let clicks = max(2, seconds * 2 / rounds)
        let clean = try PathLatencyBenchmark.run(rounds: rounds, clicksPerRound: clicks, link: nil)
        let impaired = try PathLatencyBenchmark.run(
            rounds: rounds, clicksPerRound: clicks,
            link: LinkImpairment(lossPercent: 5, baseDelayMilliseconds: 0, jitterMilliseconds: 40, seed: seed))
        var rows: [BenchmarkReport.Row] = [
            .init("clean: p50 mouth-to-ear", clean.percentile(0.5), "ms", target: 70),
            .init("clean: p95 mouth-to-ear", clean.percentile(0.95), "ms", target: 90),
            .init("clean: clicks missing", Double(clean.clicksMissing), "of \(clean.clicksSent)", target: 0),
            .init("clean: longest silence gap", clean.longestGapMilliseconds, "ms", target: 200),
            .init("impaired: p50 mouth-to-ear", impaired.percentile(0.5), "ms"),
            .init("impaired: p95 mouth-to-ear", impaired.percentile(0.95), "ms", target: 150),
            .init("impaired: clicks missing", Double(impaired.clicksMissing), "of \(impaired.clicksSent)"),
            .init("impaired: longest silence gap", impaired.longestGapMilliseconds, "ms", target: 200),
            .init(
                "impaired: packets dropped by the relay", Double(impaired.packetsDropped),
                "of \(impaired.packetsRelayed)"),
        ]
        var notes: [String] = []
        if arguments.flag("pulse") {
            let devices = try PulseLatencyBenchmark.run(seconds: seconds)
            rows += [
                .init("devices: p50 mouth-to-ear", devices.percentile(0.5), "ms"),
                .init("devices: p95 mouth-to-ear", devices.percentile(0.95), "ms"),
                .init(
                    "devices: clicks missing", Double(devices.clicksSent - devices.latencies.count),
                    "of \(devices.clicksSent)"),
                .init("devices: the rig's own loop (taken off)", devices.rigMilliseconds, "ms"),
            ]
            notes.append(
                "devices: clicks played into a PulseAudio null sink, captured from its monitor by the speaking "
                    + "client, sent through the server, played by the listening client into a second sink and "
                    + "found in its monitor, all through ALSA's pulse plugin; the rig's own play-and-capture loop is "
                    + "measured alone and taken off"
            )
        }
        let report = BenchmarkReport(
            name: "latency: mouth-to-ear through a room server on loopback", rows: rows,
            notes: [
                "a room server in this process; a speaking and a listening client as 'clubroom join' runs them "
                    + "(session, device threads and rings, send pipeline, media thread with SRTP over UDP, jitter "
                    + "buffer, mixer) on paced virtual devices; clicks every 500 ms over a swaying 300 Hz tone, "
                    + "\(clicks) clicks in each of \(rounds) fresh rooms per condition, counted from 1 s after the "
                    + "first click is heard",
                "impaired: a UDP relay in front of the listener drops 5% of the server's RTP packets and delays "
                    + "each by 0-40 ms (uniform), chosen per sequence number from seed \(seed) (+1 per room)",
                "virtual devices are ideal (no buffering of their own); real devices add theirs",
            ] + notes + [buildNote])
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
