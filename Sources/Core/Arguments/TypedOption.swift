/// An option declared once with its type and default: the `Option` the parser and the help text see, and how a
/// command reads its value back as a Swift value (`arguments[maxPeers]` is an `Int`).
///
/// The default is given as a typed value and written into the declaration from that value, so what `--help` and
/// docs/cli.md show as the default is the value the command gets when the option is left out.
public struct TypedOption<Value: Sendable>: Sendable {
    /// The declaration, for `Command(options:)`.
    public let option: Option
    private let read: @Sendable (ParsedArguments) -> Value

    /// Declares `option` and how its value is read; the constructors below are the usual way in.
    public init(_ option: Option, read: @escaping @Sendable (ParsedArguments) -> Value) {
        self.option = option
        self.read = read
    }

    /// The value in `arguments`: the one given on the command line, or else the default.
    public func value(in arguments: ParsedArguments) -> Value { read(arguments) }
}

extension ParsedArguments {
    /// The typed value of a declared option: given or defaulted.
    public subscript<Value>(_ option: TypedOption<Value>) -> Value { option.value(in: self) }

    /// The value of the option when it was typed on the command line, nil when it was left out.
    public func ifGiven<Value>(_ option: TypedOption<Value>) -> Value? {
        isGiven(option.option.name) ? option.value(in: self) : nil
    }

    /// Whether the option was typed rather than defaulted.
    public func isGiven<Value>(_ option: TypedOption<Value>) -> Bool { isGiven(option.option.name) }
}

extension TypedOption where Value == Bool {
    /// A flag such as `--json`: true when given.
    public static func flag(_ name: String, short: Character? = nil, help: String) -> TypedOption {
        TypedOption(.flag(name, short: short, help: help)) { $0.flag(name) }
    }
}

extension TypedOption where Value == Int {
    /// A whole number in `range` with a default, shown in help as the number.
    public static func integer(
        _ name: String, placeholder: String, in range: ClosedRange<Int>, default defaultValue: Int, help: String
    ) -> TypedOption {
        TypedOption(
            .value(name, placeholder: placeholder, type: .integer(range), default: "\(defaultValue)", help: help)
        ) { $0.integer(name) ?? defaultValue }
    }
}

extension TypedOption where Value == Int? {
    /// A whole number in `range` with no default: nil when left out.
    public static func integer(
        _ name: String, placeholder: String, in range: ClosedRange<Int>, help: String
    ) -> TypedOption {
        TypedOption(.value(name, placeholder: placeholder, type: .integer(range), help: help)) { $0.integer(name) }
    }
}

extension TypedOption where Value == String {
    /// Text with a default.
    public static func string(
        _ name: String, short: Character? = nil, placeholder: String, default defaultValue: String, help: String
    ) -> TypedOption {
        TypedOption(.value(name, short: short, placeholder: placeholder, default: defaultValue, help: help)) {
            $0.string(name) ?? defaultValue
        }
    }

    /// Text that must be given: the parser refuses a command line without it, so the value is always there.
    public static func required(_ name: String, placeholder: String, help: String) -> TypedOption {
        TypedOption(.value(name, placeholder: placeholder, required: true, help: help)) { $0.string(name) ?? "" }
    }

    /// One of `words`, with a default that must be one of them.
    public static func choice(
        _ name: String, placeholder: String, _ words: [String], default defaultValue: String, help: String
    ) -> TypedOption {
        TypedOption(
            .value(name, placeholder: placeholder, type: .choice(words), default: defaultValue, help: help)
        ) { $0.choice(name) ?? defaultValue }
    }
}

extension TypedOption where Value == String? {
    /// Text with no default; `defaultDescription` says in help what happens without it.
    public static func string(
        _ name: String, short: Character? = nil, placeholder: String, defaultDescription: String? = nil,
        required: Bool = false, help: String
    ) -> TypedOption {
        TypedOption(
            .value(
                name, short: short, placeholder: placeholder, defaultDescription: defaultDescription,
                required: required, help: help)
        ) { $0.string(name) }
    }

    /// A URL whose scheme is one of `schemes`, with no default.
    public static func url(
        _ name: String, placeholder: String, schemes: [String], required: Bool = false, help: String
    ) -> TypedOption {
        TypedOption(
            .value(name, placeholder: placeholder, type: .url(schemes: schemes), required: required, help: help)
        ) { $0.string(name) }
    }

    /// A file or directory path with no default; `defaultDescription` says in help what is used without it.
    public static func path(
        _ name: String, short: Character? = nil, placeholder: String, defaultDescription: String? = nil,
        help: String
    ) -> TypedOption {
        TypedOption(
            .value(
                name, short: short, placeholder: placeholder, type: .path, defaultDescription: defaultDescription,
                help: help)
        ) { $0.path(name) }
    }

    /// One of `words`, with no default.
    public static func choice(
        _ name: String, placeholder: String, _ words: [String], defaultDescription: String? = nil, help: String
    ) -> TypedOption {
        TypedOption(
            .value(
                name, placeholder: placeholder, type: .choice(words), defaultDescription: defaultDescription,
                help: help)
        ) { $0.choice(name) }
    }
}

extension TypedOption where Value == Duration {
    /// A positive duration with a default, shown in help in the largest units that say it exactly (`7d`, `1h`).
    public static func duration(
        _ name: String, placeholder: String, default defaultValue: Duration, help: String
    ) -> TypedOption {
        TypedOption(
            .value(
                name, placeholder: placeholder, type: .duration, default: durationText(defaultValue), help: help)
        ) { $0.duration(name) ?? defaultValue }
    }
}

extension TypedOption where Value == Endpoint {
    /// `HOST:PORT` with a default.
    public static func endpoint(
        _ name: String, placeholder: String, default defaultValue: Endpoint, help: String
    ) -> TypedOption {
        TypedOption(
            .value(name, placeholder: placeholder, type: .endpoint, default: defaultValue.description, help: help)
        ) { $0.endpoint(name) ?? defaultValue }
    }
}

extension TypedOption where Value == Endpoint? {
    /// `HOST:PORT` with no default; `defaultDescription` says in help what is used without it.
    public static func endpoint(
        _ name: String, placeholder: String, defaultDescription: String? = nil, help: String
    ) -> TypedOption {
        TypedOption(
            .value(
                name, placeholder: placeholder, type: .endpoint, defaultDescription: defaultDescription, help: help)
        ) { $0.endpoint(name) }
    }
}

/// A duration as the option syntax writes it, in the largest units that say it exactly: `7d`, `1h30m`, `500ms`.
///
/// Parsing the result as a `.duration` gives `duration` back; zero and negative durations, which no option
/// accepts, are written as `0s`.
public func durationText(_ duration: Duration) -> String {
    let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    guard milliseconds > 0 else { return "0s" }
    let units: [(String, Int64)] = [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1)]
    var rest = milliseconds
    var text = ""
    for (unit, size) in units where rest >= size {
        text += "\(rest / size)\(unit)"
        rest %= size
    }
    return text
}
