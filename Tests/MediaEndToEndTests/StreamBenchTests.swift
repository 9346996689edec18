import Foundation
import RoomTesting
import Testing

/// `clubroom bench stream` on a short run: that its rig runs against the real servers and its "nothing lost" part
/// counts every frame of every output and reads each stream back whole. The delays and CPU figures are the
/// benchmark's business, not a test's.
@Suite(.ownThread, .timeLimit(.minutes(4))) struct StreamBenchTests {
    @Test func theStreamBenchFindsNothingLostOnAShortRun() throws {
        let report = try BenchReport(["stream", "--seconds", "2"], within: 200)
        func value(_ metric: String) -> Double? { report.value(metric) }
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
        #expect(report.notes.contains { $0.hasPrefix("nothing lost: over ") }, "\(report.notes)")
    }
}
