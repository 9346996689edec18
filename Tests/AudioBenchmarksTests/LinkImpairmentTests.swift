import Testing

@testable import AudioBenchmarks

/// The seeded loss and delay pattern the impairing relay applies.
@Suite struct LinkImpairmentTests {
    @Test func theSameSeedGivesTheSamePatternAndAnotherSeedAnother() {
        let link = LinkImpairment(lossPercent: 8, baseDelayMilliseconds: 0, jitterMilliseconds: 40, seed: 42)
        let again = LinkImpairment(lossPercent: 8, baseDelayMilliseconds: 0, jitterMilliseconds: 40, seed: 42)
        var other = link
        other.seed = 43
        let frames = 0..<2_000
        #expect(frames.map(link.isLost) == frames.map(again.isLost))
        #expect(frames.map(link.delay) == frames.map(again.delay))
        #expect(frames.map(link.isLost) != frames.map(other.isLost))
        #expect(frames.map(link.delay) != frames.map(other.delay))
    }

    @Test func lossAndDelayStayWithinTheirSettings() {
        let link = LinkImpairment(lossPercent: 10, baseDelayMilliseconds: 5, jitterMilliseconds: 40, seed: 7)
        let frames = 0..<10_000
        let lost = frames.filter(link.isLost).count
        #expect(lost > 800 && lost < 1_200)
        #expect(frames.allSatisfy { (5_000...45_000).contains(link.delay(frame: $0)) })
        #expect(frames.map(link.delay).max()! > 40_000)
        let clean = LinkImpairment(seed: 7)
        #expect(!frames.contains(where: clean.isLost))
        #expect(frames.allSatisfy { clean.delay(frame: $0) == 1_000 })
        let cut = LinkImpairment(lossPercent: 100, seed: 7)
        #expect(frames.allSatisfy(cut.isLost))
    }
}
