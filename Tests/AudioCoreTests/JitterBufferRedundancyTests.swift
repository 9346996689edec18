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
}
