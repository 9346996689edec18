import Foundation
import Testing

/// `clubroom bench cpu`'s rig: a server, three speaker bots and the measured `clubroom join` as processes. Only
/// that the rig runs and what it heard; the figures themselves are the benchmark's business, not a test's.
extension MediaEndToEndTests {
    @Test func theCPUBenchRunsTheClientAgainstThreeSpeakersAndMeasuresIt() throws {
        let report = try BenchReport(["cpu", "--seconds", "2"], within: 120)
        func value(_ metric: String) -> Double? { report.value(metric) }
        #expect(try #require(value("speaking client hearing 3 speakers")) > 0)
        #expect(try #require(value("listener hearing 3 speakers")) > 0)
        #expect(try #require(value("libopus alone: encode 1 + decode 3")) > 0)
        #expect(value("speaking client: speakers heard") == 3)
        #expect(value("speaking client: heard by speakers") == 3)
        #expect(value("listener: speakers heard") == 3)
        #expect(try #require(value("listener: wake-ups")) > 0)
    }
}
