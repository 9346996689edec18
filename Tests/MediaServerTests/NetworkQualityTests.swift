import MediaWire
import Testing

@testable import MediaServer

/// The score of docs/media.md's formula, at the figures the document names.
@Suite struct NetworkQualityTests {
    func score(loss: Int, jitter: Int = 12, rtt: Int = 40) -> Int {
        LinkMeasures(lossPercent: loss, jitterMilliseconds: jitter, rttMilliseconds: rtt).score
    }

    @Test func lossWeighsMost() {
        #expect(score(loss: 0, jitter: 0, rtt: 0) == 5)
        #expect(score(loss: 0) == 5)
        #expect(score(loss: 1) == 5)
        #expect(score(loss: 2) == 4)
        #expect(score(loss: 3) == 4)
        #expect(score(loss: 4) == 3)
        #expect(score(loss: 6) == 3)
        #expect(score(loss: 7) == 2)
        #expect(score(loss: 12) == 2)
        #expect(score(loss: 13) == 1)
        #expect(score(loss: 20) == 1)
        #expect(score(loss: 100) == 1)
    }

    @Test func delayAndJitterCostLessThanLoss() {
        #expect(score(loss: 0, jitter: 0, rtt: 300) == 5)
        #expect(score(loss: 0, jitter: 0, rtt: 400) == 4)
        #expect(score(loss: 0, jitter: 0, rtt: 600) == 3)
        #expect(score(loss: 0, jitter: 50, rtt: 40) == 5)
        #expect(score(loss: 0, jitter: 100, rtt: 40) == 4)
    }

    @Test func theRFactorAndMOSFollowTheEModel() {
        let clean = LinkMeasures(lossPercent: 0, jitterMilliseconds: 0, rttMilliseconds: 0)
        // d = 20 ms: Id = 0.5, Ie = 0.
        #expect(abs(NetworkQuality.rFactor(clean) - 92.7) < 1e-9)
        let lossy = LinkMeasures(lossPercent: 16, jitterMilliseconds: 0, rttMilliseconds: 0)
        // Ie = 95 · 16 / 32 = 47.5.
        #expect(abs(NetworkQuality.rFactor(lossy) - 45.2) < 1e-9)
        #expect(NetworkQuality.score(4.2) == 5)
        #expect(NetworkQuality.score(4.19) == 4)
        #expect(NetworkQuality.score(3.8) == 4)
        #expect(NetworkQuality.score(3.3) == 3)
        #expect(NetworkQuality.score(2.6) == 2)
        #expect(NetworkQuality.score(2.59) == 1)
    }

    @Test func noMediaScoresZeroAndMeasuresAreClamped() {
        #expect(LinkMeasures.none.score == 0)
        let wild = LinkMeasures(lossPercent: 400, jitterMilliseconds: -3, rttMilliseconds: -1)
        #expect(wild.lossPercent == 100 && wild.jitterMilliseconds == 0 && wild.rttMilliseconds == 0)
    }

    /// RFC 3550 §6.4.1: RTT = A − LSR − DLSR, in 1/65536 s.
    @Test func theRoundTripComesFromTheBlockAboutTheServersSenderReport() {
        func block(lsr: UInt32, dlsr: UInt32) -> RTCPReportBlock {
            RTCPReportBlock(
                ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitter: 0,
                lastSenderReport: lsr, delaySinceLastSenderReport: dlsr)
        }
        // Sent at 100 s, held 1 s by the peer, back at 101.25 s: 250 ms.
        #expect(MediaForwarder.roundTrip(block(lsr: 100 << 16, dlsr: 1 << 16), now: 101 << 16 | 1 << 14) == 250)
        #expect(MediaForwarder.roundTrip(block(lsr: 0, dlsr: 0), now: 5 << 16) == nil)
        // A block from before a clock step (the difference wraps): no figure rather than a wrong one.
        #expect(MediaForwarder.roundTrip(block(lsr: 100 << 16, dlsr: 1 << 16), now: 100 << 16) == nil)
    }
}
