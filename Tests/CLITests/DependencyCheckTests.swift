import Foundation
import RoomTesting
import Testing

/// `scripts/check-dependencies`, which `make lint` runs: declared dependencies must equal imports, and product
/// targets must not reach the benchmarks. Run on a small made-up package, described as `swift package
/// dump-package` would.
@Suite struct DependencyCheckTests {
    /// This file is Tests/CLITests/DependencyCheckTests.swift, two levels below the package root.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/check-dependencies").path

    /// A package of `targets` (name, type, dependencies, path) whose sources are `files` (path: text).
    func check(
        targets: [(name: String, type: String, dependencies: [String], path: String?)], files: [String: String]
    ) throws -> ProcessResult {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        for (path, text) in files {
            let file = directory.file(path)
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
        }
        let package: [String: Any] = [
            "name": "Sample",
            "targets": targets.map { target -> [String: Any] in
                var entry: [String: Any] = [
                    "name": target.name, "type": target.type,
                    "dependencies": target.dependencies.map { ["byName": [$0, NSNull()]] },
                ]
                if let path = target.path { entry["path"] = path }
                return entry
            },
        ]
        let json = directory.file("package.json")
        try JSONSerialization.data(withJSONObject: package).write(to: URL(fileURLWithPath: json))
        return try ChildProcess([
            "python3", Self.script, "--package-path", directory.path, "--package-json", json,
        ]).finish()
    }

    @Test func aConsistentPackagePasses() throws {
        let result = try check(
            targets: [
                ("Core", "regular", [], nil), ("App", "regular", ["Core"], nil),
                ("Bench", "regular", ["App"], "Sources/Benchmarks/Bench"),
                ("tool", "executable", ["App", "Bench"], nil),
                ("AppTests", "test", ["App", "Bench"], nil),
            ],
            files: [
                "Sources/Core/Core.swift": "import Foundation\n",
                "Sources/App/App.swift": "internal import Core\nimport Glibc\n",
                "Sources/Benchmarks/Bench/Bench.swift": "import App\n",
                "Sources/tool/main.swift": "import App\nimport Bench\n",
                "Tests/AppTests/AppTests.swift": "@testable import App\nimport Bench\nimport Testing\n",
            ])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
    }

    @Test func eachDifferenceIsNamedWithItsTarget() throws {
        let result = try check(
            targets: [
                ("Core", "regular", [], nil), ("Extra", "regular", [], nil),
                ("App", "regular", ["Core", "Extra", "Bench"], nil),
                ("Bench", "regular", [], "Sources/Benchmarks/Bench"),
            ],
            files: [
                "Sources/Core/Core.swift": "\n",
                "Sources/Extra/Extra.swift": "import Core\n",
                "Sources/App/App.swift": "import Core\nimport Bench\n",
                "Sources/Benchmarks/Bench/Bench.swift": "\n",
            ])
        #expect(result.status == 1)
        #expect(
            result.standardError == """
                check-dependencies: App: declares Extra in Package.swift but never imports it
                check-dependencies: App: a product target, depends on the benchmark target Bench; benchmarks live \
                beside the product, never inside it
                check-dependencies: Extra: imports Core without declaring it in Package.swift

                """)
    }

    /// fuzz/build compiles the fuzz targets' modules by hand: its list must follow Package.swift.
    @Test func theFuzzBuildListsWhatFuzzChecksNeeds() throws {
        let targets: [(name: String, type: String, dependencies: [String], path: String?)] = [
            ("Core", "regular", [], nil), ("Words", "regular", [], nil), ("Text", "regular", ["Core", "Words"], nil),
            ("FuzzChecks", "regular", ["Text"], nil),
        ]
        let sources = [
            "Sources/Core/Core.swift": "\n", "Sources/Words/Words.swift": "\n",
            "Sources/Text/Text.swift": "import Core\nimport Words\n",
            "Sources/FuzzChecks/Checks.swift": "import Text\n",
        ]
        var stale = sources
        stale["fuzz/build"] = """
            declare -A imports=([Core]="" [Text]="Core" [FuzzChecks]="Text")
            link "$out"/Core.o "$out"/Text.o
            """
        let result = try check(targets: targets, files: stale)
        #expect(result.status == 1)
        #expect(
            result.standardError == """
                check-dependencies: fuzz/build: does not build Words, which FuzzChecks needs
                check-dependencies: fuzz/build: gives Text the modules Core, but Package.swift declares Core, Words

                """)
        var current = sources
        current["fuzz/build"] = """
            declare -A imports=([Core]="" [Words]="" [Text]="Core Words" [FuzzChecks]="Text")
            link "$out"/Core.o "$out"/Words.o "$out"/Text.o
            """
        let passing = try check(targets: targets, files: current)
        #expect(passing.status == 0, "\(passing.standardError)")
    }
}
