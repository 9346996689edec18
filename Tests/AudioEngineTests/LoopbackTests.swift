import AudioCodec
import AudioCore
import AudioDevices
import AudioEngine
import Testing

/// One speaker's send path to one listener's receive path on a simulated clock (`SteppedLoopback`): what the
/// listener plays, and what the statistics say, for a clean link, loss, jitter and the talking controls.
@Suite struct LoopbackTests {
    /// The tone's amplitude, about -12 dBFS; its Goertzel power relative to a full-scale sine.
    static let amplitude = 8_000.0
    static let tonePower = (amplitude / 32_767) * (amplitude / 32_767)

    /// Opus's own voice activity detection takes a steady tone for silence after a while and goes into DTX, so
    /// tone tests (like bots that send a tone) turn DTX off.
    static func toneEncoder(expectedLoss: Int = 0) -> OpusEncoder.Configuration {
        OpusEncoder.Configuration(expectedLossPercent: expectedLoss, discontinuousTransmission: false)
    }

    /// The mean Goertzel power at `frequency` over 100 ms windows.
    static func windowedPower(_ samples: [Int16], frequency: Double) -> Double {
        let window = 4_800
        let count = samples.count / window
        guard count > 0 else { return 0 }
        return (0..<count).map { index in
            ToneAnalysis.power(of: Array(samples[(index * window)..<((index + 1) * window)]), frequency: frequency)
        }.reduce(0, +) / Double(count)
    }

    func loopback(
        link: LinkImpairment = LinkImpairment(), talk: TalkControl = TalkControl(), expectedLoss: Int = 0,
        voiceProcessing: Bool = false
    ) throws -> (SteppedLoopback, TalkSwitch) {
        let talkSwitch = TalkSwitch(talk)
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(
                voiceProcessing: voiceProcessing,
                encoder: Self.toneEncoder(expectedLoss: expectedLoss), initialTimestamp: 1_000),
            talk: talkSwitch)
        let input = ToneInput(frequency: 440, amplitude: Self.amplitude, pacing: .unpaced)
        return (SteppedLoopback(input: input, sender: sender, link: link), talkSwitch)
    }

    @Test func aToneArrivesWithItsFrequencyAndLevel() throws {
        let (loopback, _) = try loopback()
        let output = try loopback.run(frames: 150)
        // Past the first 200 ms (jitter buffer and codec start-up), the tone is there at its level.
        let steady = Array(output[9_600...])
        #expect(ToneAnalysis.dominantFrequency(of: steady, in: 100...2_000).frequency == 440)
        let power = ToneAnalysis.power(of: steady, frequency: 440)
        #expect(power > Self.tonePower * 0.8 && power < Self.tonePower * 1.25)
        let statistics = try #require(loopback.receiver.statistics.first)
        #expect(statistics.packetsReceived == 150)
        #expect(statistics.lost == 0)
        #expect(statistics.concealed == 0)
        // Packets arrive 1 ms after their frame is captured and the listener ticks 7 ms after: with the engine's
        // 5 ms floor on a clean link, each frame plays 6 ms after it could first have.
        #expect(statistics.playoutDelayMilliseconds == 6)
        #expect(loopback.sender.statistics.packetsSent == 150)
    }

    @Test func fecRecoversLostPacketsAndTheToneSurvives() throws {
        let link = LinkImpairment(lossPercent: 8, seed: 42)
        let lostFrames = (0..<500).filter { link.isLost(frame: $0) }.count
        let (loopback, _) = try loopback(link: link, expectedLoss: 10)
        let output = try loopback.run(frames: 500)
        let statistics = try #require(loopback.receiver.statistics.first)
        #expect(statistics.packetsReceived == 500 - lostFrames)
        #expect(statistics.recoveredByFEC > 0)
        #expect(statistics.lost >= statistics.recoveredByFEC)
        #expect(statistics.recoveredByFEC + statistics.concealed >= statistics.lost)
        // Recovered and concealed frames do not keep the tone's phase, so its power is measured per 100 ms.
        let power = Self.windowedPower(Array(output[9_600...]), frequency: 440)
        #expect(power > Self.tonePower * 0.7)
    }

    @Test func jitterRaisesThePlayoutDelayWithoutLosingPackets() throws {
        let link = LinkImpairment(jitterMilliseconds: 40, seed: 7)
        let (loopback, _) = try loopback(link: link)
        _ = try loopback.run(frames: 300)
        let statistics = try #require(loopback.receiver.statistics.first)
        // The last packet or two may still be in flight when the run ends.
        #expect(statistics.packetsReceived >= 298)
        #expect(statistics.targetDelayMilliseconds > 20)
        #expect(statistics.jitterMilliseconds > 1)
        #expect(statistics.late <= 10)
    }

    @Test func aMutedMicrophoneSendsNothing() throws {
        let (loopback, _) = try loopback(talk: TalkControl(muted: true))
        let output = try loopback.run(frames: 50)
        #expect(loopback.sender.statistics.packetsSent == 0)
        #expect(loopback.sender.statistics.closedFrames == 50)
        #expect(output.allSatisfy { $0 == 0 })
        #expect(loopback.receiver.statistics.isEmpty)
        // The level is still measured, for the preview a muted speaker sees.
        #expect(loopback.sender.lastLevel <= 16)
    }

    @Test func pushToTalkSendsOnlyWhileLatched() throws {
        let (loopback, talk) = try loopback(talk: TalkControl(mode: .pushToTalk))
        _ = try loopback.run(frames: 25)
        #expect(loopback.sender.statistics.packetsSent == 0)
        // A press at the simulated time of the next frame opens the microphone for 600 ms: 30 frames.
        talk.talkKeyPressed(at: loopback.now / 1000)
        _ = try loopback.run(frames: 50)
        #expect(loopback.sender.statistics.packetsSent == 30)
        #expect(loopback.sender.statistics.closedFrames == 45)
    }

    @Test func silenceIsDiscontinuousTransmission() throws {
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false), talk: TalkSwitch())
        let loopback = SteppedLoopback(input: SilenceInput(pacing: .unpaced), sender: sender)
        _ = try loopback.run(frames: 100)
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
        let (loopback, _) = try loopback(voiceProcessing: true)
        let output = try loopback.run(frames: 100)
        #expect(ToneAnalysis.dominantFrequency(of: Array(output[9_600...]), in: 100...2_000).frequency == 440)
        #expect(loopback.sender.statistics.packetsSent > 0)
    }

    @Test func volumeScalesASpeaker() throws {
        let volumes = try VolumeStore(path: nil)
        try volumes.setVolume(50, for: "speaker")
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false, encoder: Self.toneEncoder()),
            talk: TalkSwitch())
        let loopback = SteppedLoopback(
            input: ToneInput(frequency: 440, amplitude: Self.amplitude, pacing: .unpaced), sender: sender,
            volumes: volumes)
        let output = try loopback.run(frames: 100)
        let power = ToneAnalysis.power(of: Array(output[9_600...]), frequency: 440)
        #expect(power > Self.tonePower * 0.25 * 0.8 && power < Self.tonePower * 0.25 * 1.25)
        #expect(loopback.receiver.statistics.first?.volume == 50)
    }
}
