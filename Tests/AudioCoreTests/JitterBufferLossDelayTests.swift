import Testing

@testable import AudioCore

/// The loss floor: while packets are being lost the target covers one frame more, so FEC from the next packet
/// arrives in time; it falls back to the plain floor `lossMemory` ticks after the last loss.
@Suite struct JitterBufferLossDelayTests {
    func configuration() -> JitterBufferConfiguration {
        var configuration = JitterBufferConfiguration()
        configuration.minimumDelay = 5_000
        configuration.lossDelay = 25_000
        configuration.lossMemory = 50
        return configuration
    }

    @Test func aLossRaisesTheTargetUntilTheMemoryRunsOut() {
        var buffer = JitterBuffer<Int>(configuration: configuration())
        // Frame 20 is lost; every other packet takes 1 ms.
        let packets = scriptedStream(frames: 0..<120) { $0 == 20 ? nil : 1_000 }
        let records = run(packets, ticks: 120, buffer: &buffer)
        let lossTick = records.firstIndex { $0.statistics.lost == 1 }!
        #expect(records[lossTick - 1].statistics.targetDelay == 5_000)
        #expect(records[lossTick].statistics.targetDelay == 25_000)
        #expect(records[lossTick + 49].statistics.targetDelay == 25_000)
        #expect(records[lossTick + 50].statistics.targetDelay == 5_000)
        #expect(records.last!.statistics.lost == 1)
    }

    @Test func withoutALossDelayNothingChanges() {
        var plain = configuration()
        plain.lossDelay = 0
        var buffer = JitterBuffer<Int>(configuration: plain)
        let packets = scriptedStream(frames: 0..<60) { $0 == 20 ? nil : 1_000 }
        let records = run(packets, ticks: 60, buffer: &buffer)
        #expect(records.allSatisfy { $0.statistics.targetDelay == 5_000 })
    }

    @Test func afterTheFirstLossLaterOnesAreRecoveredByFEC() {
        var buffer = JitterBuffer<Int>(configuration: configuration())
        let lost: Set<Int> = [20, 40, 60, 80]
        let packets = scriptedStream(frames: 0..<100) { lost.contains($0) ? nil : 1_000 }
        let records = run(packets, ticks: 100, buffer: &buffer)
        let statistics = records.last!.statistics
        #expect(statistics.lost == 4)
        // The first loss is concealed while the delay grows; with the raised target the next packet is there
        // for each later one.
        #expect(statistics.recoveredByFEC >= 3)
    }
}
