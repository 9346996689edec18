import Arguments

#if canImport(Glibc)
import Glibc
#endif

/// What a person is shown for a failure, and the exit status that goes with it.
struct ErrorReport: Equatable {
    var text: String
    var status: ExitStatus
}

/// Turns any error into the text a person reads on stderr. The one place that does; only `main` exits.
///
/// Usage errors get one line naming the problem, then the usage and where to find help (status 2). Everything
/// else is one line with the command's name in front (status 1).
func report(_ error: any Error, command: Command?) -> ErrorReport {
    let program = clubroomProgram
    let prefix = command.map { "\(program.name) \($0.name): " } ?? "\(program.name): "
    let problem: ArgumentError?
    switch error {
    case let usageError as UsageError: problem = usageError.problem
    case let argumentError as ArgumentError: problem = argumentError
    default: problem = nil
    }
    if let problem {
        let usage = command.map { program.usage(for: $0) } ?? program.usage
        let helpHint = command.map { "See '\(program.name) \($0.name) --help'." } ?? "See '\(program.name) --help'."
        return ErrorReport(text: "\(prefix)\(problem.message)\n\(usage)\n\(helpHint)\n", status: .usage)
    }
    switch error {
    case let described as CustomStringConvertible:
        return ErrorReport(text: "\(prefix)\(described.description)\n", status: .failure)
    default:
        return ErrorReport(text: "\(prefix)\(String(describing: error))\n", status: .failure)
    }
}

/// Writes text to stdout with `write(2)`, unbuffered, so it interleaves correctly with stderr.
func writeOutput(_ text: String) {
    writeAll(text, to: STDOUT_FILENO)
}

/// Writes text to stderr.
func writeError(_ text: String) {
    writeAll(text, to: STDERR_FILENO)
}

private func writeAll(_ text: String, to descriptor: Int32) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { buffer in
            write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written < 0, errno == EINTR { continue }
        // A closed pipe or full disk leaves nothing useful to do with the rest of the text.
        guard written > 0 else { return }
        offset += written
    }
}
