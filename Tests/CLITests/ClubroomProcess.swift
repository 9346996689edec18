import Foundation

/// What a finished `clubroom` process left behind.
struct ProcessResult {
    var status: Int32
    var standardOutput: String
    var standardError: String

    /// The first line written to stderr, without its newline.
    var firstErrorLine: String { String(standardError.split(separator: "\n", omittingEmptySubsequences: false)[0]) }
}

/// Errors finding or running the binary under test.
enum ClubroomProcessError: Error, CustomStringConvertible {
    case binaryNotFound(searched: [String])
    case timedOut(arguments: [String])

    var description: String {
        switch self {
        case .binaryNotFound(let searched):
            return "clubroom binary not found; build it with 'swift build --build-tests'. Looked in: "
                + searched.joined(separator: ", ")
        case .timedOut(let arguments):
            return "clubroom \(arguments.joined(separator: " ")) did not finish within 30 s"
        }
    }
}

/// The built `clubroom` executable: `CLUBROOM_BINARY` when set, else next to the test bundle in the build
/// products directory (where `swift build --build-tests` puts both), else under this package's `.build/debug`.
func clubroomBinary() throws -> URL {
    var candidates: [URL] = []
    if let override = ProcessInfo.processInfo.environment["CLUBROOM_BINARY"] {
        candidates.append(URL(fileURLWithPath: override))
    }
    let testExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = testExecutable.deletingLastPathComponent()
    // On Darwin the test binary sits inside Foo.xctest/Contents/MacOS; step out of the bundle.
    while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
    candidates.append(directory.appendingPathComponent("clubroom"))
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(packageRoot.appendingPathComponent(".build/debug/clubroom"))
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
    }
    throw ClubroomProcessError.binaryNotFound(searched: candidates.map(\.path))
}

/// Runs `clubroom` with the arguments, stdin from /dev/null, and waits for it; killed after 30 s.
func runClubroom(_ arguments: [String]) throws -> ProcessResult {
    let process = Process()
    process.executableURL = try clubroomBinary()
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()

    // Both pipes are drained at once so that a chatty process cannot block on a full pipe.
    let group = DispatchGroup()
    nonisolated(unsafe) var outputData = Data()
    nonisolated(unsafe) var errorData = Data()
    DispatchQueue.global().async(group: group) { outputData = output.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errorData = error.fileHandleForReading.readDataToEndOfFile() }
    if group.wait(timeout: .now() + 30) == .timedOut {
        process.terminate()
        process.waitUntilExit()
        throw ClubroomProcessError.timedOut(arguments: arguments)
    }
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData, as: UTF8.self))
}
