import AudioCore
import AudioEngine
import Foundation
import Synchronization

/// `clubroom bench cpu`: what the product's client costs. A real `clubroom serve` on a free loopback port, three
/// speaker bots each sending a steady tone, and the client a person runs, `clubroom join --plain`, as a process
/// of its own on paced virtual devices (speech from a WAV file as its microphone, a recording loudspeaker). The
/// figures are that process's CPU time (utime + stime from `/proc/PID/stat`) and its threads' voluntary context
/// switches (wake-ups) over the measured window, once speaking (role speaker, unmuted) and once listening (role
/// audience, the microphone never opened).
public enum ClientCPUBenchmark {
    /// One thread of the measured client.
    public struct ThreadUse: Sendable, Equatable {
        /// The thread's name (the kernel keeps 15 characters).
        public var name: String
        /// CPU seconds per minute of audio.
        public var cpuSecondsPerMinute: Double
        /// Voluntary context switches per second.
        public var wakeUpsPerSecond: Double
    }

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
    }

    /// Everything one run measured.
    public struct Result: Sendable, Equatable {
        /// The client speaking while it hears the three speakers.
        public var speaking: Client
        /// The client only hearing the three speakers.
        public var listening: Client
        /// libopus alone in this process, one encode and three decodes per frame: CPU seconds per minute.
        public var opusAlone: Double
        /// libopus alone, three decodes per frame (what a listener's codec work is): CPU seconds per minute.
        public var opusDecodingAlone: Double
        /// A thread of this process that only wakes every 10 ms, as each device thread does: CPU seconds per
        /// minute. What one thread's wake-ups cost on this machine.
        public var periodicThreadAlone: Double
        /// speexdsp's preprocessing of a microphone (what `SendPipeline` runs on a person's ALSA microphone)
        /// alone in this process: CPU seconds per minute.
        public var voiceProcessingAlone: Double
        /// What the client's microphone said.
        public var signal: String
    }

    /// Why the rig could not run.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The speakers' tones in hertz: one bot each, none a harmonic of another.
    public static let speakerTones = [330, 523, 784]

    /// Runs the rig with `executable` (the `clubroom` binary) for `seconds` per client after `warmUp` seconds.
    public static func run(executable: String, seconds: Int, warmUp: Double = 2) throws -> Result {
        let (speech, description) = CPUBenchmark.speech()
        let frames = seconds * 1000 / AudioFormat.frameMilliseconds
        // In-process figures first, so that they never run beside the measured client.
        let opus = try CPUBenchmark.opusAlone(frames: frames, speech: speech)
        let decoding = try CPUBenchmark.opusAlone(frames: frames, speech: speech, encoding: false)
        let voice = try CPUBenchmark.voiceProcessingAlone(frames: frames, speech: speech)
        let wakeSeconds = min(seconds, 10)
        let wakes = CPUBenchmark.wakeUpsAlone(seconds: wakeSeconds)

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
        let speaking = try rig.measure(
            identity: "you", role: "speaker", input: "wav:\(speechPath)", seconds: seconds, warmUp: warmUp)
        let listening = try rig.measure(
            identity: "listener", role: "audience", input: "null", seconds: seconds, warmUp: warmUp)
        return Result(
            speaking: speaking, listening: listening, opusAlone: CPUBenchmark.perMinute(opus, frames: frames),
            opusDecodingAlone: CPUBenchmark.perMinute(decoding, frames: frames),
            periodicThreadAlone: Double(wakes) / 1e9 / Double(wakeSeconds) * 60,
            voiceProcessingAlone: CPUBenchmark.perMinute(voice, frames: frames), signal: description)
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

        /// One client, `seconds` measured after `warmUp`.
        func measure(identity: String, role: String, input: String, seconds: Int, warmUp: Double) throws -> Client {
            let heardPath = directory + "/heard-\(identity).wav"
            let client = try child([
                "join", url, "--secret-file", secretFile, "--identity", identity, "--role", role, "--plain",
                "--input", input, "--output", "record:\(heardPath)",
            ])
            defer { client.finish() }
            guard client.waitFor("You joined ", seconds: 15) else {
                throw Failure(
                    description: "the client did not join: \(client.standardOutput) \(client.standardError)")
            }
            let speaking = role != "audience"
            if speaking { client.send("/unmute") }
            Thread.sleep(forTimeInterval: warmUp)
            let pid = client.process.processIdentifier
            let receivedBefore = bots.map { Self.received(from: identity, in: $0.standardOutput) }
            let wallStart = MonotonicClock.microseconds()
            guard let before = ProcessSample(pid: pid) else {
                throw Failure(description: "the client exited early: \(client.standardError)")
            }
            Thread.sleep(forTimeInterval: Double(seconds))
            guard let after = ProcessSample(pid: pid) else {
                throw Failure(description: "the client exited early: \(client.standardError)")
            }
            let elapsed = Double(MonotonicClock.microseconds() - wallStart) / 1e6
            // A bot reports what it received once a second: give the last report time to come.
            if speaking { Thread.sleep(forTimeInterval: 1.2) }
            let heardBy = zip(bots, receivedBefore).filter { bot, before in
                Self.received(from: identity, in: bot.standardOutput) > before
            }.count
            client.finish()
            let heard = Self.tonesHeard(inRecording: heardPath)
            return Client(
                cpuSecondsPerMinute: Double(after.ticks - before.ticks) / ProcessSample.ticksPerSecond / elapsed * 60,
                wakeUpsPerSecond: Double(after.voluntarySwitches - before.voluntarySwitches) / elapsed,
                speakersHeard: heard, heardBy: speaking ? heardBy : 0,
                threads: after.threads(since: before, seconds: elapsed), seconds: elapsed)
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

        /// How many of the speakers' tones sound in the last whole second of a recording but the final half.
        static func tonesHeard(inRecording path: String) -> Int {
            guard let data = FileManager.default.contents(atPath: path), data.count > 44 + 4 * AudioFormat.sampleRate
            else { return 0 }
            let samples = data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            let end = samples.count - AudioFormat.sampleRate / 2
            let window = Array(samples[(end - AudioFormat.sampleRate)..<end])
            // A tone sent at 0.3 of full scale has a power near 0.09; after the codec and the mix it stays far
            // above this, and far above what leaks to a frequency no one sends.
            return speakerTones.filter { ToneAnalysis.power(of: window, frequency: Double($0)) > 0.002 }.count
        }
    }

    /// CPU ticks and wake-ups of a process and its threads at one moment, from `/proc`.
    struct ProcessSample {
        static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

        struct Task {
            var name: String
            var ticks: Int
            var voluntarySwitches: Int
        }

        /// User and system ticks of the whole process (its threads, live and ended).
        var ticks: Int
        var tasks: [Int: Task]

        var voluntarySwitches: Int { tasks.values.reduce(0) { $0 + $1.voluntarySwitches } }

        init?(pid: Int32) {
            guard let process = Self.stat("/proc/\(pid)/stat") else { return nil }
            ticks = process.ticks
            tasks = [:]
            let folder = "/proc/\(pid)/task"
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                guard let id = Int(entry), let stat = Self.stat("\(folder)/\(entry)/stat"),
                    let status = try? String(contentsOfFile: "\(folder)/\(entry)/status", encoding: .utf8)
                else { continue }
                let switches = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                    .flatMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
                tasks[id] = Task(name: stat.name, ticks: stat.ticks, voluntarySwitches: switches ?? 0)
            }
        }

        /// The name and the user plus system ticks in a `stat` file.
        static func stat(_ path: String) -> (name: String, ticks: Int)? {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
            else { return nil }
            let name = String(text[text.index(after: open)..<close])
            // After the name: state is field 3; utime and stime are fields 14 and 15.
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
            return (name, user + system)
        }

        /// Each thread alive at both samples, busiest first, threads of one name together.
        func threads(since before: ProcessSample, seconds: Double) -> [ThreadUse] {
            var byName: [String: (ticks: Int, switches: Int)] = [:]
            for (id, task) in tasks {
                let earlier = before.tasks[id] ?? Task(name: task.name, ticks: 0, voluntarySwitches: 0)
                let sum = byName[task.name] ?? (0, 0)
                byName[task.name] = (
                    sum.ticks + task.ticks - earlier.ticks,
                    sum.switches + task.voluntarySwitches - earlier.voluntarySwitches
                )
            }
            return byName.map { name, use in
                ThreadUse(
                    name: name, cpuSecondsPerMinute: Double(use.ticks) / Self.ticksPerSecond / seconds * 60,
                    wakeUpsPerSecond: Double(use.switches) / seconds)
            }.sorted { ($0.cpuSecondsPerMinute, $0.wakeUpsPerSecond) > ($1.cpuSecondsPerMinute, $1.wakeUpsPerSecond) }
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
            for (pipe, text) in [(out, output), (err, errors)] {
                pipe.fileHandleForReading.readabilityHandler = { handle in
                    let data = handle.availableData
                    // At the end of the stream the handler would fire forever with nothing: stop it.
                    if data.isEmpty {
                        handle.readabilityHandler = nil
                        text.close()
                    } else {
                        text.append(data)
                    }
                }
            }
            try process.run()
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
