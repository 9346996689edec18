import Testing

@testable import AudioCore

/// Frames filed from a later packet's RFC 2198 redundancy: they play in their own packet's place, before FEC or
/// concealment, hold the loss floor, and are ignored when their packet came or their turn has passed.
@Suite struct JitterBufferRedundancyTests {
    func configuration() -> JitterBufferConfiguration {
        var configuration = JitterBufferConfiguration()
        configuration.minimumDelay = 5_000
        configuration.lossDelay = 25_000
        return configuration
    }

    /// Packets 0–9 a frame apart, 4 lost and its frame filed from packet 5; a tick 1 ms after each arrival.
    @Test func aLostFrameFromRedundancyPlaysAsItsOwnPacket() {
        var buffer = JitterBuffer<Int>(configuration: configuration())
        var played: [Int] = []
        for frame in 0..<12 {
            let time = Int64(frame) * 20_000
            if frame < 10, frame != 4 {
                buffer.insert(
                    sequence: UInt16(100 + frame), timestamp: UInt32(frame * 960), ssrc: 7, arrival: time,
                    payload: frame)
            }
            if frame == 5 {
                buffer.insertRedundant(sequence: 104, timestamp: 4 * 960, ssrc: 7, payload: 4)
                // A copy of a packet that came, one of another stream, and one already played: nothing.
                buffer.insertRedundant(sequence: 103, timestamp: 3 * 960, ssrc: 7, payload: -3)
                buffer.insertRedundant(sequence: 104, timestamp: 4 * 960, ssrc: 8, payload: -4)
                buffer.insertRedundant(sequence: 102, timestamp: 2 * 960, ssrc: 7, payload: -2)
                #expect(buffer.statistics.targetDelay == 25_000)
            }
            if case .packet(let payload) = buffer.nextFrame(at: time + 1_000) { played.append(payload) }
        }
        #expect(played == Array(0..<10))
        #expect(buffer.statistics.recoveredByRED == 1)
        #expect(buffer.statistics.lost == 0)
        #expect(buffer.statistics.recoveredByFEC == 0)
        #expect(buffer.statistics.received == 9)
    }

    /// Five packets lost in a row (6–10) under two repeated frames, at a 45 ms floor: nothing comes for two ticks,
    /// then packet 11 brings 10 and 9 again. The two frames concealed while waiting stand for 6 and 7, 8 is
    /// rebuilt from 9 in the tick it is due, and every frame after plays in its own tick: no delay is added, so no
    /// frame has to be skipped later to give it back.
    @Test func aLongBurstWaitedForAddsNoDelay() {
        var configuration = configuration()
        configuration.minimumDelay = 45_000
        configuration.lossDelay = 45_000
        var buffer = JitterBuffer<Int>(configuration: configuration)
        var decisions: [PlayoutDecision<Int>] = []
        for tick in 0..<20 {
            let time = Int64(tick) * 20_000
            if tick < 16, !(6...10).contains(tick) {
                buffer.insert(
                    sequence: UInt16(200 + tick), timestamp: UInt32(tick * 960), ssrc: 7, arrival: time,
                    payload: tick)
            }
            if tick == 11 {
                buffer.insertRedundant(sequence: 210, timestamp: 10 * 960, ssrc: 7, payload: 10)
                buffer.insertRedundant(sequence: 209, timestamp: 9 * 960, ssrc: 7, payload: 9)
            }
            decisions.append(buffer.nextFrame(at: time + 1_000))
        }
        // Frame k is due 45 ms after it was sent: in the tick three frames later.
        #expect(Array(decisions[3..<9]) == (0..<6).map { .packet($0) })
        #expect(Array(decisions[9..<12]) == [.conceal, .conceal, .fecFrom(9)])
        #expect(Array(decisions[12..<19]) == (9..<16).map { .packet($0) })
        #expect(buffer.statistics.lost == 3)
        #expect(buffer.statistics.recoveredByRED == 2)
        #expect(buffer.statistics.skipped == 0)
    }
}
