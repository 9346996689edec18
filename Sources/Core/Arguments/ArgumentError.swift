/// What is wrong with a command line, with enough context to say it in one line.
public enum ArgumentError: Error, Sendable, Equatable {
    /// A word where a command was expected, with the closest command name if one is close.
    case unknownCommand(String, suggestion: String?)
    /// An option the command does not have, with the closest option if one is close.
    case unknownOption(String, suggestion: String?)
    /// An option that needs a value came last, or was followed by nothing.
    case missingValue(option: String, placeholder: String)
    /// A value that does not parse; `argument` is `--option` or `<positional>`.
    case badValue(argument: String, value: String, expected: String)
    /// A flag was given a value with `--flag=value`.
    case unexpectedValue(option: String)
    /// A required positional argument was not given.
    case missingPositional(String)
    /// A required option was not given; `synopsis` is `--name PLACEHOLDER`.
    case missingOption(synopsis: String)
    /// A word left over after every positional argument was filled.
    case unexpectedArgument(String)
    /// Two options that cannot be used together.
    case conflict(String, String)
    /// An option that only makes sense together with another one.
    case needs(option: String, needed: String)
    /// An option that does not apply in this case, e.g. `--clients` for `bench store`.
    case notApplicable(option: String, context: String)

    /// The problem in one line, without the command name in front.
    public var message: String {
        switch self {
        case .unknownCommand(let word, let suggestion):
            return "unknown command '\(shown(word))'" + didYouMean(suggestion)
        case .unknownOption(let option, let suggestion):
            return "unknown option '\(shown(option))'" + didYouMean(suggestion)
        case .missingValue(let option, let placeholder):
            return "missing value for '\(option)' (expected \(placeholder))"
        case .badValue(let argument, let value, let expected):
            return "bad value '\(shown(value))' for '\(argument)' (expected \(expected))"
        case .unexpectedValue(let option):
            return "'\(option)' does not take a value"
        case .missingPositional(let synopsis):
            return "missing argument '\(synopsis)'"
        case .missingOption(let synopsis):
            return "missing option '\(synopsis)'"
        case .unexpectedArgument(let word):
            return "unexpected argument '\(shown(word))'"
        case .conflict(let first, let second):
            return "'\(first)' and '\(second)' cannot be used together"
        case .needs(let option, let needed):
            return "'\(option)' needs '\(needed)' as well"
        case .notApplicable(let option, let context):
            return "'\(option)' does not apply to \(context)"
        }
    }
}

/// A word of the command line as an error repeats it: a link's fragment is left out (`wss://host/rooms/r#…`), since
/// that is where an invite travels, and an error is read over shoulders, pasted into chats and kept in logs.
private func shown(_ word: String) -> String {
    guard word.contains("://"), let hash = word.firstIndex(of: "#") else { return word }
    return String(word[..<hash]) + "#…"
}

private func didYouMean(_ suggestion: String?) -> String {
    suggestion.map { " (did you mean '\($0)'?)" } ?? ""
}

/// A command line that could not be parsed, and the command it was for (nil when the command itself is unknown).
public struct UsageError: Error, Sendable, Equatable {
    /// The command whose usage should be shown, or nil for the program's.
    public var command: Command?
    /// What is wrong.
    public var problem: ArgumentError
}
