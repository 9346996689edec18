import AudioCore
import BenchmarkSupport
import Foundation
import Platform
import Synchronization

/// `clubroom bench cpu`: what the product's client costs, beside its floor measured in the same run. A real
/// `clubroom serve` on a free loopback port, three speaker bots each sending a steady tone, and the client a
/// person runs, `clubroom join --plain`, as a process of its own on paced virtual devices (speech from a WAV file
/// as its microphone, with the voice processing a person's microphone gets; a recording loudspeaker). The
/// figures are that process's CPU time (utime + stime from `/proc/PID/stat`) and its threads' voluntary context
/// switches (wake-ups) over the measured window, once speaking (role speaker, unmuted) and once listening (role
/// audience, the microphone never opened).
///
/// The floor is what the client cannot do without, measured alone: for a speaker, libopus (one encode of the
/// speech and a decode of each speaker's tone per frame), speexdsp's voice processing, and two device threads
/// waking every 10 ms (microphone and loudspeaker); for a listener, the three decodes and one device thread.
/// libopus and speexdsp are measured on one thread of the bench just before each client; the waking thread
/// runs beside each client through its window, so it meets the same machine.
public enum ClientCPUBenchmark {
    public typealias ThreadUse = ProcessSample.ThreadUse

    /// The measured client over its window.
    public struct Client: Sendable, Equatable {
        /// The process's CPU seconds (user and system) per minute of real time.
        public var cpuSecondsPerMinute: Double
        /// Voluntary context switches per second, summed over the process's threads.
        public var wakeUpsPerSecond: Double
        /// How many of the speakers' tones the client played to its loudspeaker.
        public var speakersHeard: Int
        /// How many speakers received the client's audio (0 for a listener).
        public var heardBy: Int
        /// The busiest threads first.
        public var threads: [ThreadUse]
        /// The length of the measured window in seconds.
        public var seconds: Double
        /// libopus alone for this client's work (speaking: encode 1 + decode 3; listening: decode 3), a frame
        /// per 20 ms just before it: CPU seconds per minute.
        public var opusAlone: Double
        /// speexdsp's voice processing alone (speaking only), a frame per 20 ms just before it: CPU seconds per
        /// minute.
        public var voiceProcessingAlone: Double
        /// A thread of the bench waking every 10 ms beside this client: CPU seconds per minute.
        public var periodicThreadAlone: Double
    }

    /// The codec work in a tight loop, CPU seconds per minute.
    public struct BackToBack: Sendable, Equatable {
        /// libopus, encode 1 + decode 3 per frame.
        public var opus: Double
        /// libopus, decode 3 per frame.
        public var decoding: Double
        /// speexdsp's voice processing.
        public var voiceProcessing: Double
    }

    /// Everything one run measured.
    public struct Result: Sendable, Equatable {
        /// The client speaking while it hears the three speakers.
        public var speaking: Client
        /// The client only hearing the three speakers.
        public var listening: Client
        /// The same codec work back to back, as a tight loop runs it with warm caches: libopus encode 1 + decode
        /// 3, decode 3 alone, and voice processing, CPU seconds per minute. For comparison; not the floor.
        public var backToBack: BackToBack
        /// What the client's microphone said.
        public var signal: String

        /// The speaking client's floor: libopus alone, voice processing alone, and two device threads.
        public var speakingFloor: Double {
            speaking.opusAlone + speaking.voiceProcessingAlone + 2 * speaking.periodicThreadAlone
        }

        /// The listening client's floor: the three decodes alone and one device thread.
        public var listeningFloor: Double {
            listening.opusAlone + listening.periodicThreadAlone
        }
    }

    /// Why the rig could not run.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The speakers' tones in hertz: one bot each, none a harmonic of another.
    public static let speakerTones = [330, 523, 784]

    /// Runs the rig with `executable` (the `clubroom` binary) for `seconds` per client after `warmUp` seconds.
    public static func run(executable: String, seconds: Int, warmUp: Double = 2) throws -> Result {
        let (speech, description) = CPUFloor.speech()
        let tones = speakerTones.map { CPUFloor.botTone(hertz: $0, seconds: 5) }
        let frames = seconds * 1000 / AudioFormat.frameMilliseconds
        let floorFrames = min(seconds, 20) * 1000 / AudioFormat.frameMilliseconds
        let backToBack = BackToBack(
            opus: CPUFloor.perMinute(
                try CPUFloor.opusAlone(frames: frames, speech: speech, remote: tones), frames: frames),
            decoding: CPUFloor.perMinute(
                try CPUFloor.opusAlone(frames: frames, speech: speech, remote: tones, encoding: false), frames: frames),
            voiceProcessing: CPUFloor.perMinute(
                try CPUFloor.voiceProcessingAlone(frames: frames, speech: speech), frames: frames))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-cpu-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let speechPath = directory + "/speech.wav"
        let wav = try WAVAudio(sampleRate: AudioFormat.sampleRate, channelCount: 1, samples: speech).encoded()
        guard FileManager.default.createFile(atPath: speechPath, contents: Data(wav)) else {
            throw Failure(description: "\(speechPath): cannot be written")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment["XDG_DATA_HOME"] = directory + "/data"
        let rig = Rig(executable: executable, directory: directory, environment: environment)
        defer { rig.stop() }
        try rig.start()
        // Each client's codec work alone first, paced as the client runs it, so that it never runs beside it.
        func client(speaking: Bool) throws -> Client {
            let work = try CPUFloor.pacedCodecWork(
                frames: floorFrames, speech: speech, remote: tones, speaking: speaking)
            var measured = try rig.measure(
                identity: speaking ? "you" : "listener", role: speaking ? "speaker" : "audience",
                input: speaking ? "wav:\(speechPath)" : "null", voiceProcessing: speaking, seconds: seconds,
                warmUp: warmUp)
            measured.opusAlone = CPUFloor.perMinute(work.opus, frames: floorFrames)
            if speaking {
                measured.voiceProcessingAlone = CPUFloor.perMinute(work.voiceProcessing, frames: floorFrames)
            }
            return measured
        }
        let speaking = try client(speaking: true)
        let listening = try client(speaking: false)
        return Result(speaking: speaking, listening: listening, backToBack: backToBack, signal: description)
    }

    /// Runs the rig and shapes its figures into the shared report: each client's CPU beside its floor and the
    /// ratio of the two, with the targets (speaking ≤ 1.2 × its floor, listening ≤ 1.5 ×).
    public static func report(executable: String, seconds: Int) throws -> BenchmarkReport {
        let result = try run(executable: executable, seconds: seconds)
        let speakers = Double(speakerTones.count)
        let rows: [BenchmarkReport.Row] = [
            .init("speaking client hearing 3 speakers", result.speaking.cpuSecondsPerMinute, "CPU s/min"),
            .init("speaking client: its floor", result.speakingFloor, "CPU s/min"),
            .init(
                "speaking client: ratio to its floor", result.speaking.cpuSecondsPerMinute / result.speakingFloor,
                "×", target: 1.2),
            .init("listener hearing 3 speakers", result.listening.cpuSecondsPerMinute, "CPU s/min"),
            .init("listener: its floor", result.listeningFloor, "CPU s/min"),
            .init(
                "listener: ratio to its floor", result.listening.cpuSecondsPerMinute / result.listeningFloor, "×",
                target: 1.5),
            .init("libopus alone: encode 1 + decode 3", result.speaking.opusAlone, "CPU s/min"),
            .init("libopus alone: decode 3", result.listening.opusAlone, "CPU s/min"),
            .init("voice processing alone (speexdsp)", result.speaking.voiceProcessingAlone, "CPU s/min"),
            .init("back to back: libopus encode 1 + decode 3", result.backToBack.opus, "CPU s/min"),
            .init("back to back: libopus decode 3", result.backToBack.decoding, "CPU s/min"),
            .init("back to back: voice processing", result.backToBack.voiceProcessing, "CPU s/min"),
            .init(
                "a thread waking every 10 ms, beside the speaking client", result.speaking.periodicThreadAlone,
                "CPU s/min"),
            .init(
                "a thread waking every 10 ms, beside the listener", result.listening.periodicThreadAlone, "CPU s/min"),
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
        let tones = speakerTones.map(String.init).joined(separator: ", ")
        func threads(_ client: Client) -> String {
            client.threads.prefix(6).map {
                "\($0.name) " + String(format: "%.3f s/min %.0f/s", $0.cpuSecondsPerMinute, $0.wakeUpsPerSecond)
            }.joined(separator: ", ")
        }
        return BenchmarkReport(
            name: "cpu: CPU seconds per minute of audio, the client 'clubroom join' as its own process", rows: rows,
            notes: [
                "a clubroom serve on loopback, three speaker bots sending tones (\(tones) Hz), "
                    + "and 'clubroom join --plain' measured for \(seconds) s once it hears every speaker (and, speaking, "
                    + "every speaker hears it) and at least 2 s after it joined, first speaking "
                    + "(role speaker, unmuted, --input wav: speech with --voice-processing on), then listening "
                    + "(role audience)",
                "the client's devices are paced virtual ones: a WAV microphone and a loudspeaker that records what "
                    + "it plays (record:PATH), where the speakers' tones are looked for: in its last second before "
                    + "the window opens, and in its last second before the window closes",
                "CPU: the process's utime + stime from /proc/PID/stat over the window; wake-ups: voluntary context "
                    + "switches summed over its threads",
                "speaking threads: \(threads(result.speaking))",
                "listening threads: \(threads(result.listening))",
                "floors, in the same run: speaking = libopus alone (encode 1 + decode 3) + voice processing alone + "
                    + "2 threads waking every 10 ms (microphone and loudspeaker); listening = libopus decode 3 + 1 "
                    + "such thread. libopus and speexdsp: one thread of this process doing each client's codec work "
                    + "on the same speech and tones, one frame per 20 ms as the client does, for "
                    + "\(min(seconds, 20)) s just before it; only the work is timed (thread CPU time). The waking "
                    + "thread does nothing else and runs beside each client for its whole window. The back-to-back "
                    + "rows run the same work in a tight loop (warm caches), for comparison",
                "signal: \(result.signal)", buildNote,
            ])
    }

    /// The server and the speaking bots, and the clients measured against them.
    final class Rig {
        let executable: String
        let directory: String
        let environment: [String: String]
        var server: Child?
        var bots: [Child] = []
        var url = ""

        init(executable: String, directory: String, environment: [String: String]) {
            self.executable = executable
            self.directory = directory
            self.environment = environment
        }

        var secretFile: String { directory + "/secret" }

        func start() throws {
            let server = try child([
                "serve", "--listen", "127.0.0.1:0", "--data", directory + "/data", "--secret-file", secretFile,
            ])
            self.server = server
            let prefix = "listening on ws://127.0.0.1:"
            guard server.waitFor(prefix, inErrors: true, seconds: 15) else {
                throw Failure(description: "the server did not start: \(server.standardError)")
            }
            let log = server.standardError
            guard let range = log.range(of: prefix), let port = Int(log[range.upperBound...].prefix(while: \.isNumber))
            else { throw Failure(description: "no port in the server's log: \(log)") }
            url = "ws://127.0.0.1:\(port)/rooms/bench"
            for (index, hertz) in speakerTones.enumerated() {
                let token = try mint(identity: "speaker-\(index + 1)", role: "speaker")
                bots.append(try child(["bot", url, "--token", token, "--tone", "\(hertz)"]))
            }
            for bot in bots where !bot.waitFor("\"media_path\"", seconds: 15) {
                throw Failure(description: "a speaker bot did not start its media: \(bot.standardError)")
            }
        }

        func stop() {
            for bot in bots { bot.finish() }
            bots = []
            server?.terminate()
            server = nil
        }

        func mint(identity: String, role: String) throws -> String {
            let token = try child([
                "token", "--room", "bench", "--identity", identity, "--role", role, "--secret-file", secretFile,
            ])
            token.finish(seconds: 10)
            let text = token.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.process.terminationStatus == 0, !text.isEmpty else {
                throw Failure(description: "clubroom token failed: \(token.standardError)")
            }
            return text
        }

        func child(_ arguments: [String]) throws -> Child {
            try Child(executable: executable, arguments: arguments, environment: environment)
        }

        /// One client, `seconds` measured after `warmUp`, with a thread waking every 10 ms beside it.
        func measure(
            identity: String, role: String, input: String, voiceProcessing: Bool, seconds: Int, warmUp: Double
        ) throws -> Client {
            let heardPath = directory + "/heard-\(identity).wav"
            let client = try child([
                "join", url, "--secret-file", secretFile, "--identity", identity, "--role", role, "--plain",
                "--input", input, "--output", "record:\(heardPath)", "--voice-processing",
                voiceProcessing ? "on" : "off",
            ])
            defer { client.finish() }
            guard client.waitFor("You joined ", seconds: 15) else {
                throw Failure(
                    description: "the client did not join: \(client.standardOutput) \(client.standardError)")
            }
            let joined = MonotonicClock.microseconds()
            let speaking = role != "audience"
            if speaking { client.send("/unmute") }
            // Measure only a client that hears every speaker (and, speaking, is heard by every one): a client
            // that hears two would look cheap. On a loaded machine a speaker's first packets can take seconds.
            let everyoneHeard = Self.waitUntil(seconds: Self.hearingWait) {
                Self.tonesHeard(in: Self.recorded(heardPath)) == speakerTones.count
                    && (!speaking || bots.allSatisfy { Self.received(from: identity, in: $0.standardOutput) > 0 })
            }
            guard everyoneHeard else {
                let heard = Self.tonesHeard(in: Self.recorded(heardPath))
                let heardBy = bots.filter { Self.received(from: identity, in: $0.standardOutput) > 0 }.count
                throw Failure(
                    description: "\(identity) heard \(heard) of \(speakerTones.count) speakers"
                        + (speaking ? " and was heard by \(heardBy)" : "")
                        + " after \(Int(Self.hearingWait)) s: \(client.standardOutput) \(client.standardError)")
            }
            let warmedUp = Double(MonotonicClock.microseconds() - joined) / 1e6
            if warmedUp < warmUp { Thread.sleep(forTimeInterval: warmUp - warmedUp) }
            let pid = client.process.processIdentifier
            let receivedBefore = bots.map { Self.received(from: identity, in: $0.standardOutput) }
            let wallStart = MonotonicClock.microseconds()
            guard let before = ProcessSample(pid: pid) else {
                throw Failure(description: "the client exited early: \(client.standardError)")
            }
            let waking = PeriodicThread(seconds: seconds)
            Thread.sleep(forTimeInterval: Double(seconds))
            guard let after = ProcessSample(pid: pid) else {
                throw Failure(description: "the client exited early: \(client.standardError)")
            }
            let elapsed = Double(MonotonicClock.microseconds() - wallStart) / 1e6
            // What the loudspeaker played up to the window's end, before the client leaves: the recording goes
            // on, silent, while it leaves, and leaving can take a while on a busy machine.
            let played = Self.recorded(heardPath)
            let wakeCost = waking.finish()
            // A bot reports what it received once a second: give the last report time to come.
            if speaking { Thread.sleep(forTimeInterval: 1.2) }
            let heardBy = zip(bots, receivedBefore).filter { bot, before in
                Self.received(from: identity, in: bot.standardOutput) > before
            }.count
            client.finish()
            // Heard over the whole window measured, not only its last second: a second in which a busy machine
            // let one of three speakers drop out does not make a client that heard all three through it.
            let heard = Self.tonesHeard(in: played, lastSeconds: elapsed)
            return Client(
                cpuSecondsPerMinute: Double(after.ticks - before.ticks) / ProcessSample.ticksPerSecond / elapsed * 60,
                wakeUpsPerSecond: Double(after.voluntarySwitches - before.voluntarySwitches) / elapsed,
                speakersHeard: heard, heardBy: speaking ? heardBy : 0,
                threads: after.threads(since: before, seconds: elapsed), seconds: elapsed, opusAlone: 0,
                voiceProcessingAlone: 0, periodicThreadAlone: wakeCost)
        }

        /// The packets a bot last reported receiving from `identity` (its `audio_stats` lines), 0 when none.
        static func received(from identity: String, in output: String) -> Int {
            for line in output.split(separator: "\n").reversed() where line.contains("\"audio_stats\"") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let speakers = object["speakers"] as? [[String: Any]]
                else { continue }
                for speaker in speakers where speaker["peer"] as? String == identity {
                    return speaker["received"] as? Int ?? 0
                }
                return 0
            }
            return 0
        }

        /// How long a client may take to hear every speaker before it is measured, in seconds.
        static let hearingWait = 30.0

        /// Polls `condition` every 100 ms until it holds (true) or `seconds` pass (false).
        static func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = MonotonicClock.microseconds() + Int64(seconds * 1e6)
            while MonotonicClock.microseconds() < deadline {
                if condition() { return true }
                usleep(100_000)
            }
            return condition()
        }

        /// The samples a `record:` loudspeaker has written to its file so far (it writes a second at a time, after
        /// a 44-byte header whose sizes it fills in when it closes).
        static func recorded(_ path: String) -> [Int16] {
            guard let data = FileManager.default.contents(atPath: path), data.count > 44 else { return [] }
            let bytes = data.dropFirst(44)
            return bytes.prefix(bytes.count / 2 * 2).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }

        /// How many of the speakers' tones sound in the last whole second of `samples`.
        /// The speakers' tones heard in the last `seconds` (at least one) of `samples`.
        static func tonesHeard(in samples: [Int16], lastSeconds seconds: Double = 1) -> Int {
            guard samples.count >= AudioFormat.sampleRate else { return 0 }
            let window = Array(
                samples.suffix(max(AudioFormat.sampleRate, Int(seconds * Double(AudioFormat.sampleRate)))))
            // A bot's tone (tone:HZ, 8,000 in sample units: 0.24 of full scale) has a power near 0.06; after the
            // codec and the mix it stays far
            // above this, and far above what leaks to a frequency no one sends.
            return speakerTones.filter { ToneAnalysis.power(of: window, frequency: Double($0)) > 0.002 }.count
        }
    }

    /// A thread of the bench that does nothing but wake every 10 ms, as a device thread does, for `seconds`.
    final class PeriodicThread: Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let cost = Mutex<Int64>(0)
        private let seconds: Int

        init(seconds: Int) {
            self.seconds = seconds
            startThread(named: "bench-waking") { [self] in
                let nanoseconds = CPUFloor.wakeUpsAlone(seconds: seconds)
                cost.withLock { $0 = nanoseconds }
                done.signal()
            }
        }

        /// Waits for the thread's end; its CPU seconds per minute.
        func finish() -> Double {
            done.wait()
            return Double(cost.withLock { $0 }) / 1e9 / Double(max(1, seconds)) * 60
        }
    }

    /// A `clubroom` process of the rig: its output collected as it comes, its stdin kept open until `finish`.
    final class Child: @unchecked Sendable {
        // Safe to share: the process and the pipes are set up once; the collected text is behind locks.
        let process = Process()
        private let input = Pipe()
        private let output = Collected()
        private let errors = Collected()

        init(executable: String, arguments: [String], environment: [String: String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.environment = environment
            process.standardInput = input
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            // Blocking reads on threads of their own, not readabilityHandlers: the dispatch source behind a handler
            // can outlive its descriptor and crash libdispatch's event loop once the number is reused.
            for (pipe, text) in [(out, output), (err, errors)] {
                let handle = pipe.fileHandleForReading
                startThread(named: "bench-output") {
                    while case let data = handle.availableData, !data.isEmpty { text.append(data) }
                    text.close()
                }
            }
        }

        var standardOutput: String { output.text }
        var standardError: String { errors.text }

        /// Writes one line to the process's stdin.
        func send(_ line: String) {
            try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        }

        /// Closes stdin (a client or bot leaves) and waits for the exit, at most `seconds`.
        func finish(seconds: Double = 10) {
            try? input.fileHandleForWriting.close()
            waitForExit(seconds: seconds)
        }

        /// SIGTERM (the server stops) and waits.
        func terminate(seconds: Double = 10) {
            if process.isRunning { process.terminate() }
            waitForExit(seconds: seconds)
        }

        private func waitForExit(seconds: Double) {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            // What it wrote last may still be on its way through the pipes' handlers.
            let closing = Date().addingTimeInterval(2)
            while !(output.isClosed && errors.isClosed), Date() < closing { usleep(5_000) }
        }

        /// Waits until the output (or errors) contain `text`; false after `seconds`.
        func waitFor(_ text: String, inErrors: Bool = false, seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if (inErrors ? standardError : standardOutput).contains(text) { return true }
                if !process.isRunning { return (inErrors ? standardError : standardOutput).contains(text) }
                usleep(20_000)
            }
            return false
        }
    }

    /// Text that a pipe's handler appends to while others read it.
    final class Collected: Sendable {
        private let collected = Mutex((text: "", closed: false))

        var text: String { collected.withLock { $0.text } }
        /// Whether the writer's end closed (the process exited and everything it wrote is here).
        var isClosed: Bool { collected.withLock { $0.closed } }

        func append(_ data: Data) {
            collected.withLock { $0.text += String(decoding: data, as: UTF8.self) }
        }

        func close() {
            collected.withLock { $0.closed = true }
        }
    }
}
