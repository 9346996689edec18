import AudioCodec
import AudioCore
import AudioDevices
import MediaWire
import RoomTesting
import Testing

@testable import ClientAudio

/// One RTP packet as the send path wrote it.
struct SentPacket {
    let header: RTPHeader
    let level: RTPAudioLevel?
    let payload: [UInt8]

    init(_ bytes: [UInt8]) throws {
        header = try RTPHeader.parse(bytes)
        level = try RTPOneByteExtension.audioLevel(in: bytes, header: header)
        payload = Array(bytes[header.payloadRange])
    }
}

/// `SendPipeline.send`: a microphone's frames through the mute, Opus and into RTP packets, and what a decoder
/// makes of the packets: a clean tone, mute, DTX, timestamps,
/// the level and voice flag each packet carries, and voice processing.
@Suite struct SendPipelineTests {
    /// The tone's amplitude, about -12 dBFS; its Goertzel power relative to a full-scale sine.
    static let amplitude = 8_000.0
    static let tonePower = (amplitude / 32_767) * (amplitude / 32_767)

    /// Opus's own voice activity detection takes a steady tone for silence after a while and goes into DTX, so
    /// tone tests (like bots that send a tone) turn DTX off.
    static let toneEncoder = OpusEncoder.Configuration(discontinuousTransmission: false)

    static let stream = SendPipeline.Stream(ssrc: 0x1234_5678, initialTimestamp: 1_000, initialSequence: 41)

    /// A send path fed by `input` 10 ms at a time, as a device thread would, one 20 ms frame per step.
    final class Sender {
        let pipeline: SendPipeline
        let talk: TalkSwitch
        let input: any AudioInput
        private(set) var packets: [SentPacket] = []

        init(
            input: any AudioInput, muted: Bool = false, voiceProcessing: Bool = false,
            encoder: OpusEncoder.Configuration = SendPipelineTests.toneEncoder,
            stream: SendPipeline.Stream = SendPipelineTests.stream
        ) throws {
            self.input = input
            self.talk = TalkSwitch(muted: muted)
            pipeline = try SendPipeline(
                configuration: SendPipeline.Configuration(voiceProcessing: voiceProcessing, encoder: encoder),
                talk: self.talk, stream: stream)
        }

        /// Captures and sends `frames` frames; returns how many packets came out.
        @discardableResult
        func run(frames: Int) throws -> Int {
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            var packet = [UInt8](repeating: 0, count: SendPipeline.maxPacketBytes)
            let period = AudioFormat.samplesPerPeriod
            var sent = 0
            for _ in 0..<frames {
                let length = try frame.withUnsafeMutableBufferPointer { frame in
                    _ = try input.read(into: UnsafeMutableBufferPointer(rebasing: frame[0..<period]))
                    _ = try input.read(into: UnsafeMutableBufferPointer(rebasing: frame[period..<(2 * period)]))
                    return packet.withUnsafeMutableBytes { pipeline.send(frame, played: nil, into: $0) }
                }
                if let length {
                    packets.append(try SentPacket(Array(packet[0..<length])))
                    sent += 1
                }
            }
            return sent
        }

        /// Every packet sent so far, decoded in order.
        func decoded() throws -> [Int16] {
            let decoder = try OpusDecoder()
            return try packets.flatMap { try decoder.decode($0.payload).samples }
        }
    }

    static func tone(amplitude: Double = amplitude) -> ToneInput {
        ToneInput(frequency: 440, amplitude: amplitude, pacing: .unpaced)
    }

    /// Sends one frame of `samples` through `pipeline`; the packet, or nil.
    static func sendOne(_ samples: [Int16], _ pipeline: SendPipeline) throws -> SentPacket? {
        var frame = samples
        var packet = [UInt8](repeating: 0, count: SendPipeline.maxPacketBytes)
        let length = frame.withUnsafeMutableBufferPointer { frame in
            packet.withUnsafeMutableBytes { pipeline.send(frame, played: nil, into: $0) }
        }
        return try length.map { try SentPacket(Array(packet[0..<$0])) }
    }

    @Test func aToneIsSentWithItsFrequencyAndLevel() throws {
        let sender = try Sender(input: Self.tone())
        try sender.run(frames: 150)
        #expect(sender.pipeline.statistics.packetsSent == 150)
        #expect(sender.pipeline.statistics.framesCaptured == 150)
        #expect(sender.packets.map(\.header.timestamp) == (0..<150).map { 1_000 + UInt32($0) * 960 })
        #expect(sender.packets.map(\.header.sequenceNumber) == (0..<150).map { 42 + UInt16($0) })
        #expect(sender.packets.allSatisfy { $0.header.ssrc == 0x1234_5678 && $0.header.payloadType == 111 })
        // The level the packet carries is the frame's, measured once: the meter shows the same.
        #expect(sender.packets.allSatisfy { $0.level == RTPAudioLevel(level: 15, voice: true) })
        #expect(sender.pipeline.lastLevel == 15)
        // Past the first 200 ms (the codec's start-up), the tone is there at its level.
        let steady = Array(try sender.decoded()[9_600...])
        #expect(ToneAnalysis.dominantFrequency(of: steady, in: 100...2_000).frequency == 440)
        let power = ToneAnalysis.power(of: steady, frequency: 440)
        #expect(power > Self.tonePower * 0.8 && power < Self.tonePower * 1.25)
    }

    @Test func aMutedMicrophoneSendsNothing() throws {
        let sender = try Sender(input: Self.tone(), muted: true)
        #expect(try sender.run(frames: 50) == 0)
        #expect(sender.pipeline.statistics.packetsSent == 0)
        #expect(sender.pipeline.statistics.closedFrames == 50)
        // The level is still measured, for the preview a muted speaker sees.
        #expect(sender.pipeline.lastLevel <= 16)
    }

    @Test func aMutedFrameIsMeasuredAndItsTimeStillPasses() throws {
        let talk = TalkSwitch(muted: true)
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false),
            talk: talk, stream: SendPipeline.Stream(ssrc: 1, initialTimestamp: 0))
        let frame = [Int16](repeating: 8_000, count: AudioFormat.samplesPerFrame)
        #expect(try Self.sendOne(frame, sender) == nil)
        #expect(sender.lastLevel == AudioLevel.dBov(frame))
        talk.setMuted(false)
        let packet = try #require(try Self.sendOne(frame, sender))
        // The muted frame's 20 ms still passed: the first packet sent is the second frame's.
        #expect(packet.header.timestamp == 960)
        #expect(packet.level?.level == AudioLevel.dBov(frame))
        #expect(sender.nextTimestamp == 1_920)
        #expect(sender.statistics.framesCaptured == 2)
        #expect(sender.statistics.closedFrames == 1)
        #expect(sender.statistics.packetsSent == 1)
    }

    @Test func silenceIsDiscontinuousTransmission() throws {
        let sender = try Sender(input: SilenceInput(pacing: .unpaced), encoder: OpusEncoder.Configuration())
        try sender.run(frames: 100)
        // Opus needs a few frames before it settles into DTX, then sends nothing.
        #expect(sender.pipeline.statistics.dtxFrames >= 80)
        #expect(sender.pipeline.statistics.packetsSent <= 20)
    }

    @Test func timestampsAdvanceAcrossGaps() throws {
        let talk = TalkSwitch(muted: true)
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false),
            talk: talk, stream: SendPipeline.Stream(ssrc: 1, initialTimestamp: UInt32.max - 959, initialSequence: 9))
        let frame = [Int16](repeating: 1_000, count: 960)
        var sent: [SentPacket] = []
        for index in 0..<6 {
            if index == 3 { talk.setMuted(false) }
            if let packet = try Self.sendOne(frame, sender) { sent.append(packet) }
        }
        // The wrap at 2^32 and the closed frames both advance the timestamp by 960 per frame; sequence numbers
        // count the packets sent, so receivers see no loss across the gap.
        #expect(sent.map(\.header.timestamp) == [1_920, 2_880, 3_840])
        #expect(sent.map(\.header.sequenceNumber) == [10, 11, 12])
    }

    /// Without voice processing, the voice flag says whether the frame is loud enough to be speech; a quiet one
    /// is still sent (the microphone is open) but flagged as no voice, so receivers do not take it for a talker.
    @Test func theVoiceFlagFollowsTheLevelWithoutVoiceProcessing() throws {
        let loud = try Sender(input: Self.tone())
        try loud.run(frames: 10)
        #expect(loud.packets.allSatisfy { $0.level?.voice == true })
        // 60 of 32767 is about -55 dBov: below the 50 dBov a frame needs to count as voice.
        let quiet = try Sender(input: Self.tone(amplitude: 60))
        try quiet.run(frames: 10)
        #expect(quiet.packets.count == 10)
        #expect(quiet.packets.allSatisfy { $0.level?.voice == false && ($0.level?.level ?? 0) > 50 })
        #expect(!quiet.pipeline.lastVoice)
    }

    /// With voice processing the flag is its voice activity decision: a voiced sound is flagged, and silence
    /// sent while the microphone is open is not.
    @Test func theVoiceFlagIsTheVoiceProcessingsDecision() throws {
        let speech = Signals.speechLike(count: 48_000 * 2)
        let voiced = try Sender(input: WAVFileInput(samples: speech, loops: false), voiceProcessing: true)
        try voiced.run(frames: 100)
        // Past its first half second, the speech-like sound is voice nearly throughout (its loudness wanders,
        // and the quietest moments of each "syllable" may fall below the decision).
        let flagged = voiced.packets.suffix(75).filter { $0.level?.voice == true }.count
        #expect(flagged >= 60, "\(flagged) of 75 packets flagged as voice")
        let silent = try Sender(input: SilenceInput(pacing: .unpaced), voiceProcessing: true)
        try silent.run(frames: 100)
        #expect(silent.packets.count == 100)
        #expect(silent.packets.allSatisfy { $0.level?.voice == false })
    }

    /// The settings chosen for a tone microphone (no DTX) reach the encoder that sends: a steady tone keeps
    /// being sent, where the room's default settings take it for background noise and stop.
    @Test func aToneMicrophoneIsSentWithoutDTX() throws {
        let tone = SendPipeline.Configuration.suggested(for: .tone(hertz: 440))
        #expect(tone == SendPipeline.Configuration(voiceProcessing: false, encoder: Self.toneEncoder))
        let settings = RoomAudioSettings(
            input: .tone(hertz: 440), output: .null, echoCancellation: false, volumesPath: nil)
        #expect(settings.sending == tone)
        let withTone = try Sender(input: Self.tone(), encoder: settings.sending.encoder)
        try withTone.run(frames: 500)
        #expect(withTone.pipeline.statistics.packetsSent == 500)
        #expect(withTone.pipeline.statistics.dtxFrames == 0)
        let person = SendPipeline.Configuration.suggested(for: .alsa("default"))
        #expect(person.voiceProcessing && person.encoder.discontinuousTransmission)
        let withDefaults = try Sender(input: Self.tone(), encoder: person.encoder)
        try withDefaults.run(frames: 500)
        #expect(withDefaults.pipeline.statistics.dtxFrames > 0)
    }

    @Test func theSettingsChooseVoiceProcessingForTheMicrophone() {
        let person = RoomAudioSettings(input: .alsa("default"), output: .null, echoCancellation: true, volumesPath: nil)
        #expect(person.sending.voiceProcessing && person.sending.echoCancellation)
        let file = RoomAudioSettings(
            input: .wav(path: "a.wav"), output: .null, echoCancellation: false, volumesPath: nil)
        #expect(!file.sending.voiceProcessing)
        var asked = file
        asked.voiceProcessing = true
        #expect(asked.sending.voiceProcessing)
        asked = person
        asked.voiceProcessing = false
        #expect(!asked.sending.voiceProcessing)
    }

    @Test func voiceProcessingKeepsSpeechLikeSignalAudible() throws {
        let sender = try Sender(input: Self.tone(), voiceProcessing: true)
        try sender.run(frames: 100)
        #expect(sender.pipeline.statistics.packetsSent > 0)
        let decoded = try sender.decoded()
        #expect(ToneAnalysis.dominantFrequency(of: Array(decoded[9_600...]), in: 100...2_000).frequency == 440)
    }
}
