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
    /// Two frames repeated, and a talk spurt after a pause: its first packet repeats no frame (nothing was sent just
    /// before it) and its second one frame, so they must not lower the buffer's wait under loss, to which the
    /// spurt is anchored. Then two packets lost in the spurt are both rebuilt from the packet after them, in their
    /// own ticks: the spurt plays whole, exactly as its packets decode, with nothing concealed. (Anchored on one
    /// frame's wait, the first lost frame was due before the packet that repeats it came, and was concealed.)
    @Test func aSpurtAfterAPauseWaitsForTwoRepeatedFrames() throws {
        let talk = TalkSwitch()
        let pipeline = try SendPipeline(
            configuration: SendPipeline.Configuration(
                voiceProcessing: false, encoder: OpusEncoder.Configuration(discontinuousTransmission: false)),
            talk: talk, stream: Self.stream)
        pipeline.reportLoss(percent: 10, runs: RTCPLossRuns(ssrc: Self.stream.ssrc, runs: 1, lost: 4))
        #expect(pipeline.redundancy == 2)
        // Frames 0–9 are said, 10–19 are a pause (muted: nothing sent), 20–39 the next spurt.
        var sent: [Int: [UInt8]] = [:]
        var packet = [UInt8](repeating: 0, count: SendPipeline.maxPacketBytes)
        for index in 0..<40 {
            talk.setMuted((10..<20).contains(index))
            var samples = Self.frame(index)
            let length = samples.withUnsafeMutableBufferPointer { frame in
                packet.withUnsafeMutableBytes { pipeline.send(frame, played: nil, into: $0) }
            }
            if let length { sent[index] = Array(packet[..<length]) }
        }
        #expect(sent.keys.sorted() == Array(0..<10) + Array(20..<40))
        #expect(try RTPHeader.parse(sent[20]!).payloadType == 111)
        let second = try RTPHeader.parse(sent[21]!)
        #expect(try REDPayload.parse(Array(sent[21]![second.payloadRange]), redPayloadType: 63).redundantCount == 1)
        let primaries: [Int: [UInt8]] = try sent.mapValues { packet in
            let header = try RTPHeader.parse(packet)
            let payload = Array(packet[header.payloadRange])
            guard header.payloadType == 63 else { return payload }
            return Array(payload[try REDPayload.parse(payload, redPayloadType: 63).primary.range])
        }

        // Packet 0 is lost (its frame comes in packet 1, and the loss sets the buffer's wait), then 27 and 28,
        // which packet 29 repeats. Each packet comes on a frame's boundary. The receiver is a listener's: the
        // media thread wakes every 40 ms, files what came, and plays two frames, the first as if 20 ms earlier.
        let lost: Set<Int> = [0, 27, 28]
        let receiver = Receiver(payloadType: 111, redPayloadType: 63, audioLevelID: 1, tracksTalkers: false)
        var heard: [[Int16]] = []
        var mixed = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var spurtStats: SpeakerStats?
        var next = 0
        for wake in 0..<25 {
            let time = Int64(wake) * 2 * AudioFormat.frameMicroseconds + 10_000
            while next < 40, Int64(next) * AudioFormat.frameMicroseconds <= time {
                if let packet = sent[next], !lost.contains(next) {
                    packet.withUnsafeBytes { receiver.insert($0, arrival: Int64(next) * AudioFormat.frameMicroseconds) }
                }
                next += 1
            }
            for frameTime in [time - AudioFormat.frameMicroseconds, time] {
                mixed.withUnsafeMutableBufferPointer {
                    _ = receiver.playOut(at: frameTime, volumes: SpeakerVolumes(), into: $0)
                }
                heard.append(mixed)
            }
            // Frame 37 has just played.
            if wake == 20 { spurtStats = receiver.statistics(at: time, names: SpeakerVolumes()).first }
        }

        // What one decoder makes of it: the first spurt, three frames concealed while its end is waited for,
        // then the second spurt.
        let reference = try OpusDecoder()
        let first = try (0..<10).map { try reference.decode(primaries[$0]!).samples }
        let waited = try (0..<3).map { _ in try reference.decode(nil).samples }
        let resumedSpurt = try (20..<40).map { try reference.decode(primaries[$0]!).samples }
        let start = try #require(heard.firstIndex { $0.contains { $0 != 0 } })
        #expect(Array(heard[start..<(start + 13)]) == first + waited)
        let resumed = try #require(heard[(start + 13)...].firstIndex { $0.contains { $0 != 0 } })
        // The second spurt starts 45 ms after its first packet came (at 400 ms): in the frame played at 450 ms.
        #expect(resumed == 23)
        #expect(Array(heard[resumed..<(resumed + 20)]) == resumedSpurt)
        let stats = try #require(spurtStats)
        #expect(stats.recoveredByRED == 3)
        #expect(stats.lost == 0)
        #expect(stats.concealed == 3)
        #expect(stats.recoveredByFEC == 0)
    }
    /// The depth a speaker repeats goes up with any packet that repeats more, and down only with a packet that
    /// repeats fewer frames after as many packets in a row a frame apart: the first packets of a spurt, or those
    /// after a loss or out of order, cannot repeat what they did not follow.
    @Test func theDepthFallsOnlyWithAPacketThatCouldHaveRepeatedMore() {
        var depth = RepeatDepth()
        let step = AudioFormat.rtpTimestampStep
        depth.observe(sequence: 10, timestamp: 100 * step, repeats: 0)
        depth.observe(sequence: 11, timestamp: 101 * step, repeats: 1)
        depth.observe(sequence: 12, timestamp: 102 * step, repeats: 2)
        #expect(depth.frames == 2)
        // A pause (the timestamp jumps), a new spurt: none, then one frame, then two.
        depth.observe(sequence: 13, timestamp: 150 * step, repeats: 0)
        depth.observe(sequence: 14, timestamp: 151 * step, repeats: 1)
        #expect(depth.frames == 2)
        // 16 lost: 17 follows only one packet in a row. A late 16 says nothing either.
        depth.observe(sequence: 15, timestamp: 152 * step, repeats: 2)
        depth.observe(sequence: 17, timestamp: 154 * step, repeats: 1)
        depth.observe(sequence: 16, timestamp: 153 * step, repeats: 0)
        #expect(depth.frames == 2)
        // 18 follows 17 alone: it could have repeated one frame, not two. 19 follows two in a row and repeats
        // one: the sender has stepped down.
        depth.observe(sequence: 18, timestamp: 155 * step, repeats: 1)
        #expect(depth.frames == 2)
        depth.observe(sequence: 19, timestamp: 156 * step, repeats: 1)
        #expect(depth.frames == 1)
        depth.observe(sequence: 20, timestamp: 157 * step, repeats: 0)
        #expect(depth.frames == 0)
        depth.observe(sequence: 21, timestamp: 158 * step, repeats: 2)
        #expect(depth.frames == 2)
    }
}
