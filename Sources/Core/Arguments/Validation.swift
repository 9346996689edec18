extension Command {
    /// Mistakes in the declaration itself, one sentence each; empty when it is sound.
    ///
    /// Checked by tests and debug builds rather than at parse time, since a person cannot fix them: a default
    /// that does not parse as its own type, a name or short alias used twice (including `--help` and `-h`),
    /// and a required option with a default.
    public var declarationProblems: [String] {
        var problems: [String] = []
        var names: Set<String> = []
        var shorts: Set<Character> = []
        for option in allOptions {
            if !names.insert(option.name).inserted { problems.append("\(name): '--\(option.name)' is declared twice") }
            if let short = option.short, !shorts.insert(short).inserted {
                problems.append("\(name): '-\(short)' is declared twice")
            }
            if let defaultValue = option.defaultValue {
                if case .value(_, let type) = option.kind, type.parse(defaultValue) == nil {
                    problems.append(
                        "\(name): the default '\(defaultValue)' of '--\(option.name)' is not \(type.expected)")
                }
                if case .flag = option.kind { problems.append("\(name): the flag '--\(option.name)' has a default") }
                if option.isRequired { problems.append("\(name): '--\(option.name)' is required and has a default") }
            }
        }
        for positional in positionals where !names.insert(positional.name).inserted {
            problems.append("\(name): '\(positional.name)' is declared twice")
        }
        return problems
    }
}

extension Program {
    /// Mistakes in the program's declaration and its commands', one sentence each; empty when it is sound.
    public var declarationProblems: [String] {
        var problems: [String] = []
        var names: Set<String> = ["help"]
        for command in commands {
            if !names.insert(command.name).inserted {
                problems.append("the command '\(command.name)' is declared twice")
            }
            problems += command.declarationProblems
        }
        return problems
    }
}
