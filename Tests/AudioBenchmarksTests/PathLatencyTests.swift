import Testing

@testable import AudioBenchmarks

@Suite struct PathLatencyTests {
    /// A room server in process, a speaker and two listeners as `clubroom join` runs them (one on stage, one in
    /// the audience), clicks into the speaker's microphone: every click counted comes out of both loudspeakers.
    ///
    /// A click counts when it comes out within 400 ms of going in (`clickDelays`), a bound `bench latency` measures
    /// against on a machine of its own. Here the rest of the suite runs beside it on the same cores: a run starved of
    /// CPU long enough for the jitter buffer to grow past that bound misses a click without anything being wrong
    /// with the path. So a second run is made when the first missed one, and one run must carry every click to
    /// both listeners; a broken path misses clicks in both.
    @Test func everyClickComesThroughTheServerToBothListeners() throws {
        var result = try PathLatencyBenchmark.runOnce(clicks: 4, link: nil)
        if [result.stage, result.audience].contains(where: { $0.latencies.count < 4 }) {
            result = try PathLatencyBenchmark.runOnce(clicks: 4, link: nil)
        }
        for listener in [result.stage, result.audience] {
            #expect(listener.clicksSent == 4)
            #expect(listener.latencies.count == 4)
            #expect(listener.packetsRelayed == 0)
        }
    }
}
