import Foundation
import RoomTesting
import Testing

/// docs/cli.md shows every help text exactly as `clubroom` prints it, each in a code block of its own.
@Test(arguments: [[]] + commandNames.map { [$0] })
func docsShowTheHelpAsPrinted(command: [String]) throws {
    let root = try #require(packageRoot(of: #filePath))
    let docs = try String(contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
    let result = try runClubroom(command.isEmpty ? ["--help"] : ["help"] + command)
    #expect(result.status == 0)
    #expect(docs.contains("```\n" + result.standardOutput + "```\n"), "docs/cli.md: help of '\(command)'")
}
