/// The values of one parsed command line, with defaults filled in, read by name.
public struct ParsedArguments: Sendable, Equatable {
    /// Option and positional values by name, including defaults.
    public var values: [String: Value]
    /// The flags that were given.
    public var flags: Set<String>
    /// The names of the options and positionals that were given on the command line (not defaulted).
    public var given: Set<String>
    /// Every value an option was given, in order, for options that may be repeated (`--stream A --stream B`).
    public var every: [String: [Value]] = [:]

    /// Creates parsed arguments; the parser is the usual source.
    public init(values: [String: Value] = [:], flags: Set<String> = [], given: Set<String> = []) {
        self.values = values
        self.flags = flags
        self.given = given
    }

    /// Whether the flag was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Whether the option, flag or positional was typed rather than defaulted.
    public func isGiven(_ name: String) -> Bool { given.contains(name) || flags.contains(name) }

    /// Every text a repeatable `.string` option was given, in order.
    public func strings(_ name: String) -> [String] {
        (every[name] ?? []).compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    /// The text of a `.string` or `.url` value.
    public func string(_ name: String) -> String? {
        if case .string(let text)? = values[name] { return text }
        return nil
    }

    /// The whole number of an `.integer` value.
    public func integer(_ name: String) -> Int? {
        if case .integer(let number)? = values[name] { return number }
        return nil
    }

    /// The duration of a `.duration` value.
    public func duration(_ name: String) -> Duration? {
        if case .duration(let duration)? = values[name] { return duration }
        return nil
    }

    /// The host and port of an `.endpoint` value.
    public func endpoint(_ name: String) -> Endpoint? {
        if case .endpoint(let endpoint)? = values[name] { return endpoint }
        return nil
    }

    /// The path of a `.path` value.
    public func path(_ name: String) -> String? {
        if case .path(let path)? = values[name] { return path }
        return nil
    }

    /// The word chosen for a `.choice` value.
    public func choice(_ name: String) -> String? {
        if case .choice(let word)? = values[name] { return word }
        return nil
    }
}
