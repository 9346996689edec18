import Testing

@testable import AudioBenchmarks

@Suite struct PathLatencyTests {
    /// A room server in process, a speaker and two listeners as `clubroom join` runs them (one on stage, one in
    /// the audience), clicks into the speaker's microphone: every click counted comes out of both loudspeakers.
    @Test func everyClickComesThroughTheServerToBothListeners() throws {
        let result = try PathLatencyBenchmark.runOnce(clicks: 4, link: nil)
        for listener in [result.stage, result.audience] {
            #expect(listener.clicksSent == 4)
            #expect(listener.latencies.count == 4)
            #expect(listener.packetsRelayed == 0)
        }
    }
}
