import ClubroomResources
import RoomCore
import Testing

@testable import AudioBenchmarks

/// The highlight benchmark's run, short: every spurt of the two speakers is highlighted, and the highlight
/// changes no more often than the talk does (no flicker).
@Suite struct HighlightBenchmarkTests {
    @Test func everySpurtIsHighlightedAndTheHighlightDoesNotFlicker() throws {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        let result = try HighlightBenchmark.run(seconds: 3, roles: roles)
        #expect(result.spurts >= 3)
        #expect(result.latencies.count == result.spurts, "spurts not highlighted: \(result)")
        #expect(result.changesPerMinute <= result.scheduledChangesPerMinute, "\(result)")
        #expect(result.changesPerMinute > 0)
    }

    @Test func theSpeakersTalkOverEachOther() {
        let (ana, bo) = (HighlightBenchmark.patterns[0], HighlightBenchmark.patterns[1])
        let both = stride(from: Int64(0), to: 20_000, by: 10).filter { ana.talks(at: $0) && bo.talks(at: $0) }
        let either = stride(from: Int64(0), to: 20_000, by: 10).filter { ana.talks(at: $0) || bo.talks(at: $0) }
        #expect(!both.isEmpty, "the schedule has overlaps")
        #expect(either.count < 2_000, "and moments when nobody talks")
    }
}
