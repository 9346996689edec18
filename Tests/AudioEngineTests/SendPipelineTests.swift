import AudioCodec
import AudioCore
import AudioDevices
import AudioEngine
import Testing

/// `SendPipeline.process`: a microphone's frames through the talking controls and Opus, on a simulated clock,
/// and what a decoder makes of the packets: a clean tone, mute, push-to-talk, DTX, timestamps and voice
/// processing.
@Suite struct SendPipelineTests {
    /// The tone's amplitude, about -12 dBFS; its Goertzel power relative to a full-scale sine.
    static let amplitude = 8_000.0
    static let tonePower = (amplitude / 32_767) * (amplitude / 32_767)

    /// Opus's own voice activity detection takes a steady tone for silence after a while and goes into DTX, so
    /// tone tests (like bots that send a tone) turn DTX off.
    static let toneEncoder = OpusEncoder.Configuration(discontinuousTransmission: false)

    /// A send pipeline fed by `input` 10 ms at a time, as a device thread would, one 20 ms frame per step on a
    /// clock that starts at 20 ms.
    final class Sender {
        let pipeline: SendPipeline
        let talk: TalkSwitch
        let input: any AudioInput
        private(set) var frameIndex = 0
        private(set) var packets: [EncodedAudio] = []

        init(input: any AudioInput, talk: TalkControl = TalkControl(), voiceProcessing: Bool = false) throws {
            self.input = input
            self.talk = TalkSwitch(talk)
            pipeline = try SendPipeline(
                configuration: SendPipeline.Configuration(
                    voiceProcessing: voiceProcessing, encoder: SendPipelineTests.toneEncoder, initialTimestamp: 1_000),
                talk: self.talk)
        }

        /// The simulated time, in milliseconds, at the end of the frame the next step captures.
        var now: Int64 { Int64(frameIndex + 1) * 20 }

        /// Captures and processes `frames` frames; returns how many were sent.
        @discardableResult
        func run(frames: Int) throws -> Int {
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            let period = AudioFormat.samplesPerPeriod
            var sent = 0
            for _ in 0..<frames {
                try frame.withUnsafeMutableBufferPointer { frame in
                    _ = try input.read(into: UnsafeMutableBufferPointer(rebasing: frame[0..<period]))
                    _ = try input.read(into: UnsafeMutableBufferPointer(rebasing: frame[period..<(2 * period)]))
                    if let packet = pipeline.process(frame, played: nil, at: now) {
                        packets.append(packet)
                        sent += 1
                    }
                }
                frameIndex += 1
            }
            return sent
        }

        /// Every packet sent so far, decoded in order.
        func decoded() throws -> [Int16] {
            let decoder = try OpusDecoder()
            return try packets.flatMap { try decoder.decode($0.payload).samples }
        }
    }

    static func tone() -> ToneInput { ToneInput(frequency: 440, amplitude: amplitude, pacing: .unpaced) }

    @Test func aToneIsSentWithItsFrequencyAndLevel() throws {
        let sender = try Sender(input: Self.tone())
        try sender.run(frames: 150)
        #expect(sender.pipeline.statistics.packetsSent == 150)
        #expect(sender.pipeline.statistics.framesCaptured == 150)
        #expect(sender.packets.map(\.timestamp) == (0..<150).map { 1_000 + UInt32($0) * 960 })
        #expect(sender.packets.allSatisfy { $0.level == 15 })
        // Past the first 200 ms (the codec's start-up), the tone is there at its level.
        let steady = Array(try sender.decoded()[9_600...])
        #expect(ToneAnalysis.dominantFrequency(of: steady, in: 100...2_000).frequency == 440)
        let power = ToneAnalysis.power(of: steady, frequency: 440)
        #expect(power > Self.tonePower * 0.8 && power < Self.tonePower * 1.25)
    }

    @Test func aMutedMicrophoneSendsNothing() throws {
        let sender = try Sender(input: Self.tone(), talk: TalkControl(muted: true))
        #expect(try sender.run(frames: 50) == 0)
        #expect(sender.pipeline.statistics.packetsSent == 0)
        #expect(sender.pipeline.statistics.closedFrames == 50)
        // The level is still measured, for the preview a muted speaker sees.
        #expect(sender.pipeline.lastLevel <= 16)
    }

    @Test func pushToTalkSendsOnlyWhileLatched() throws {
        let sender = try Sender(input: Self.tone(), talk: TalkControl(mode: .pushToTalk))
        try sender.run(frames: 25)
        #expect(sender.pipeline.statistics.packetsSent == 0)
        // A press at the simulated time of the next frame opens the microphone for 600 ms: 30 frames.
        sender.talk.talkKeyPressed(at: sender.now)
        try sender.run(frames: 50)
        #expect(sender.pipeline.statistics.packetsSent == 30)
        #expect(sender.pipeline.statistics.closedFrames == 45)
    }

    @Test func silenceIsDiscontinuousTransmission() throws {
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false), talk: TalkSwitch())
        let input = SilenceInput(pacing: .unpaced)
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        for index in 0..<100 {
            _ = try frame.withUnsafeMutableBufferPointer { frame in
                _ = try input.read(into: frame)
                return sender.process(frame, played: nil, at: Int64(index + 1) * 20)
            }
        }
        // Opus needs a few frames before it settles into DTX, then sends nothing.
        #expect(sender.statistics.dtxFrames >= 80)
        #expect(sender.statistics.packetsSent <= 20)
    }

    @Test func timestampsAdvanceAcrossGaps() throws {
        let talk = TalkSwitch(TalkControl(mode: .pushToTalk))
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false, initialTimestamp: UInt32.max - 959),
            talk: talk)
        var frame = [Int16](repeating: 1_000, count: 960)
        var sent: [UInt32] = []
        for index in 0..<6 {
            if index == 3 { talk.talkKeyPressed(at: 60) }
            let packet = frame.withUnsafeMutableBufferPointer { sender.process($0, played: nil, at: Int64(index) * 20) }
            if let packet { sent.append(packet.timestamp) }
        }
        // The wrap at 2^32 and the closed frames both advance the timestamp by 960 per frame.
        #expect(sent == [1_920, 2_880, 3_840])
    }

    @Test func voiceProcessingKeepsSpeechLikeSignalAudible() throws {
        let sender = try Sender(input: Self.tone(), voiceProcessing: true)
        try sender.run(frames: 100)
        #expect(sender.pipeline.statistics.packetsSent > 0)
        let decoded = try sender.decoded()
        #expect(ToneAnalysis.dominantFrequency(of: Array(decoded[9_600...]), in: 100...2_000).frequency == 440)
    }
}
