import RoomTesting
import Testing

@testable import AudioCore

/// One packet of a scripted stream: `frame` is its index in the sender's timeline and doubles as its payload.
struct ScriptedPacket {
    var frame: Int
    var sequence: UInt16
    var timestamp: UInt32
    var ssrc: UInt32 = 7
    var arrival: Int64
}

/// What one tick produced.
struct TickRecord {
    var time: Int64
    var decision: PlayoutDecision<Int>
    var statistics: JitterBufferStatistics
}

/// A sender that emits one packet per 20 ms frame; `delay` gives each frame's network delay in µs, or nil to lose it.
func scriptedStream(
    frames: Range<Int>, firstSequence: UInt16 = 1000, firstTimestamp: UInt32 = 48_000,
    timestampOffset: (Int) -> UInt32 = { _ in 0 }, delay: (Int) -> Int64?
) -> [ScriptedPacket] {
    var packets: [ScriptedPacket] = []
    for frame in frames {
        guard let networkDelay = delay(frame) else { continue }
        let sequence = firstSequence &+ UInt16(truncatingIfNeeded: frame)
        let timestamp = firstTimestamp &+ UInt32(truncatingIfNeeded: frame) &* 960 &+ timestampOffset(frame)
        let sent = Int64(frame) * 20_000 + Int64(timestampOffset(frame)) * 125 / 6
        packets.append(
            ScriptedPacket(frame: frame, sequence: sequence, timestamp: timestamp, arrival: sent + networkDelay))
    }
    return packets
}

/// Feeds packets in arrival order and ticks every 20 ms from `firstTick`, returning every tick's outcome.
func run(
    _ packets: [ScriptedPacket], ticks: Int, firstTick: Int64 = 7_000,
    buffer: inout JitterBuffer<Int>
) -> [TickRecord] {
    let ordered = packets.enumerated().sorted { ($0.element.arrival, $0.offset) < ($1.element.arrival, $1.offset) }
        .map(\.element)
    var next = 0
    var records: [TickRecord] = []
    for tick in 0..<ticks {
        let now = firstTick + Int64(tick) * 20_000
        while next < ordered.count && ordered[next].arrival <= now {
            let packet = ordered[next]
            buffer.insert(
                sequence: packet.sequence, timestamp: packet.timestamp, ssrc: packet.ssrc, arrival: packet.arrival,
                payload: packet.frame)
            next += 1
        }
        let decision = buffer.nextFrame(at: now)
        records.append(TickRecord(time: now, decision: decision, statistics: buffer.statistics))
    }
    return records
}

/// The payloads played as packets, in order.
func playedFrames(_ records: [TickRecord]) -> [Int] {
    records.compactMap {
        if case .packet(let frame) = $0.decision { return frame }
        return nil
    }
}

@Suite struct JitterBufferTests {
    @Test func cleanNetworkSettlesBetweenTwentyAndFortyMilliseconds() {
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(frames: 0..<500) { _ in 30_000 }
        let records = run(packets, ticks: 520, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<500))
        let first = records.firstIndex { $0.decision == .packet(0) }!
        #expect(records[..<first].allSatisfy { $0.decision == .silence })
        // Frame 0 arrives at 30 ms and is due at 50 ms; the first tick after that is at 67 ms.
        #expect(records[first..<(first + 500)].allSatisfy { $0.statistics.playoutDelay == 37_000 })
        #expect(records[first + 499].statistics.targetDelay == 20_000)
        let statistics = buffer.statistics
        #expect(statistics.lost == 0 && statistics.late == 0)
        // After the last packet the buffer waits three frames for a late one, then declares the stream paused.
        #expect(statistics.concealed == 3)
        #expect(records[(first + 500)...].map(\.decision).prefix(4) == [.conceal, .conceal, .conceal, .silence])
        #expect(statistics.received == 500)
        #expect(statistics.jitter == 0)
    }

    @Test func fortyMillisecondJitterGrowsTheTargetWithFewLatePackets() {
        var random = SplitMix64(seed: 42)
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(frames: 0..<3000) { _ in 10_000 + Int64.random(in: 0..<40_000, using: &random) }
        let records = run(packets, ticks: 3020, buffer: &buffer)
        let statistics = buffer.statistics
        #expect(statistics.targetDelay >= 36_000 && statistics.targetDelay <= 44_000)
        #expect(statistics.late <= 30)
        #expect(statistics.lost <= 30)
        #expect(playedFrames(records).count + statistics.recoveredByFEC >= 2970)
        #expect(statistics.playoutDelay >= 36_000 && statistics.playoutDelay <= 100_000)
        // RFC 3550 jitter of uniform 0-40 ms delays is about a third of the spread.
        #expect(statistics.jitter > 8_000 && statistics.jitter < 18_000)
    }

    @Test func delayShrinksBackWhenTheNetworkCalms() {
        var random = SplitMix64(seed: 7)
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(frames: 0..<3000) { frame in
            frame < 1000 ? 10_000 + Int64.random(in: 0..<40_000, using: &random) : 10_000
        }
        let records = run(packets, ticks: 3020, buffer: &buffer)
        #expect(records[990].statistics.targetDelay >= 36_000)
        #expect(records[2990].statistics.targetDelay == 20_000)
        #expect(records[990].statistics.playoutDelay > 50_000)
        // Continuous speech: a skipped frame brings the delay back under target plus one frame.
        #expect(records[2990].statistics.playoutDelay < 40_000)
        #expect(buffer.statistics.skipped == 1)
    }

    @Test func delayReturnsToCleanRangeAcrossSpeechPauses() {
        var random = SplitMix64(seed: 9)
        var buffer = JitterBuffer<Int>()
        // Talk spurts of 50 frames separated by 10 frames of DTX, with jitter only in the first 20 seconds.
        let packets = scriptedStream(
            frames: 0..<2400,
            timestampOffset: { frame in UInt32(frame / 50) * 9_600 },
            delay: { frame in frame < 1000 ? 10_000 + Int64.random(in: 0..<40_000, using: &random) : 10_000 })
        var offsetPackets = packets
        for index in offsetPackets.indices {
            offsetPackets[index].sequence = 1000 &+ UInt16(offsetPackets[index].frame)
        }
        let records = run(offsetPackets, ticks: 2900, buffer: &buffer)
        #expect(playedFrames(records).suffix(1000) == Array(1400..<2400))
        let lateDelays = records.suffix(400).filter {
            if case .packet = $0.decision { return true }
            return false
        }.map(\.statistics.playoutDelay)
        #expect(lateDelays.allSatisfy { $0 >= 20_000 && $0 < 40_000 })
    }

    @Test func lostPacketsAreRecoveredFromTheNextPacketsFEC() {
        var buffer = JitterBuffer<Int>()
        let lostFrames: Set = [7, 27, 47, 67, 87, 107, 127, 147, 167, 187, 300, 301]
        let packets = scriptedStream(frames: 0..<400) { lostFrames.contains($0) ? nil : 25_000 }
        let records = run(packets, ticks: 420, buffer: &buffer)
        let decisions = records.map(\.decision)
        for frame in lostFrames.subtracting([300, 301]) {
            let index = decisions.firstIndex(of: .packet(frame + 1))!
            #expect(decisions[index - 1] == .fecFrom(frame + 1))
        }
        // Two lost in a row: at 300's tick nothing is buffered, so the buffer conceals while it waits. When 302
        // arrives instead, that concealed frame stands for 300 and 301 is recovered from 302's FEC in the same
        // tick: the burst adds no delay, so no frame has to be skipped later to give it back.
        let index302 = decisions.firstIndex(of: .packet(302))!
        #expect(Array(decisions[(index302 - 3)..<index302]) == [.packet(299), .conceal, .fecFrom(302)])
        #expect(buffer.statistics.lost == 12)
        #expect(buffer.statistics.recoveredByFEC == 11)
        #expect(buffer.statistics.concealed == 4)
        #expect(buffer.statistics.skipped == 0)
        #expect(playedFrames(records) == (0..<400).filter { !lostFrames.contains($0) })
    }

    @Test func fivePercentRandomLossIsCountedExactly() {
        var random = SplitMix64(seed: 5)
        var lostFrames: Set<Int> = []
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(frames: 0..<2000) { frame in
            if frame > 0 && frame < 1999 && Int.random(in: 0..<100, using: &random) < 5 {
                lostFrames.insert(frame)
                return nil
            }
            return 25_000
        }
        let lost = lostFrames.count
        let isolated = lostFrames.filter { !lostFrames.contains($0 + 1) }.count
        let records = run(packets, ticks: 2020, buffer: &buffer)
        let statistics = buffer.statistics
        #expect(lost > 60)
        #expect(statistics.lost == lost)
        #expect(statistics.recoveredByFEC == isolated)
        #expect(records.filter { if case .fecFrom = $0.decision { true } else { false } }.count == isolated)
        // Each burst of losses empties the buffer and makes it wait a frame; that frame is given back later.
        let bursts = lostFrames.filter { lostFrames.contains($0 + 1) && !lostFrames.contains($0 - 1) }.count
        #expect(statistics.skipped <= bursts)
        #expect(playedFrames(records).count == 2000 - lost - statistics.skipped)
        #expect(statistics.late == 0)
    }

    @Test func reorderedPacketsPlayInSequence() {
        var buffer = JitterBuffer<Int>()
        // Every fifth packet is overtaken by the one after it.
        let packets = scriptedStream(frames: 0..<300) { frame in
            frame % 5 == 2 ? 47_000 : 25_000
        }
        let records = run(packets, ticks: 320, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<300))
        #expect(buffer.statistics.lost == 0)
        #expect(buffer.statistics.late == 0)
    }

    @Test func duplicatesAreCountedAndPlayedOnce() {
        var buffer = JitterBuffer<Int>()
        var packets = scriptedStream(frames: 0..<100) { _ in 25_000 }
        for frame in stride(from: 0, to: 100, by: 10) {
            var early = packets[frame]
            early.arrival += 1_000
            var afterPlay = packets[frame]
            afterPlay.arrival += 200_000
            packets.append(contentsOf: [early, afterPlay])
        }
        let records = run(packets, ticks: 130, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<100))
        #expect(buffer.statistics.duplicate == 20)
        #expect(buffer.statistics.received == 100)
        #expect(buffer.statistics.late == 0)
    }

    @Test func sequenceAndTimestampWrapAround() {
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(
            frames: 0..<200, firstSequence: 65_436, firstTimestamp: UInt32.max - 960 * 50 + 1
        ) { _ in 25_000 }
        let records = run(packets, ticks: 220, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<200))
        #expect(buffer.statistics.lost == 0)
        #expect(buffer.statistics.rejected == 0)
        #expect(buffer.statistics.streamResets == 0)
    }

    @Test func dtxGapPlaysSilenceAndResumesOnSchedule() {
        var buffer = JitterBuffer<Int>()
        // 50 frames, then one second without packets while the timestamp runs on, then 50 more frames.
        let packets = scriptedStream(
            frames: 0..<100, timestampOffset: { $0 >= 50 ? 48_000 : 0 }, delay: { _ in 25_000 })
        let records = run(packets, ticks: 170, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<100))
        let decisions = records.map(\.decision)
        let last = decisions.firstIndex(of: .packet(49))!
        let resume = decisions.firstIndex(of: .packet(50))!
        #expect(Array(decisions[(last + 1)...(last + 3)]) == [.conceal, .conceal, .conceal])
        #expect(decisions[(last + 4)..<resume].allSatisfy { $0 == .silence })
        #expect(resume - last == 51)
        #expect(records[resume].statistics.playoutDelay == 22_000)
        #expect(buffer.statistics.lost == 0)
    }

    @Test func lostFirstPacketAfterDTXIsRecoveredFromFEC() {
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(
            frames: 0..<100, timestampOffset: { $0 >= 50 ? 48_000 : 0 }, delay: { $0 == 50 ? nil : 25_000 })
        let records = run(packets, ticks: 170, buffer: &buffer)
        let decisions = records.map(\.decision)
        let resume = decisions.firstIndex(of: .fecFrom(51))!
        #expect(decisions[resume - 1] == .silence)
        #expect(decisions[resume + 1] == .packet(51))
        #expect(records[resume].statistics.playoutDelay == 22_000)
        #expect(playedFrames(records) == Array(0..<50) + Array(51..<100))
        #expect(buffer.statistics.lost == 1)
        #expect(buffer.statistics.recoveredByFEC == 1)
    }

    @Test func timestampJumpUnrelatedToElapsedTimeResyncs() {
        var buffer = JitterBuffer<Int>()
        // After frame 49 the sender's timestamp leaps ten minutes ahead, though only 200 ms pass.
        let packets = scriptedStream(
            frames: 0..<100, timestampOffset: { $0 >= 50 ? 48_000 * 600 : 0 },
            delay: { frame in frame >= 50 ? 25_000 + 200_000 - 600_000_000 : 25_000 })
        let records = run(packets, ticks: 130, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<100))
        #expect(buffer.statistics.timingResyncs == 1)
        #expect(buffer.statistics.lost == 0)
    }

    @Test func newSSRCRestartsTheStream() {
        var buffer = JitterBuffer<Int>()
        var packets = scriptedStream(frames: 0..<50) { _ in 25_000 }
        var restarted = scriptedStream(frames: 60..<110, firstSequence: 5, firstTimestamp: 1234) { _ in 25_000 }
        for index in restarted.indices { restarted[index].ssrc = 99 }
        packets += restarted
        let records = run(packets, ticks: 130, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<50) + Array(60..<110))
        #expect(buffer.statistics.streamResets == 1)
        #expect(buffer.statistics.lost == 0)
    }

    @Test func oneStraySequenceNumberIsRejected() {
        var buffer = JitterBuffer<Int>()
        var packets = scriptedStream(frames: 0..<60) { _ in 25_000 }
        packets[30].sequence &+= 20_000
        let records = run(packets, ticks: 80, buffer: &buffer)
        #expect(buffer.statistics.rejected == 1)
        #expect(buffer.statistics.streamResets == 0)
        #expect(playedFrames(records) == Array(0..<30) + Array(31..<60))
        #expect(buffer.statistics.lost == 1)
    }

    @Test func delayIsBoundedUnderExtremeJitter() {
        var random = SplitMix64(seed: 3)
        var buffer = JitterBuffer<Int>()
        let packets = scriptedStream(frames: 0..<1500) { _ in Int64.random(in: 0..<600_000, using: &random) }
        let records = run(packets, ticks: 1550, buffer: &buffer)
        #expect(records.allSatisfy { $0.statistics.targetDelay <= 200_000 })
        // The maximum, plus up to three frames waited for a late packet, plus the tick's own phase.
        #expect(records.allSatisfy { $0.statistics.playoutDelay <= 300_000 })
    }
}

@Suite struct JitterBufferRobustnessTests {
    /// Hostile input: random sequence numbers, timestamps, SSRC switches and arrival times. The buffer must never
    /// trap, never hold more than its capacity and never play the same packet twice.
    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func randomInputNeverBreaksInvariants(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var configuration = JitterBufferConfiguration()
        configuration.capacity = 16
        var buffer = JitterBuffer<Int>(configuration: configuration)
        var now: Int64 = 1_000_000
        var sequence: UInt16 = 65_000
        var timestamp: UInt32 = 4_000_000_000
        var ssrc: UInt32 = 1
        var played = Set<Int>()
        var playedTwice = 0
        for id in 0..<20_000 {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<70:
                sequence &+= 1
                timestamp &+= 960
            case 70..<80:
                sequence &+= UInt16.random(in: 0...40, using: &random)
                timestamp &+= UInt32.random(in: 0...100_000, using: &random)
            case 80..<90:
                sequence &-= UInt16.random(in: 0...50, using: &random)
            case 90..<98:
                sequence = UInt16.random(in: 0...UInt16.max, using: &random)
                timestamp = UInt32.random(in: 0...UInt32.max, using: &random)
            default:
                ssrc = UInt32.random(in: 1...3, using: &random)
            }
            let arrival = now + Int64.random(in: -5_000_000...5_000_000, using: &random)
            buffer.insert(sequence: sequence, timestamp: timestamp, ssrc: ssrc, arrival: arrival, payload: id)
            if Bool.random(using: &random) {
                now += Int64.random(in: 0...60_000, using: &random)
                switch buffer.nextFrame(at: now) {
                case .packet(let payload):
                    if !played.insert(payload).inserted { playedTwice += 1 }
                case .fecFrom(let payload):
                    #expect(!played.contains(payload))
                case .conceal, .silence:
                    break
                }
            }
            #expect(buffer.bufferedPackets >= 0 && buffer.bufferedPackets <= 16)
        }
        #expect(playedTwice == 0)
        #expect(!played.isEmpty)
        let statistics = buffer.statistics
        #expect(statistics.targetDelay >= 20_000 && statistics.targetDelay <= 200_000)
        #expect(statistics.lost >= 0 && statistics.late >= 0 && statistics.overflow >= 0)
    }
}

/// A talk spurt after a pause keeps the previous spurt's timing while the target moved only a little.
@Suite struct JitterBufferSpurtTests {
    /// Two spurts of 50 frames a second apart; in the first, every tenth packet is 23 ms late, which lifts the
    /// target from its 20 ms floor to 24 ms near the end of that spurt.
    func pauseAfterJitter(
        hysteresis: Int64, lateBy: Int64 = 38_000
    ) -> (pause: Int, before: Int64, after: Int64, target: Int64) {
        var configuration = JitterBufferConfiguration()
        configuration.spurtHysteresis = hysteresis
        var buffer = JitterBuffer<Int>(configuration: configuration)
        let packets = scriptedStream(
            frames: 0..<100, timestampOffset: { $0 >= 50 ? 48_000 : 0 },
            delay: { $0 < 50 && $0 % 10 == 9 ? 25_000 + lateBy : 25_000 })
        let records = run(packets, ticks: 170, firstTick: 24_000, buffer: &buffer)
        let decisions = records.map(\.decision)
        let last = decisions.firstIndex(of: .packet(49))!
        let resume = decisions.firstIndex(of: .packet(50))!
        return (
            resume - last, records[last].statistics.playoutDelay, records[resume].statistics.playoutDelay,
            records[resume].statistics.targetDelay
        )
    }

    @Test func aSmallRiseOfTheTargetDoesNotShiftTheNextSpurt() {
        // The first spurt plays 39 ms behind the baseline; the target ends at 40 ms, 1 ms past that schedule.
        let kept = pauseAfterJitter(hysteresis: JitterBufferConfiguration().spurtHysteresis)
        #expect(kept.before == 39_000 && kept.target == 40_000)
        // The pause lasts as long as the sender's (50 frames of DTX), and the second spurt plays on the first's
        // timing.
        #expect(kept.pause == 51)
        #expect(kept.after == 39_000)
        // Re-anchored on the target instead, the second spurt would start a whole tick later.
        let moved = pauseAfterJitter(hysteresis: 0)
        #expect(moved.pause == 52)
        #expect(moved.after == 59_000)
    }
}

@Suite struct JitterBufferShortPauseTests {
    /// A clean stream with a short DTX pause after frame 49, `gap` frames long (the sequence runs on, the
    /// timestamp jumps), as Opus makes between sentences: nothing is lost, late or shifted, and the pause lasts
    /// exactly as long as the sender's. The only concealment is the hold after each spurt's last packet (up
    /// to `holdFrames` ticks, fewer when the next spurt is due sooner): that is all a clean stream ever counts as
    /// `concealed`.
    @Test(arguments: [1, 2, 3, 4, 5, 10, 20])
    func aShortPauseLastsAsLongAsTheSendersAndConcealsOnlyTheHold(gap: Int) {
        var buffer = JitterBuffer<Int>()
        let holdFrames = JitterBufferConfiguration().holdFrames
        let packets = scriptedStream(
            frames: 0..<100, timestampOffset: { $0 >= 50 ? UInt32(gap * 960) : 0 }, delay: { _ in 25_000 })
        let records = run(packets, ticks: 130, buffer: &buffer)
        #expect(playedFrames(records) == Array(0..<100))
        let decisions = records.map(\.decision)
        let last = decisions.firstIndex(of: .packet(49))!
        let resume = decisions.firstIndex(of: .packet(50))!
        #expect(resume - last == gap + 1)
        let hold = min(gap - 1, holdFrames)
        #expect(
            Array(decisions[(last + 1)..<resume])
                == Array(repeating: .conceal, count: hold) + Array(repeating: .silence, count: gap - hold))
        #expect(records[resume].statistics.playoutDelay == records[last].statistics.playoutDelay)
        // The pause's hold and the one after the last packet of the stream.
        #expect(buffer.statistics.concealed == hold + holdFrames)
        #expect(buffer.statistics.lost == 0)
        #expect(buffer.statistics.late == 0)
        #expect(buffer.statistics.skipped == 0)
    }
}
