import AudioCodec
import AudioCore
import Foundation
import MediaWire
import Testing

@testable import ClientAudio

/// RFC 2198 redundancy end to end in the client: the send path repeats earlier frames once its listeners report
/// loss (and stops after), and a receiver rebuilds a lost frame exactly from the next packet.
@Suite struct RedundancyTests {
    static let stream = SendPipeline.Stream(
        ssrc: 0x0A0B_0C0E, initialTimestamp: 5_000, initialSequence: 100, redPayloadType: RTPAudioProfile.redPayloadType
    )

    /// A voice-like signal: two tones that glide, loud enough that Opus never goes into DTX.
    static func frame(_ index: Int) -> [Int16] {
        (0..<AudioFormat.samplesPerFrame).map { sample in
            let t = Double(index * AudioFormat.samplesPerFrame + sample) / 48_000
            return Int16(6_000 * sin(2 * .pi * (220 + 40 * t) * t) + 3_000 * sin(2 * .pi * 1_330 * t))
        }
    }

    /// The packets a send path writes for `count` frames after the server reported `loss` percent.
    static func packets(count: Int, loss: Int?, from pipeline: SendPipeline) -> [[UInt8]] {
        if let loss { pipeline.reportLoss(percent: loss) }
        var packet = [UInt8](repeating: 0, count: SendPipeline.maxPacketBytes)
        return (0..<count).compactMap { index -> [UInt8]? in
            var samples = frame(index)
            let length = samples.withUnsafeMutableBufferPointer { frame in
                packet.withUnsafeMutableBytes { pipeline.send(frame, played: nil, into: $0) }
            }
            return length.map { Array(packet[..<$0]) }
        }
    }

    static func pipeline() throws -> SendPipeline {
        try SendPipeline(
            configuration: SendPipeline.Configuration(
                voiceProcessing: false, encoder: OpusEncoder.Configuration(discontinuousTransmission: false)),
            talk: TalkSwitch(), stream: stream)
    }

    @Test func theSenderRepeatsTheFrameBeforeUnderLossAndStopsWhenItGoes() throws {
        let pipeline = try Self.pipeline()
        let clean = Self.packets(count: 3, loss: 0, from: pipeline)
        #expect(try clean.map { try RTPHeader.parse($0).payloadType } == [111, 111, 111])
        #expect(pipeline.redundancy == 0)

        let lossy = Self.packets(count: 2, loss: 5, from: pipeline)
        #expect(pipeline.redundancy == 1)
        for (index, packet) in lossy.enumerated() {
            let header = try RTPHeader.parse(packet)
            #expect(header.payloadType == 63)
            let red = try REDPayload.parse(Array(packet[header.payloadRange]), redPayloadType: 63)
            #expect(red.redundantBlocks.map(\.timestampOffset) == [960])
            // The repeated frame is the previous packet's own.
            let previous = index == 0 ? clean[2] : lossy[index - 1]
            let previousHeader = try RTPHeader.parse(previous)
            let payload = Array(packet[header.payloadRange])
            #expect(
                Array(payload[red.redundant(0).range])
                    == Array(previous[previousHeader.payloadRange].suffix(red.redundant(0).range.count)))
        }

        // One report of 20 % after 0 and 5 is a mean of 8 %: still one frame. Three in a row: two.
        _ = Self.packets(count: 1, loss: 20, from: pipeline)
        #expect(pipeline.redundancy == 1)
        for _ in 0..<2 { pipeline.reportLoss(percent: 20) }
        #expect(pipeline.redundancy == 2)
        // Four clean reports keep it; the fifth steps down one frame, five more turn it off.
        for _ in 0..<4 { pipeline.reportLoss(percent: 0) }
        #expect(pipeline.redundancy == 2)
        pipeline.reportLoss(percent: 0)
        #expect(pipeline.redundancy == 1)
        for _ in 0..<5 { pipeline.reportLoss(percent: 0) }
        #expect(pipeline.redundancy == 0)
        let after = Self.packets(count: 2, loss: nil, from: pipeline)
        #expect(try after.map { try RTPHeader.parse($0).payloadType } == [111, 111])
    }

    /// Loss in bursts turns two frames on at a loss one frame would do with at random: the runs decide, not the
    /// share; and it needs a few packets lost before runs count.
    @Test func lossInBurstsRepeatsTwoFramesAndRandomLossOne() {
        var random = RedundancyPolicy()
        for _ in 0..<6 { random.report(lossPercent: 10, runs: RTCPLossRuns(ssrc: 2, runs: 9, lost: 10)) }
        #expect(random.level == 1)
        #expect(!random.lossComesInBursts)

        var bursty = RedundancyPolicy()
        bursty.report(lossPercent: 6, runs: RTCPLossRuns(ssrc: 2, runs: 1, lost: 3))
        #expect(bursty.level == 1)
        bursty.report(lossPercent: 4, runs: RTCPLossRuns(ssrc: 2, runs: 1, lost: 2))
        #expect(bursty.lossComesInBursts)
        #expect(bursty.level == 2)
        // Clean seconds: the bursts stay in view for three reports, the level for five more.
        for _ in 0..<4 { bursty.report(lossPercent: 0) }
        #expect(bursty.level == 2)
        bursty.report(lossPercent: 0)
        #expect(bursty.level == 1)
        #expect(!bursty.lossComesInBursts)

        // A server that says no runs (an older one) leaves the share to decide, as before.
        var unsaid = RedundancyPolicy()
        for _ in 0..<3 { unsaid.report(lossPercent: 10) }
        #expect(unsaid.level == 1)
        for _ in 0..<3 { unsaid.report(lossPercent: 20) }
        #expect(unsaid.level == 2)
    }

    @Test func aSenderWithoutREDFromTheServerNeverSendsIt() throws {
        var stream = Self.stream
        stream.redPayloadType = nil
        let pipeline = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false), talk: TalkSwitch(), stream: stream)
        let packets = Self.packets(count: 3, loss: 30, from: pipeline)
        #expect(pipeline.redundancy == 0)
        #expect(try packets.map { try RTPHeader.parse($0).payloadType } == [111, 111, 111])
    }

    @Test func aLostPacketsFrameIsRebuiltFromTheNextPacketExactly() throws {
        let pipeline = try Self.pipeline()
        let packets = Self.packets(count: 12, loss: 5, from: pipeline)
        #expect(packets.count == 12)
        let lost = 6

        // What a decoder makes of every primary frame, none lost.
        let reference = try OpusDecoder()
        let expected: [[Int16]] = try packets.map { packet in
            let header = try RTPHeader.parse(packet)
            var payload = Array(packet[header.payloadRange])
            if header.payloadType == 63 {
                let red = try REDPayload.parse(payload, redPayloadType: 63)
                payload = Array(payload[red.primary.range])
            }
            return try reference.decode(payload).samples
        }

        // The receiver gets every packet but one, a frame apart, and plays a frame 1 ms after each arrives.
        let receiver = Receiver(payloadType: 111, redPayloadType: 63, audioLevelID: 1, tracksTalkers: false)
        var heard: [[Int16]] = []
        var midway: SpeakerStats?
        var mixed = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        for index in 0..<(packets.count + 3) {
            let arrival = Int64(index) * AudioFormat.frameMicroseconds
            if index < packets.count, index != lost {
                packets[index].withUnsafeBytes { receiver.insert($0, arrival: arrival) }
            }
            mixed.withUnsafeMutableBufferPointer {
                _ = receiver.playOut(at: arrival + 1_000, volumes: SpeakerVolumes(), into: $0)
            }
            heard.append(mixed)
            // Once the lost frame has played (a frame after its packet was due): what the buffer did so far. The
            // ticks after the last packet conceal while they wait for more, as at the end of any talk spurt.
            if index == lost + 2 { midway = receiver.statistics(at: arrival, names: SpeakerVolumes()).first }
        }
        let start = try #require(heard.firstIndex { $0.contains { $0 != 0 } })
        let played = Array(heard[start..<(start + packets.count)])
        #expect(played[lost] == expected[lost])
        #expect(played == expected)
        let stats = try #require(midway)
        #expect(stats.recoveredByRED == 1)
        #expect(stats.recoveredByFEC == 0)
        #expect(stats.concealed == 0)
        // The server sends it under the odd SSRC beside the speaker's: the receiver files it as the speaker's.
        #expect(stats.ssrc == 0x0A0B_0C0E)
    }
}
