import Foundation
import FuzzChecks
import Testing

/// The folder of the corpora and regression inputs: `fuzz/` at the package's root.
let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("fuzz")

/// The files in `fuzz/KIND/TARGET`, by name.
func inputs(_ kind: String, _ target: String) throws -> [URL] {
    let folder = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target)
    guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
    return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        .filter { !$0.lastPathComponent.hasPrefix(".") }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

/// Every fuzz target's checks, run without libFuzzer on its checked-in corpus, on every input that once broke
/// one of its properties (`fuzz/regressions/TARGET`), and on the seeds its code builds.
@Suite struct FuzzReplayTests {
    static let names = FuzzTarget.all.map(\.name)

    @Test(arguments: names) func corpusAndRegressionInputsPass(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let corpus = try inputs("corpus", name)
        #expect(!corpus.isEmpty, "fuzz/corpus/\(name) is empty")
        for file in try corpus + inputs("regressions", name) {
            do {
                try target.check(Array(try Data(contentsOf: file)))
            } catch {
                Issue.record("\(file.path): \(error)")
            }
        }
    }

    @Test(arguments: names) func seedsPass(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let seeds = target.seeds
        #expect(!seeds.isEmpty)
        for (index, seed) in seeds.enumerated() {
            do {
                try target.check(seed)
            } catch {
                Issue.record("seed \(index) of \(name): \(error)")
            }
        }
    }

    @Test func everyCorpusFolderNamesATarget() throws {
        for kind in ["corpus", "regressions"] {
            let folder = fuzzDirectory.appendingPathComponent(kind)
            guard FileManager.default.fileExists(atPath: folder.path) else { continue }
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasPrefix(".") {
                #expect(FuzzTarget.named(name) != nil, "fuzz/\(kind)/\(name) belongs to no target")
            }
        }
    }
}
