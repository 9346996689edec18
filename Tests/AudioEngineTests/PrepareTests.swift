import AudioCore
import AudioEngine
import Testing

/// `SendPipeline.prepare`: the send path without the encode, as the room screen's sound uses it.
@Suite struct PrepareTests {
    @Test func aMutedFrameIsMeasuredButNotLetThrough() throws {
        let talk = TalkSwitch(TalkControl(muted: true))
        let sender = try SendPipeline(configuration: SendPipeline.Configuration(voiceProcessing: false), talk: talk)
        var frame = [Int16](repeating: 8_000, count: AudioFormat.samplesPerFrame)
        let muted = frame.withUnsafeMutableBufferPointer { sender.prepare($0, played: nil, at: 0) }
        #expect(!muted)
        #expect(sender.lastLevel == AudioLevel.dBov(frame))
        talk.setMuted(false)
        let open = frame.withUnsafeMutableBufferPointer { sender.prepare($0, played: nil, at: 20) }
        #expect(open)
        #expect(sender.statistics.framesCaptured == 2)
        #expect(sender.statistics.closedFrames == 1)
        #expect(sender.statistics.packetsSent == 0)
    }

    @Test func preparedFramesAdvanceTheTimestampLikeProcessedOnes() throws {
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false, initialTimestamp: 0), talk: TalkSwitch())
        var frame = [Int16](repeating: 1_000, count: AudioFormat.samplesPerFrame)
        _ = frame.withUnsafeMutableBufferPointer { sender.prepare($0, played: nil, at: 0) }
        let packet = frame.withUnsafeMutableBufferPointer { sender.process($0, played: nil, at: 20) }
        #expect(packet?.timestamp == 960)
        #expect(sender.nextTimestamp == 1_920)
    }
}
