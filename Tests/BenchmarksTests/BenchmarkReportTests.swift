import BenchmarkSupport
import ClubroomResources
import Foundation
import RoomCore
import StoreBenchmarks
import Testing

@Suite struct BenchmarkReportTests {
    let report = BenchmarkReport(
        name: "demo",
        rows: [
            .init("joins", 12.5, "ms", target: 20),
            .init("rate", 900, "packets/s", target: 1000, goal: .atLeast),
            .init("p99", 3.25, "µs"),
        ],
        notes: ["release build"])

    @Test func rowsCheckTheirTargets() {
        #expect(report.rows.map(\.pass) == [true, false, nil])
        #expect(!report.allPassed)
        #expect(BenchmarkReport(name: "x", rows: [.init("a", 1, "ms")]).allPassed)
    }

    @Test func tableTextLinesUpTheColumns() {
        #expect(
            report.tableText() == """
                demo
                metric   value  unit       target  result
                ------  ------  ---------  ------  ------
                joins   12.500  ms         ≤ 20    ok
                rate       900  packets/s  ≥ 1000  MISS
                p99      3.250  µs
                  release build

                """)
    }

    @Test func jsonTextRoundTrips() throws {
        let json = report.jsonText()
        #expect(json.contains(#""pass" : false"#))
        #expect(json.contains(#""goal" : "at_least""#))
        let back = try JSONDecoder().decode(BenchmarkReport.self, from: Data(json.utf8))
        #expect(back == report)
    }

    /// Only checks that the benchmark runs and reports every row; timings are not asserted.
    @Test func theStoreBenchmarkRunsOnASmallRoom() throws {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        let small = StoreBenchmark.run(roles: roles, peers: 300, repetitions: 1)
        #expect(small.name == "store")
        #expect(
            small.rows.map(\.metric) == [
                "300 joins", "joined snapshot of 300 peers", "275 hand raises and lowers, 300-peer room",
                "100 role changes, 300-peer room", "event + section update, median, 300-peer room",
                "event + section update, p99, 300-peer room",
            ])
        #expect(small.rows.allSatisfy { $0.value >= 0 })
    }
}
