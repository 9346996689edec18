import Foundation
import RoomTesting
import Testing

/// `clubroom bench stream` on a short run: that its rig runs against the real servers and its "nothing lost" part
/// counts every frame of every output and reads each stream back whole. The delays and CPU figures are the
/// benchmark's business, not a test's.
@Suite(.ownThread, .timeLimit(.minutes(4))) struct StreamBenchTests {
    @Test func theStreamBenchFindsNothingLostOnAShortRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "clubroom-bench-stream-test-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bench = try RunningProcess(["bench", "stream", "--seconds", "2", "--json"], directory: directory)
        #expect(eventually(seconds: 200) { !bench.process.isRunning }, "still running: \(bench.standardError)")
        let data = Data(bench.standardOutput.utf8)
        let report = try #require(
            try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            "not a report: \(bench.standardOutput) \(bench.standardError)")
        let rows = try #require(report["rows"] as? [[String: Any]])
        func value(_ metric: String) -> Double? {
            rows.first { $0["metric"] as? String == metric }?["value"] as? Double
        }
        let run = try #require(value("nothing lost: the run"))
        #expect(run >= 2)
        for output in ["Icecast", "HLS", "RTMP"] {
            let offered = try #require(value("\(output): frames offered"))
            #expect(offered == (run * 50).rounded(), "\(output)")
            #expect(value("\(output): frames delivered") == offered, "\(output)")
            #expect(value("\(output): dropped (queue overflow)") == 0, "\(output)")
            #expect(value("\(output): not sent while down") == 0, "\(output)")
            #expect(value("\(output): read back off the expected") == 0, "\(output)")
        }
        let notes = report["notes"] as? [String] ?? []
        #expect(notes.contains { $0.hasPrefix("nothing lost: over ") }, "\(notes)")
    }
}
