import AudioCodec
import AudioCore
import AudioDevices
import Foundation
import RoomTesting
import Testing

@testable import ClientAudio

/// A file played into the room through the send path: its level beside the microphone (−6 dB, ducked to −12 dB
/// under speech), Opus's music mode, the mute, and stopping.
@Suite struct FilePlayerTests {
    /// The file's tone: 440 Hz at half scale.
    static let fileAmplitude = 16_000.0
    static let filePower = (fileAmplitude / 32_767) * (fileAmplitude / 32_767)

    /// A 3 s WAV of the tone in `directory`.
    static func toneFile(_ directory: TemporaryDirectory) throws -> String {
        var tone = ToneGenerator(frequency: 440, amplitude: fileAmplitude / 32_767)
        var samples = [Int16](repeating: 0, count: 3 * AudioFormat.sampleRate)
        samples.withUnsafeMutableBufferPointer { tone.fill($0) }
        let path = directory.file("tone.wav")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(try WAVAudio(samples: samples).encoded())))
        return path
    }

    /// Runs `frames` frames of `microphone` through a send path that plays `player`, each once the decoding thread
    /// has a frame ready; returns the packets' payloads.
    static func send(
        frames: Int, microphone: any AudioInput, player: FilePlayer, muted: Bool = false
    ) throws -> (payloads: [[UInt8]], pipeline: SendPipeline) {
        let pipeline = try SendPipeline(
            configuration: SendPipeline.Configuration(
                voiceProcessing: false, encoder: OpusEncoder.Configuration(discontinuousTransmission: false)),
            talk: TalkSwitch(muted: muted), stream: SendPipelineTests.stream, player: player)
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var packet = [UInt8](repeating: 0, count: SendPipeline.maxPacketBytes)
        var payloads: [[UInt8]] = []
        // The first frame lets the decoding thread start (the ring is emptied for it first).
        for index in 0..<(frames + 1) {
            let length = try frame.withUnsafeMutableBufferPointer { frame in
                _ = try microphone.read(into: frame)
                return packet.withUnsafeMutableBytes {
                    pipeline.send(frame, played: nil, into: $0)
                }
            }
            if index == 0 {
                usleep(200_000)
                continue
            }
            if let length { payloads.append(Array(try SentPacket(Array(packet[0..<length])).payload)) }
            // The decoding thread keeps ahead of a real media thread by far; on a busy machine, give it time.
            for _ in 0..<2_000 where player.isPlaying && player.bufferedSamples < AudioFormat.samplesPerFrame {
                usleep(1_000)
            }
        }
        return (payloads, pipeline)
    }

    static func decoded(_ payloads: [[UInt8]]) throws -> [Int16] {
        let decoder = try OpusDecoder()
        return try payloads.flatMap { try decoder.decode($0).samples }
    }

    @Test func theFileIsSentAtMinusSixDecibelsInMusicModeBesideASilentMicrophone() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let player = FilePlayer()
        let playing = try player.play(try Self.toneFile(directory))
        #expect(playing == NowPlaying(title: "tone", format: .wav, position: 0, length: 3))
        let (payloads, pipeline) = try Self.send(
            frames: 100, microphone: SilenceInput(pacing: .unpaced), player: player)
        #expect(payloads.count == 100)
        // The first frame too: the file plays from the call on, though its samples come a moment later.
        #expect(pipeline.statistics.musicFrames == 101)
        let steady = Array(try Self.decoded(payloads)[9_600...])
        #expect(ToneAnalysis.dominantFrequency(of: steady, in: 100...2_000).frequency == 440)
        let power = ToneAnalysis.power(of: steady, frequency: 440)
        #expect(power > Self.filePower * 0.25 * 0.8 && power < Self.filePower * 0.25 * 1.25, "power \(power)")
        // 64 kbit/s is 160 bytes a frame; speech at 24 kbit/s would be about 60.
        let mean = payloads.dropFirst(10).map(\.count).reduce(0, +) / (payloads.count - 10)
        #expect(mean > 120, "mean payload \(mean) bytes")
        // Music mode: CELT (TOC configurations 16–31), fullband (28–31).
        #expect(payloads.dropFirst(10).allSatisfy { $0[0] >> 3 >= 28 })
        #expect(player.nowPlaying.map { $0.position >= 2 } == true)
    }

    @Test func speechDucksTheFileToMinusTwelveDecibels() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let player = FilePlayer()
        try player.play(try Self.toneFile(directory))
        // A loud microphone counts as voice without voice processing.
        let voice = ToneInput(frequency: 1_000, amplitude: 8_000, pacing: .unpaced)
        let (payloads, _) = try Self.send(frames: 100, microphone: voice, player: player)
        let steady = Array(try Self.decoded(payloads)[9_600...])
        let power = ToneAnalysis.power(of: steady, frequency: 440)
        #expect(power > Self.filePower * 0.0625 * 0.8 && power < Self.filePower * 0.0625 * 1.25, "power \(power)")
        #expect(ToneAnalysis.power(of: steady, frequency: 1_000) > 0.04)
    }

    @Test func mutedSendsNothingFileIncludedAndStoppingEndsTheMusic() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let player = FilePlayer()
        try player.play(try Self.toneFile(directory))
        let muted = try Self.send(
            frames: 20, microphone: SilenceInput(pacing: .unpaced), player: player, muted: true)
        #expect(muted.payloads.isEmpty)
        #expect(player.stop())
        #expect(player.nowPlaying == nil)
        #expect(!player.stop())
        let after = try Self.send(frames: 20, microphone: SilenceInput(pacing: .unpaced), player: player)
        #expect(after.pipeline.statistics.musicFrames == 0)
        #expect(after.payloads.allSatisfy { $0[0] >> 3 < 16 }, "speech settings again (SILK or hybrid)")
    }

    @Test func aFileThatCannotBePlayedIsRefusedAndWhatPlayedGoesOn() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let player = FilePlayer()
        try player.play(try Self.toneFile(directory))
        let notes = directory.file("notes.txt")
        #expect(FileManager.default.createFile(atPath: notes, contents: Data("hello\n".utf8)))
        #expect(throws: SoundFileError(path: notes, problem: .unknownFormat)) { try player.play(notes) }
        let missing = directory.file("missing.opus")
        #expect(throws: SoundFileError(path: missing, problem: .unreadable)) { try player.play(missing) }
        let fakeOgg = directory.file("fake.opus")
        #expect(FileManager.default.createFile(atPath: fakeOgg, contents: Data("OggS and nothing more".utf8)))
        #expect(throws: SoundFileError.self) { try player.play(fakeOgg) }
        #expect(player.nowPlaying?.title == "tone")
    }
}
