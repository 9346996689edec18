import AudioCodec
import AudioDevices
import ClientAudio
import Foundation
import RoomTesting
import Testing

/// The replay's player over a real Ogg Opus file: it plays the whole file, pauses, seeks, and stops.
@Suite(.ownThread) struct ReplayPlayerTests {
    /// A 2-second tone made with sox and opusenc.
    private func recording() throws -> (folder: TemporaryDirectory, path: String) {
        let folder = TemporaryDirectory()
        let path = folder.file("tone.opus")
        try RecordingFixture.toneOpus(at: path, seconds: 2)
        return (folder, path)
    }

    @Test func libopusfileSeeksToASample() throws {
        let (folder, path) = try recording()
        defer { folder.remove() }
        let file = try OggOpusFile(path: path)
        #expect(file.sampleCount == 96_000)
        try file.seek(toSample: 60_000)
        let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 960)
        defer { buffer.deallocate() }
        var total = 0
        while case let count = try file.read(into: buffer), count > 0 { total += count }
        #expect(total == 36_000)
    }

    @Test(.timeLimit(.minutes(1))) func itPlaysTheWholeFileAndSeeksBack() throws {
        let (folder, path) = try recording()
        defer { folder.remove() }
        let wav = folder.file("heard.wav")
        let output = try WAVFileOutput(path: wav, pacing: .unpaced)
        let player = try ReplayPlayer(path: path, output: output)
        #expect(player.lengthMilliseconds == 2_000)
        player.start()
        #expect(waitUntil { player.ended })
        #expect(player.position == 2_000)
        player.seek(to: 1_500)
        #expect(player.position == 1_500)
        #expect(waitUntil { player.ended })
        #expect(player.position == 2_000)
        player.stop()
        #expect(player.finished)
        #expect(player.failure == nil)
        // The whole file, then its last half second again.
        let size = try FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int
        #expect(size == 44 + 2 * (96_000 + 24_000))
    }

    @Test(.timeLimit(.minutes(1))) func aSeekFarPastTheEndNeitherTrapsNorPlays() throws {
        let (folder, path) = try recording()
        defer { folder.remove() }
        let player = try ReplayPlayer(path: path, output: NullOutput(pacing: .unpaced))
        player.seek(to: .max)
        player.start()
        #expect(waitUntil { player.ended })
        #expect(player.position == 2_000)
        player.stop()
        #expect(player.failure == nil)
    }

    @Test(.timeLimit(.minutes(1))) func aPausedPlayerWritesNothing() throws {
        let (folder, path) = try recording()
        defer { folder.remove() }
        let player = try ReplayPlayer(path: path, output: NullOutput(pacing: .unpaced))
        player.pause()
        player.start()
        usleep(100_000)
        #expect(player.position == 0)
        player.resume()
        #expect(waitUntil { player.ended })
        player.stop()
    }

    @Test func aFileThatIsNotOggOpusIsRefused() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("notes.opus")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: SoundFileError.self) { try ReplayPlayer(path: path, output: NullOutput(pacing: .unpaced)) }
    }
}
