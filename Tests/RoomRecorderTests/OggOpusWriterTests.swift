import AudioCore
import Foundation
import RoomTesting
import Testing

@testable import AudioCodec

@Suite struct OggOpusWriterTests {
    /// Runs a program and returns its exit status and everything it wrote (stdout and stderr together).
    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Decodes an Ogg Opus file with opusdec to 48 kHz mono samples.
    static func decode(_ path: String) throws -> [Int16] {
        let raw = path + ".raw"
        defer { unlink(raw) }
        let result = try run("opusdec", ["--quiet", "--rate", "48000", "--force-wav", path, raw])
        guard result.status == 0, let data = FileManager.default.contents(atPath: raw), data.count > 44 else {
            return []
        }
        // opusdec writes a WAV header of 44 bytes before the samples (mono here: the file is mono).
        return data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    @Test func aFileIsReadBackByOpusinfoAndOpusdecWithItsTags() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("room.opus")
        let writer = try OggOpusWriter(
            path: path, tags: [("ROOM", "jazz"), ("TOPIC", "Late sets"), ("DATE", "2026-12-06T05:00:00Z")])
        let tone = Signals.tone(frequency: 440, count: 48_000 * 3)
        for start in stride(from: 0, to: tone.count, by: AudioFormat.samplesPerFrame) {
            try writer.write(Array(tone[start..<start + AudioFormat.samplesPerFrame]), offset: Int64(start / 48))
        }
        try writer.close()
        let info = try Self.run("opusinfo", [path])
        #expect(info.status == 0)
        #expect(info.output.contains("ROOM=jazz"))
        #expect(info.output.contains("TOPIC=Late sets"))
        #expect(info.output.contains("DATE=2026-12-06T05:00:00Z"))
        #expect(info.output.contains("Channels: 1"))
        let samples = try Self.decode(path)
        #expect(abs(samples.count - tone.count) <= AudioFormat.samplesPerFrame)
        #expect(Signals.dominantFrequency(samples[48_000...]) == 440)
    }

    @Test func aFileCutOffWithoutClosingPlaysUpToItsLastSecond() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("killed.opus")
        let writer = try OggOpusWriter(path: path, tags: [("ROOM", "jazz")])
        let tone = Signals.tone(frequency: 660, count: 48_000 * 5)
        for start in stride(from: 0, to: tone.count, by: AudioFormat.samplesPerFrame) {
            try writer.write(Array(tone[start..<start + AudioFormat.samplesPerFrame]), offset: 0)
        }
        // Not closed: what is on disk now is what a killed process leaves.
        let copy = folder.file("copy.opus")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let samples = try Self.decode(copy)
        // At most the last page is missing (a second of audio), and the encoder's look-ahead (312 samples).
        #expect(samples.count >= 48_000 * 4 - 312)
        #expect(samples.count < 48_000 * 5 - 312)
        #expect(Signals.dominantFrequency(samples[48_000...]) == 660)
        withExtendedLifetime(writer) {}
    }

    @Test func aFullDiskIsAnErrorWithTheSystemsWords() throws {
        var failure: OggOpusWriterError?
        do {
            let writer = try OggOpusWriter(path: "/dev/full", tags: [("ROOM", "jazz")])
            let silence = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            for _ in 0..<200 { try writer.append(silence) }
            try writer.finish()
        } catch {
            failure = error
        }
        #expect(failure == OggOpusWriterError(path: "/dev/full", problem: "No space left on device"))
    }

    @Test func aFolderThatDoesNotExistIsRefusedAtOnce() {
        #expect(throws: OggOpusWriterError(path: "/nonexistent/room.opus", problem: "No such file or directory")) {
            _ = try OggOpusWriter(path: "/nonexistent/room.opus", tags: [])
        }
    }
}

extension OggOpusWriterTests {
    /// A recording stopped before any audio reached it (the recorder stopped at once) still closes into a
    /// complete file, of one frame of silence, instead of aborting inside libopusenc.
    @Test func aFileClosedBeforeAnyAudioIsACompleteFileOfOneSilentFrame() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("empty.opus")
        let writer = try OggOpusWriter(path: path, tags: [("ROOM", "jazz")])
        try writer.finish()
        let info = try Self.run("opusinfo", [path])
        #expect(info.status == 0, "\(info.output)")
        let samples = try Self.decode(path)
        #expect(samples.count == AudioFormat.samplesPerFrame)
        // Silent: opusdec's dither aside, nothing reaches -60 dBFS.
        let peak = samples.map { abs(Int($0)) }.max() ?? 0
        #expect(peak < 33, "peak \(peak)")
    }
}
