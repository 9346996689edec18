import AudioCore
import Foundation
import Platform
import RoomTesting
import Testing

@testable import AudioDevices

@Suite(.ownThread) struct VirtualDeviceTests {
    func read(_ input: any AudioInput, periods: Int) throws -> [Int16] {
        var samples = [Int16](repeating: 0, count: periods * 480)
        for start in stride(from: 0, to: samples.count, by: 480) {
            _ = try samples[start..<start + 480].withUnsafeMutableBufferPointer { try input.read(into: $0) }
        }
        return samples
    }

    @Test func aToneInputProducesItsFrequency() throws {
        let tone = ToneInput(frequency: 440, amplitude: 10_000, pacing: .unpaced)
        #expect(tone.name == "tone:440")
        let samples = try read(tone, periods: 100)
        #expect(Signals.dominantFrequency(samples[...], seconds: 0.1) == 440)
        #expect(abs(Signals.rms(samples[...]) - 10_000 / 2.0.squareRoot()) < 50)
    }

    @Test func silenceIsSilent() throws {
        #expect(try read(SilenceInput(pacing: .unpaced), periods: 10).allSatisfy { $0 == 0 })
    }

    /// A recording at `path` of `samples` (a whole number of 10 ms periods), played a period at a time; not
    /// closed.
    static func record(_ samples: [Int16], to path: String) throws -> WAVFileOutput {
        let output = try WAVFileOutput(path: path, pacing: .unpaced)
        for start in stride(from: 0, to: samples.count, by: 480) {
            _ = try samples[start..<start + 480].withUnsafeBufferPointer { try output.write($0) }
        }
        return output
    }

    /// A recording (`record:PATH`) is its maker's only: mode 0600, also over an older file anyone could read.
    @Test func aRecordingIsCreatedForItsOwnerOnly() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let fresh = directory.file("fresh.wav")
        let older = directory.file("older.wav")
        _ = FileManager.default.createFile(atPath: older, contents: Data([1]), attributes: [.posixPermissions: 0o644])
        for path in [fresh, older] {
            let output = try Self.record(Signals.tone(frequency: 440, count: 480), to: path)
            output.close()
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(path)")
        }
    }

    @Test func aWAVFileRoundTripsAndLoops() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("tone.wav")
        let tone = Signals.tone(frequency: 440, count: 4_800)
        let output = try Self.record(tone, to: path)
        output.close()
        #expect(output.writtenBytes == 9_600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 44 + 9_600)

        let looping = try WAVFileInput(path: path, pacing: .unpaced)
        #expect(looping.samples == tone)
        #expect(try read(looping, periods: 15) == tone + tone[..<2_400])

        let once = try WAVFileInput(path: path, loops: false, pacing: .unpaced)
        let samples = try read(once, periods: 12)
        #expect(Array(samples[..<4_800]) == tone)
        #expect(samples[4_800...].allSatisfy { $0 == 0 })
        #expect(once.isFinished)
    }

    /// A recording whose program never closes it (killed) is still a WAV of every whole second written: the
    /// header's sizes follow each write to the file.
    @Test func aRecordingNeverClosedStillReadsUpToItsLastWholeSecond() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("killed.wav")
        let tone = Signals.tone(frequency: 440, count: 120_000)
        let output = try Self.record(tone, to: path)
        // 2.5 s written: two whole seconds are in the file, half a second waits in the buffer.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.count == 44 + 2 * 96_000)
        let audio = try WAVAudio.decode(bytes)
        #expect(audio.samples.count == 96_000)
        #expect(audio.samples.elementsEqual(tone[..<96_000]))
        output.close()
        let closed = try WAVAudio.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(closed.samples.count == tone.count)
        #expect(closed.samples.elementsEqual(tone))
    }

    /// `record:PATH` opened again in the same process (the stage reopens the loudspeaker) continues the
    /// recording; a new process starts it over.
    @Test func aRecordingOpenedAgainContinuesWhereItStopped() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("session.wav")
        let first = Signals.tone(frequency: 440, count: 4_800)
        let second = Signals.tone(frequency: 880, count: 9_600)
        func play(_ samples: [Int16]) throws {
            let output = try DeviceSpec.record(path: path).openOutput(pacing: .unpaced)
            for start in stride(from: 0, to: samples.count, by: 480) {
                _ = try samples[start..<start + 480].withUnsafeBufferPointer { try output.write($0) }
            }
        }
        try play(first)
        try play(second)
        let audio = try WAVAudio.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(audio.samples.count == first.count + second.count)
        #expect(audio.samples.elementsEqual(first + second))
        // Opened directly (as a new process would), the file starts over.
        let fresh = try Self.record(first, to: path)
        fresh.close()
        #expect(try WAVAudio.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))).samples.count == 4_800)
    }

    @Test func aStereo44_1kHzWAVFileIsMixedDownAndResampled() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("stereo.wav")
        let left = Signals.tone(frequency: 1_000, sampleRate: 44_100, count: 44_100)
        var bytes = try #require(WAVAudio.header(sampleRate: 44_100, channelCount: 2, dataBytes: left.count * 4))
        for sample in left {
            for _ in 0..<2 {
                bytes.append(UInt8(truncatingIfNeeded: sample))
                bytes.append(UInt8(truncatingIfNeeded: sample >> 8))
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let input = try WAVFileInput(path: path, pacing: .unpaced)
        #expect(abs(input.samples.count - 48_000) < 100)
        #expect(Signals.dominantFrequency(input.samples[4_800...], seconds: 0.1) == 1_000)
    }

    @Test func aBrokenWAVFileIsAFileError() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("broken.wav")
        // The RIFF size ("....") promises far more than the file holds.
        try Data("RIFF....WAVEjunk".utf8).write(to: URL(fileURLWithPath: path))
        #expect(
            throws: AudioDeviceError.file(
                path: path,
                problem: "is not a 16-bit PCM WAV file (WAV: the file is truncated: it needs 774778422 bytes but has "
                    + "16 (at byte 4))")
        ) {
            try WAVFileInput(path: path)
        }
        // A whole RIFF/WAVE file with no chunks at all.
        try Data("RIFF\u{4}\0\0\0WAVE".utf8).write(to: URL(fileURLWithPath: path))
        #expect(
            throws: AudioDeviceError.file(
                path: path, problem: "is not a 16-bit PCM WAV file (WAV: no \"data\" chunk (at byte 12))")
        ) {
            try WAVFileInput(path: path)
        }
        #expect(throws: AudioDeviceError.file(path: directory.file("none.wav"), problem: "cannot be read")) {
            try WAVFileInput(path: directory.file("none.wav"))
        }
    }

    @Test func thePeriodClockKeepsAbsoluteDeadlines() {
        var clock = PeriodClock()
        clock.wait()
        let first = clock.nextDeadline
        for _ in 0..<5 { clock.wait() }
        // However late each wake-up was (short of a 100 ms stall), the schedule advanced by exactly five periods.
        #expect(clock.nextDeadline - first == 5 * 10_000_000)
        #expect(clock.resynchronisations == 0)
    }

    /// A paced device keeps the pace of the periods it is asked for: a stream with 20 ms periods is woken every
    /// 20 ms, not every 10.
    @Test func aPacedDeviceWaitsAWholePeriodOfWhatItIsAskedFor() throws {
        let input = SilenceInput(pacing: .realTime)
        var frame = [Int16](repeating: 1, count: 960)
        let start = MonotonicClock.microseconds()
        for _ in 0..<5 { _ = try frame.withUnsafeMutableBufferPointer { try input.read(into: $0) } }
        // Five deadlines, 20 ms apart from the first read on: at least 100 ms, however busy the machine.
        #expect(MonotonicClock.microseconds() - start >= 100_000)
        #expect(frame.allSatisfy { $0 == 0 })
    }
}
