import AudioCodec
import AudioCore
import BenchmarkSupport
import Foundation
import Platform

/// `clubroom bench record`: what a recorder costs, and whether its file is what a listener heard. The same rig as
/// `bench cpu` (a real `clubroom serve` on loopback, three speaker bots sending tones), a listener bot recording
/// what it plays, and `clubroom record` as a process of its own.
///
/// - The recorder's CPU time (utime + stime from `/proc/PID/stat`) per minute of audio, beside its floor measured
///   in the same run on one thread of the bench: libopus decoding the three speakers' streams and encoding one mix
///   (libopusenc, the recorder's settings, to /dev/null), a frame per 20 ms as the recorder does.
/// - The server's CPU per minute over the same length of time without and then with the recorder in the room.
/// - The recorded audio against the listener's: the tones each holds, and the timeline: one speaker is muted for
///   2 s in the middle, and the gap's length in the recorder's file is set beside the gap in the listener's
///   recording, and the record's talk event beside the tone's return in the file.
public enum RecordBenchmark {
    /// Why the rig could not run.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Everything one run measured.
    public struct Result: Sendable, Equatable {
        public var recorderCPU: Double
        public var floorDecoding: Double
        public var floorEncoding: Double
        public var serverWithout: Double
        public var serverWith: Double
        public var tonesRecorded: Int
        public var tonesHeard: Int
        /// The gap in the recorder's file minus the gap in the listener's recording, milliseconds.
        public var gapDifference: Double
        /// The return of the muted speaker's tone in the file minus the record's talk event for it, milliseconds.
        public var recordOffset: Double
        public var seconds: Double

        public var floor: Double { floorDecoding + floorEncoding }
    }

    /// Runs the rig with `executable` (the `clubroom` binary), measuring `seconds`.
    public static func run(executable: String, seconds: Int) throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-record-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = directory + "/state"
        environment["XDG_DATA_HOME"] = directory + "/data"
        let rig = ClientCPUBenchmark.Rig(executable: executable, directory: directory, environment: environment)
        defer { rig.stop() }
        try rig.start()
        guard let server = rig.server else { throw Failure(description: "the server did not start") }
        let heardPath = directory + "/heard.wav"
        let listener = try rig.child([
            "bot", rig.url, "--token", try rig.mint(identity: "listener", role: "audience"), "--record", heardPath,
        ])
        defer { listener.finish() }
        guard listener.waitFor("\"media_path\"", seconds: 15) else {
            throw Failure(description: "the listener did not start its media: \(listener.standardError)")
        }
        Thread.sleep(forTimeInterval: 2)
        let serverWithout = try cpuPerMinute(pid: server.process.processIdentifier, seconds: Double(seconds))

        let tokenFile = directory + "/recorder.token"
        let token = try rig.mint(identity: "recorder", role: "recorder")
        guard FileManager.default.createFile(atPath: tokenFile, contents: Data(token.utf8)) else {
            throw Failure(description: "\(tokenFile): cannot be written")
        }
        let out = directory + "/bench.opus"
        let recorder = try rig.child(["record", rig.url, "--token-file", tokenFile, "--out", out])
        guard recorder.waitFor("Recording bench to", inErrors: true, seconds: 15) else {
            recorder.terminate()
            throw Failure(description: "the recorder did not start: \(recorder.standardError)")
        }
        Thread.sleep(forTimeInterval: 2)
        let recorderPID = recorder.process.processIdentifier
        guard let before = ProcessSample(pid: recorderPID),
            let serverBefore = ProcessSample(pid: server.process.processIdentifier)
        else { throw Failure(description: "the recorder exited early: \(recorder.standardError)") }
        let start = MonotonicClock.microseconds()
        // One speaker falls silent for 2 s in the middle of the window: the gap is looked for in both files.
        let quiet = max(2.0, Double(seconds) / 2 - 1)
        Thread.sleep(forTimeInterval: quiet)
        rig.bots[0].send(#"{"cmd":"mute","on":true}"#)
        Thread.sleep(forTimeInterval: 2)
        rig.bots[0].send(#"{"cmd":"mute","on":false}"#)
        Thread.sleep(forTimeInterval: max(2.0, Double(seconds) - quiet - 2))
        guard let after = ProcessSample(pid: recorderPID),
            let serverAfter = ProcessSample(pid: server.process.processIdentifier)
        else { throw Failure(description: "the recorder exited early: \(recorder.standardError)") }
        let elapsed = Double(MonotonicClock.microseconds() - start) / 1e6
        recorder.terminate(seconds: 20)
        listener.finish()
        guard recorder.process.terminationStatus == 0 else {
            throw Failure(description: "the recorder failed: \(recorder.standardError)")
        }
        let recorderCPU = Double(after.ticks - before.ticks) / ProcessSample.ticksPerSecond / elapsed * 60
        let serverWith = Double(serverAfter.ticks - serverBefore.ticks) / ProcessSample.ticksPerSecond / elapsed * 60

        let recorded = try SoundFile.readMono48k(path: out)
        let heard = try SoundFile.readMono48k(path: heardPath)
        let muted = Double(ClientCPUBenchmark.speakerTones[0])
        let recordedGap = gap(in: recorded, hertz: muted)
        let heardGap = gap(in: heard, hertz: muted)
        var recordOffset = Double.nan
        if let recordedGap, let data = FileManager.default.contents(atPath: directory + "/bench.json"),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let events = object["events"] as? [[String: Any]]
        {
            let returns = events.filter { $0["kind"] as? String == "talk" && $0["peer"] as? String == "speaker-1" }
                .compactMap { ($0["at_ms"] as? NSNumber)?.doubleValue }
            if let back = returns.min(by: { abs($0 - recordedGap.end) < abs($1 - recordedGap.end) }) {
                recordOffset = recordedGap.end - back
            }
        }
        let gapDifference =
            (recordedGap.map { $0.end - $0.start } ?? .nan) - (heardGap.map { $0.end - $0.start } ?? .nan)

        let frames = min(seconds, 20) * 1000 / AudioFormat.frameMilliseconds
        let tones = ClientCPUBenchmark.speakerTones.map { CPUFloor.botTone(hertz: $0, seconds: 5) }
        let decoding = try CPUFloor.opusAlone(frames: frames, speech: tones[0], remote: tones, encoding: false)
        let encoding = try encodingAlone(frames: frames, tones: tones)
        return Result(
            recorderCPU: recorderCPU, floorDecoding: CPUFloor.perMinute(decoding, frames: frames),
            floorEncoding: CPUFloor.perMinute(encoding, frames: frames), serverWithout: serverWithout,
            serverWith: serverWith, tonesRecorded: tonesIn(recorded), tonesHeard: tonesIn(heard),
            gapDifference: gapDifference, recordOffset: recordOffset, seconds: elapsed)
    }

    /// The process's CPU seconds per minute over the next `seconds`.
    static func cpuPerMinute(pid: Int32, seconds: Double) throws -> Double {
        guard let before = ProcessSample(pid: pid) else { throw Failure(description: "process \(pid) is gone") }
        let start = MonotonicClock.microseconds()
        Thread.sleep(forTimeInterval: seconds)
        guard let after = ProcessSample(pid: pid) else { throw Failure(description: "process \(pid) is gone") }
        let elapsed = Double(MonotonicClock.microseconds() - start) / 1e6
        return Double(after.ticks - before.ticks) / ProcessSample.ticksPerSecond / elapsed * 60
    }

    /// libopusenc encoding the three tones' mix to /dev/null with the recorder's settings, a frame per 20 ms:
    /// thread CPU nanoseconds of the work alone.
    static func encodingAlone(frames: Int, tones: [[Int16]]) throws -> Int64 {
        let writer = try OggOpusWriter(path: "/dev/null", tags: [("ROOM", "bench")])
        var mixer = Mixer()
        var mixed = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var spent: Int64 = 0
        var next = MonotonicClock.microseconds()
        for index in 0..<frames {
            let offset = index * AudioFormat.samplesPerFrame % (tones[0].count - AudioFormat.samplesPerFrame)
            for tone in tones { mixer.add(Array(tone[offset..<offset + AudioFormat.samplesPerFrame])) }
            mixed.withUnsafeMutableBufferPointer { mixer.render(into: $0) }
            let start = MonotonicClock.threadCPUNanoseconds()
            try writer.append(mixed)
            spent += MonotonicClock.threadCPUNanoseconds() - start
            next += AudioFormat.frameMicroseconds
            let now = MonotonicClock.microseconds()
            if next > now { MonotonicClock.sleep(microseconds: next - now) }
        }
        try writer.finish()
        return spent
    }

    /// How many of the speakers' tones sound in the last whole second before the end's last half second.
    static func tonesIn(_ samples: [Int16]) -> Int {
        guard samples.count >= AudioFormat.sampleRate * 2 else { return 0 }
        let end = samples.count - AudioFormat.sampleRate / 2
        let window = Array(samples[(end - AudioFormat.sampleRate)..<end])
        return ClientCPUBenchmark.speakerTones.filter {
            ToneAnalysis.power(of: window, frequency: Double($0)) > 0.002
        }.count
    }

    /// The longest stretch where the tone at `hertz` is absent between two stretches where it sounds, in
    /// milliseconds from the start of `samples` (20 ms windows every 5 ms); nil when there is none.
    static func gap(in samples: [Int16], hertz: Double) -> (start: Double, end: Double)? {
        let window = AudioFormat.samplesPerFrame
        let hop = window / 4
        guard samples.count > window else { return nil }
        var present: [Bool] = []
        var position = 0
        while position + window <= samples.count {
            let slice = Array(samples[position..<position + window])
            present.append(ToneAnalysis.power(of: slice, frequency: hertz) > 0.002)
            position += hop
        }
        var best: (start: Int, end: Int)?
        var index = 0
        while index < present.count {
            guard !present[index], index > 0, present[index - 1] else {
                index += 1
                continue
            }
            var end = index
            while end < present.count, !present[end] { end += 1 }
            if end < present.count, end - index > (best.map { $0.end - $0.start } ?? 0) { best = (index, end) }
            index = end
        }
        guard let best else { return nil }
        let millisecondsPerHop = Double(hop) * 1000 / Double(AudioFormat.sampleRate)
        // A window is absent once its last tone sample is gone, present once its last sample sounds.
        return (Double(best.start) * millisecondsPerHop, Double(best.end) * millisecondsPerHop + 20)
    }

    /// Runs the rig and shapes its figures into the shared report.
    public static func report(executable: String, seconds: Int) throws -> BenchmarkReport {
        let result = try run(executable: executable, seconds: seconds)
        let speakers = Double(ClientCPUBenchmark.speakerTones.count)
        let rows: [BenchmarkReport.Row] = [
            .init("recorder, room of 3 tone speakers", result.recorderCPU, "CPU s/min"),
            .init("its floor: libopus decode 3 + encode 1 (libopusenc)", result.floor, "CPU s/min"),
            .init("recorder: ratio to its floor", result.recorderCPU / result.floor, "×", target: 1.3),
            .init("floor: decode 3", result.floorDecoding, "CPU s/min"),
            .init("floor: encode 1 into Ogg", result.floorEncoding, "CPU s/min"),
            .init("server forwarding, without the recorder", result.serverWithout, "CPU s/min"),
            .init("server forwarding, with the recorder", result.serverWith, "CPU s/min"),
            .init("tones in the recording", Double(result.tonesRecorded), "of 3", target: speakers, goal: .atLeast),
            .init("tones the listener heard", Double(result.tonesHeard), "of 3", target: speakers, goal: .atLeast),
            .init(
                "a 2 s gap in the recording minus in the listener's ear", abs(result.gapDifference), "ms", target: 40),
            .init(
                "the tone's return in the file minus the record's talk event", abs(result.recordOffset), "ms",
                target: 40),
        ]
        return BenchmarkReport(
            name: "record: a recorder's CPU per minute of audio, and its file against a listener's ear", rows: rows,
            notes: [
                "a clubroom serve on loopback, three speaker bots sending tones "
                    + "(\(ClientCPUBenchmark.speakerTones.map(String.init).joined(separator: ", ")) Hz), a listener bot "
                    + "recording what it plays, and 'clubroom record' as its own process, measured for "
                    + String(format: "%.1f", result.seconds) + " s after 2 s of warm-up",
                "CPU: the process's utime + stime from /proc/PID/stat over the window; the server's first over as long "
                    + "a window before the recorder joined, then over the recorder's window",
                "floor, in the same run: one thread of this process decoding the three tones' packets (libopus) and "
                    + "encoding their mix with libopusenc at the recorder's settings to /dev/null, one frame per 20 ms; "
                    + "only the work is timed (thread CPU time)",
                "timeline: the first speaker is muted for 2 s in the middle of the window; its tone's gap is found in "
                    + "both files (Goertzel power over 20 ms windows every 5 ms)",
                buildNote,
            ])
    }
}
