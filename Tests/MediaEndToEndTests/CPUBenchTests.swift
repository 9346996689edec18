import Foundation
import Testing

/// `clubroom bench cpu`'s rig: a server, three speaker bots and the measured `clubroom join` as processes. Only
/// that the rig runs and what it heard; the figures themselves are the benchmark's business, not a test's.
extension MediaEndToEndTests {
    @Test func theCPUBenchRunsTheClientAgainstThreeSpeakersAndMeasuresIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-cpu-test-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bench = try RunningProcess(["bench", "cpu", "--seconds", "2", "--json"], directory: directory)
        #expect(eventually(seconds: 120) { !bench.process.isRunning }, "still running: \(bench.standardError)")
        let data = Data(bench.standardOutput.utf8)
        let report = try #require(
            try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            "not a report: \(bench.standardOutput) \(bench.standardError)")
        let rows = try #require(report["rows"] as? [[String: Any]])
        func value(_ metric: String) -> Double? {
            rows.first { $0["metric"] as? String == metric }?["value"] as? Double
        }
        #expect(try #require(value("speaking client hearing 3 speakers")) > 0)
        #expect(try #require(value("listener hearing 3 speakers")) > 0)
        #expect(try #require(value("libopus alone: encode 1 + decode 3")) > 0)
        #expect(value("speaking client: speakers heard") == 3)
        #expect(value("speaking client: heard by speakers") == 3)
        #expect(value("listener: speakers heard") == 3)
        #expect(try #require(value("listener: wake-ups")) > 0)
    }
}
