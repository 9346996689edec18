import Testing

@testable import AudioBenchmarks

@Suite struct PathLatencyTests {
    /// A room server in process, a speaker and a listener as `clubroom join` runs them, clicks into one's
    /// microphone: every click counted comes out of the other's loudspeaker.
    @Test func everyClickComesThroughTheServer() throws {
        let result = try PathLatencyBenchmark.runOnce(clicks: 4, link: nil)
        #expect(result.clicksSent == 4)
        #expect(result.latencies.count == 4)
        #expect(result.packetsRelayed == 0)
    }
}
