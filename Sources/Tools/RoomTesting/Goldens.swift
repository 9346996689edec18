import Foundation
import TermUI
import Testing

/// Compares a buffer's text with `Goldens/<name>.txt`; with `UPDATE_GOLDENS=1` it rewrites the file instead.
/// Trailing spaces are dropped from each line so the files read well in any editor. `Goldens/` sits beside the
/// calling test file (`filePath`).
public func expectGolden(
    _ name: String, _ buffer: CellBuffer, filePath: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let directory = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Goldens")
    let file = directory.appendingPathComponent(name + ".txt")
    let lines = buffer.lines().map { line -> String in
        var trimmed = Substring(line)
        while trimmed.last == " " { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
    let actual = lines.joined(separator: "\n") + "\n"
    if ProcessInfo.processInfo.environment["UPDATE_GOLDENS"] == "1" {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? actual.write(to: file, atomically: true, encoding: .utf8)
        return
    }
    guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
        Issue.record(
            "missing golden \(file.lastPathComponent); run with UPDATE_GOLDENS=1", sourceLocation: sourceLocation)
        return
    }
    if expected != actual {
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var report = ""
        for index in 0..<max(expectedLines.count, actualLines.count) {
            let e = index < expectedLines.count ? String(expectedLines[index]) : "<none>"
            let a = index < actualLines.count ? String(actualLines[index]) : "<none>"
            if e != a { report += "line \(index + 1)\n  expected: \(e)\n  actual:   \(a)\n" }
        }
        Issue.record("golden \(name) differs:\n\(report)", sourceLocation: sourceLocation)
    }
}
