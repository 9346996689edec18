extension Command {
    /// Parses the words after the command name.
    ///
    /// Options may come before, between or after positional arguments; `--` ends options, so every later word
    /// is positional. A value is given as `--name VALUE`, `--name=VALUE` or `-n VALUE`. Given twice, the last
    /// value wins (`ParsedArguments.every` keeps them all, for an option that may be repeated). `--help` parses as the flag `help`; `Program.parse` looks for it first, before any error.
    public func parse(_ words: [String]) throws(ArgumentError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var positionalWords: [String] = []
        var index = 0
        var optionsEnded = false

        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                positionalWords.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            let (spelling, inlineValue) = splitInlineValue(word)
            let option = try lookUp(spelling)
            switch option.kind {
            case .flag:
                if inlineValue != nil { throw .unexpectedValue(option: option.spelling) }
                parsed.flags.insert(option.name)
            case .value(let placeholder, let type):
                let text: String
                if let inlineValue {
                    text = inlineValue
                } else if index < words.count, !looksLikeOption(words[index]) {
                    text = words[index]
                    index += 1
                } else {
                    throw .missingValue(option: option.spelling, placeholder: placeholder)
                }
                guard let value = type.parse(text) else {
                    throw .badValue(argument: option.spelling, value: text, expected: type.expected)
                }
                parsed.values[option.name] = value
                parsed.every[option.name, default: []].append(value)
                parsed.given.insert(option.name)
            }
        }

        for (position, positional) in positionals.enumerated() {
            guard position < positionalWords.count else {
                if positional.isRequired { throw .missingPositional(positional.synopsis) }
                continue
            }
            let text = positionalWords[position]
            guard let value = positional.type.parse(text) else {
                throw .badValue(argument: positional.synopsis, value: text, expected: positional.type.expected)
            }
            parsed.values[positional.name] = value
            parsed.given.insert(positional.name)
        }
        if positionalWords.count > positionals.count {
            throw .unexpectedArgument(positionalWords[positionals.count])
        }

        for option in options where !parsed.given.contains(option.name) {
            guard case .value(let placeholder, let type) = option.kind else { continue }
            if option.isRequired { throw .missingOption(synopsis: "\(option.spelling) \(placeholder)") }
            if let defaultValue = option.defaultValue, let value = type.parse(defaultValue) {
                parsed.values[option.name] = value
            }
        }
        return parsed
    }

    /// Whether the words ask for help before `--`.
    public func asksForHelp(_ words: [String]) -> Bool {
        for word in words {
            if word == "--" { return false }
            if word == "--help" || word == "-h" { return true }
        }
        return false
    }

    private func lookUp(_ spelling: String) throws(ArgumentError) -> Option {
        if spelling.hasPrefix("--") {
            let name = String(spelling.dropFirst(2))
            if let option = allOptions.first(where: { $0.name == name }) { return option }
        } else if spelling.count == 2, let letter = spelling.last,
            let option = allOptions.first(where: { $0.short == letter })
        {
            return option
        }
        let candidates = allOptions.map(\.spelling)
        throw .unknownOption(spelling, suggestion: closestMatch(to: spelling, among: candidates))
    }
}

/// Splits `--name=value` into its two halves; a word without `=` has no inline value.
private func splitInlineValue(_ word: String) -> (String, String?) {
    guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
    return (String(word[..<equals]), String(word[word.index(after: equals)...]))
}

/// A word that starts like an option is not taken as the previous option's value, so `--data --listen x`
/// reports the missing value rather than storing data in a directory called `--listen`. A negative number
/// is still a value.
private func looksLikeOption(_ word: String) -> Bool {
    guard word.hasPrefix("-"), word.count > 1 else { return false }
    return !(word.dropFirst().first?.isNumber ?? false)
}
