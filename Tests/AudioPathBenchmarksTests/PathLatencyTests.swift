import AudioEngine
import Testing

@testable import AudioPathBenchmarks

@Suite struct PathLatencyTests {
    /// A room server in process, a speaker and a listener as `clubroom join` runs them, clicks into one's
    /// microphone: every click counted comes out of the other's loudspeaker.
    @Test func everyClickComesThroughTheServer() throws {
        let result = try PathLatencyBenchmark.runOnce(clicks: 4, link: nil)
        #expect(result.clicksSent == 4)
        #expect(result.latencies.count == 4)
        #expect(result.packetsRelayed == 0)
    }

    /// The same through the impairing relay with no loss: it carries the speaker's packets, and every click
    /// still comes out.
    @Test func clicksComeThroughTheRelay() throws {
        let link = LinkImpairment(lossPercent: 0, baseDelayMilliseconds: 0, jitterMilliseconds: 20, seed: 1)
        let result = try PathLatencyBenchmark.runOnce(clicks: 4, link: link)
        #expect(result.clicksSent == 4)
        #expect(result.latencies.count == 4)
        #expect(result.packetsRelayed > 0)
        #expect(result.packetsDropped == 0)
    }
}
