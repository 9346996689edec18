/// The width help text is wrapped to.
public let helpWidth = 80

/// Help columns: option labels start at column 2; descriptions start after the widest label, but never further
/// right than this, so a long label puts its description on the next line instead of squeezing it.
private let widestLabelColumn = 26

extension Program {
    /// `USAGE: clubroom <command> [<options>]`.
    public var usage: String {
        "USAGE: \(name) <command> [<options>]"
    }

    /// The usage line of one command, wrapped at 80 columns.
    public func usage(for command: Command) -> String {
        var parts = command.positionals.map { $0.isRequired ? $0.synopsis : "[\($0.synopsis)]" }
        parts += command.options.filter(\.isRequired).map(\.synopsis)
        if command.options.contains(where: { !$0.isRequired }) { parts.append("[<options>]") }
        let lead = "USAGE: \(name) \(command.name)"
        return wrapWords(parts, width: helpWidth, firstLine: lead, indent: lead.count + 1).joined(separator: "\n")
    }

    /// The program's help: what it is, the commands, and how to get more.
    public var helpText: String {
        var lines = ["OVERVIEW: \(abstract)", "", usage, "", "COMMANDS:"]
        lines += columns(commands.map { ($0.name, $0.abstract) })
        lines += ["", "OPTIONS:"]
        lines += columns([("-h, --help", "Show this help."), ("    --version", "Show the version.")])
        lines += ["", "See '\(name) help <command>' for a command's options."]
        return lines.joined(separator: "\n") + "\n"
    }

    /// A command's help: overview, discussion, usage, arguments and options with their defaults.
    public func helpText(for command: Command) -> String {
        var lines = ["OVERVIEW: \(command.abstract)"]
        for paragraph in paragraphs(command.discussion) {
            lines.append("")
            lines += wrap(paragraph, width: helpWidth)
        }
        lines += ["", usage(for: command)]
        if !command.positionals.isEmpty {
            lines += ["", "ARGUMENTS:"]
            lines += columns(command.positionals.map { ($0.synopsis, describe($0)) })
        }
        lines += ["", "OPTIONS:"]
        let anyShort = command.allOptions.contains { $0.short != nil }
        lines += columns(command.allOptions.map { (label($0, alignLongNames: anyShort), describe($0)) })
        return lines.joined(separator: "\n") + "\n"
    }
}

private func label(_ option: Option, alignLongNames: Bool) -> String {
    if let short = option.short { return "-\(short), \(option.synopsis)" }
    return alignLongNames ? "    \(option.synopsis)" : option.synopsis
}

private func describe(_ option: Option) -> String {
    var text = option.help
    if option.isRequired {
        text += " (required)"
    } else if let shown = option.defaultValue ?? option.defaultDescription {
        text += " " + unbreakable("(default: \(shown))")
    }
    if case .value(_, .choice(let words)) = option.kind {
        text += " (values: \(words.joined(separator: ", ")))"
    }
    return text
}

private func describe(_ positional: Positional) -> String {
    var text = positional.help
    if case .choice(let words) = positional.type { text += " (values: \(words.joined(separator: ", ")))" }
    return text
}

/// Two aligned columns, indented by two spaces, with the right column wrapped under itself.
private func columns(_ rows: [(String, String)]) -> [String] {
    let widest = rows.map(\.0.count).max() ?? 0
    let column = 2 + min(widest, widestLabelColumn) + 2
    var lines: [String] = []
    for (left, right) in rows {
        let wrapped = wrap(right, width: helpWidth - column).map { $0.replacingNoBreakSpaces() }
        let pad = String(repeating: " ", count: column)
        if left.count + 4 <= column {
            let first = "  " + left + String(repeating: " ", count: column - 2 - left.count) + (wrapped.first ?? "")
            lines.append(first)
            lines += wrapped.dropFirst().map { pad + $0 }
        } else {
            lines.append("  " + left)
            lines += wrapped.map { pad + $0 }
        }
    }
    return lines
}

/// Joins words with no-break spaces so that wrapping keeps them on one line, as in `(default: 1h)`.
private func unbreakable(_ text: String) -> String {
    String(text.map { $0 == " " ? noBreakSpace : $0 })
}

private let noBreakSpace: Character = "\u{00A0}"

extension String {
    fileprivate func replacingNoBreakSpaces() -> String {
        String(map { $0 == noBreakSpace ? " " : $0 })
    }
}

private func paragraphs(_ text: String) -> [String] {
    var result: [String] = []
    var current: [Substring] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.allSatisfy(\.isWhitespace) {
            if !current.isEmpty { result.append(current.joined(separator: " ")) }
            current = []
        } else {
            current.append(line)
        }
    }
    if !current.isEmpty { result.append(current.joined(separator: " ")) }
    return result
}

/// Wraps text at spaces into lines of at most `width` characters; a word longer than that stands alone.
func wrap(_ text: String, width: Int) -> [String] {
    let words = text.split(separator: " ").map(String.init)
    guard let first = words.first else { return [""] }
    return wrapWords(Array(words.dropFirst()), width: width, firstLine: first, indent: 0)
}

private func wrapWords(_ words: [String], width: Int, firstLine: String, indent: Int) -> [String] {
    var lines: [String] = []
    var line = firstLine
    var lineHasWord = !firstLine.isEmpty
    let pad = String(repeating: " ", count: indent)
    for word in words {
        if !lineHasWord {
            line += word
        } else if line.count + 1 + word.count <= width {
            line += " " + word
        } else {
            lines.append(line)
            line = pad + word
        }
        lineHasWord = true
    }
    lines.append(line)
    return lines
}
