import AudioDevices
import Foundation
import RoomTesting
import Testing

/// These tests go through alsa-lib itself, using its `file` plugin over a `null` slave: what is played is
/// written to a raw file, and what is captured is read from one. The plugin is not paced, so they run fast.
/// The configuration is handed to alsa-lib as text (`ALSAOptions.configuration`), so the tests need neither
/// a sound card nor changes to the process's environment, and can run in parallel.
@Suite struct ALSAFileTests {
    static func configuration(name: String, output: String, input: String? = nil) -> String {
        let infile = input.map { "infile \"\($0)\"" } ?? ""
        return """
            pcm.\(name) {
                type file
                slave.pcm { type null }
                file "\(output)"
                \(infile)
                format "raw"
            }
            """
    }

    @Test func playbackWritesEverySampleThroughAlsaLib() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let out = directory.file("out.raw")
        let tone = Signals.tone(frequency: 440, count: 48_000)
        do {
            let speaker = try ALSAOutput(
                name: "speaker", options: ALSAOptions(configuration: Self.configuration(name: "speaker", output: out)))
            #expect(speaker.deviceRate == 48_000)
            // alsa-lib's own plugins are not a sound server's: a thread serving them may run at real-time priority.
            #expect(speaker.suitsRealTimePriority)
            for start in stride(from: 0, to: tone.count, by: 480) {
                let xruns = try tone[start..<start + 480].withUnsafeBufferPointer { try speaker.write($0) }
                #expect(xruns == 0)
            }
        }
        let written = Signals.samples(try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(written == tone)
    }

    @Test func captureReadsEverySampleThroughAlsaLib() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tone = Signals.tone(frequency: 440, count: 48_000)
        try Signals.raw(tone).write(to: URL(fileURLWithPath: directory.file("in.raw")))
        let microphone = try ALSAInput(
            name: "mic",
            options: ALSAOptions(
                configuration: Self.configuration(
                    name: "mic", output: directory.file("copy.raw"), input: directory.file("in.raw"))))
        var captured = [Int16](repeating: 0, count: 480 * 50)
        for start in stride(from: 0, to: captured.count, by: 480) {
            _ = try captured[start..<start + 480].withUnsafeMutableBufferPointer { try microphone.read(into: $0) }
        }
        #expect(captured == Array(tone[..<captured.count]))
    }

    @Test func aDeviceAt44_1kHzIsResampledOnPlayback() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let out = directory.file("out.raw")
        let tone = Signals.tone(frequency: 1_000, count: 48_000)
        do {
            let speaker = try ALSAOutput(
                name: "speaker",
                options: ALSAOptions(rate: 44_100, configuration: Self.configuration(name: "speaker", output: out)))
            #expect(speaker.deviceRate == 44_100)
            for start in stride(from: 0, to: tone.count, by: 480) {
                _ = try tone[start..<start + 480].withUnsafeBufferPointer { try speaker.write($0) }
            }
        }
        let written = Signals.samples(try Data(contentsOf: URL(fileURLWithPath: out)))
        // Whole device periods (441 frames) only; the resampler's filter delay and the last partial period stay
        // behind, so the file is one period short of a second at 44.1 kHz.
        #expect(written.count == 44_100 - 441, "\(written.count) frames")
        #expect(Signals.dominantFrequency(written[4_410...], seconds: 0.1, sampleRate: 44_100) == 1_000)
        #expect(Signals.rms(written[4_410...]) > Signals.rms(tone[...]) * 0.9)
    }

    @Test func aDeviceAt44_1kHzIsResampledOnCapture() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tone = Signals.tone(frequency: 1_000, sampleRate: 44_100, count: 44_100)
        try Signals.raw(tone).write(to: URL(fileURLWithPath: directory.file("in.raw")))
        let microphone = try ALSAInput(
            name: "mic",
            options: ALSAOptions(
                rate: 44_100,
                configuration: Self.configuration(
                    name: "mic", output: directory.file("copy.raw"), input: directory.file("in.raw"))))
        #expect(microphone.deviceRate == 44_100)
        var captured = [Int16](repeating: 0, count: 480 * 50)
        for start in stride(from: 0, to: captured.count, by: 480) {
            _ = try captured[start..<start + 480].withUnsafeMutableBufferPointer { try microphone.read(into: $0) }
        }
        #expect(Signals.dominantFrequency(captured[4_800...], seconds: 0.1) == 1_000)
        #expect(Signals.rms(captured[4_800...]) > Signals.rms(tone[...]) * 0.9)
    }

    @Test func aMissingDeviceIsNotFound() {
        #expect(throws: AudioDeviceError.notFound(device: "clubroom-no-such-pcm", code: -ENOENT)) {
            try ALSAInput(name: "clubroom-no-such-pcm")
        }
        #expect(throws: AudioDeviceError.notFound(device: "nowhere", code: -ENOENT)) {
            try ALSAOutput(name: "nowhere", options: ALSAOptions(configuration: "pcm.elsewhere { type null }"))
        }
        #expect(throws: AudioDeviceError.self) {
            try ALSAOutput(name: "broken", options: ALSAOptions(configuration: "pcm.broken { type"))
        }
    }

    @Test func aPlaybackStreamPlaysItsRingThroughAlsaLib() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let out = directory.file("out.raw")
        let tone = Signals.tone(frequency: 440, count: 48_000)
        let ring = TestRing(capacity: 48_000)
        #expect(ring.write(tone) == 48_000)
        let log = StatusLog()
        let stream = AudioStream.playback(
            alsaDevice: "speaker",
            alsaOptions: ALSAOptions(configuration: Self.configuration(name: "speaker", output: out)),
            from: ring, options: StreamOptions(realTimePriority: false), onStatus: log.record)
        stream.start()
        #expect(waitUntil { stream.statistics.periods >= 120 })
        stream.stop()
        let statistics = stream.statistics
        #expect(log.all.isEmpty)
        #expect(!stream.isUsingFallback)
        #expect(statistics.xruns == 0)
        #expect(statistics.starvedPeriods == statistics.periods - 100)
        let written = Signals.samples(try Data(contentsOf: URL(fileURLWithPath: out)))
        #expect(written.count == statistics.periods * 480)
        #expect(Array(written[..<48_000]) == tone)
        #expect(written[48_000...].allSatisfy { $0 == 0 })
    }
}
