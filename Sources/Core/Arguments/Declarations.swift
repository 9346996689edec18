/// A command-line option: a flag (`--json`) or an option with a value (`--listen HOST:PORT`).
public struct Option: Sendable, Equatable {
    /// Whether the option stands alone or takes a value.
    public enum Kind: Sendable, Equatable {
        /// Present or absent; it takes no value.
        case flag
        /// Takes one value, shown in help as `placeholder`.
        case value(placeholder: String, type: ValueType)
    }

    /// The long name without dashes: `listen` for `--listen`.
    public var name: String
    /// A one-letter alias used with one dash, such as `t` for `-t`.
    public var short: Character?
    /// Flag or value.
    public var kind: Kind
    /// One or two sentences for the help text.
    public var help: String
    /// The value used when the option is not given; it must parse as the option's type.
    public var defaultValue: String?
    /// Shown as the default in help when there is no literal default, e.g. `$XDG_DATA_HOME/clubroom`.
    public var defaultDescription: String?
    /// Whether leaving the option out is a usage error.
    public var isRequired: Bool

    /// A flag such as `--json`.
    public static func flag(_ name: String, short: Character? = nil, help: String) -> Option {
        Option(
            name: name, short: short, kind: .flag, help: help, defaultValue: nil, defaultDescription: nil,
            isRequired: false)
    }

    /// An option that takes a value, such as `--listen HOST:PORT`.
    public static func value(
        _ name: String, short: Character? = nil, placeholder: String, type: ValueType = .string,
        default defaultValue: String? = nil, defaultDescription: String? = nil, required: Bool = false,
        help: String
    ) -> Option {
        Option(
            name: name, short: short, kind: .value(placeholder: placeholder, type: type), help: help,
            defaultValue: defaultValue, defaultDescription: defaultDescription, isRequired: required)
    }

    /// `--name`, as a person types it.
    public var spelling: String { "--\(name)" }

    /// `--name PLACEHOLDER` for a value option, `--name` for a flag.
    public var synopsis: String {
        switch kind {
        case .flag: return spelling
        case .value(let placeholder, _): return "\(spelling) \(placeholder)"
        }
    }
}

/// A positional argument, such as the URL of `clubroom join URL`.
public struct Positional: Sendable, Equatable {
    /// The key the parsed value is stored under, also shown in help as `<name>`.
    public var name: String
    /// What the value must look like.
    public var type: ValueType
    /// One or two sentences for the help text.
    public var help: String
    /// Whether leaving it out is a usage error.
    public var isRequired: Bool

    /// Creates a positional argument.
    public init(_ name: String, type: ValueType = .string, required: Bool = true, help: String) {
        self.name = name
        self.type = type
        self.help = help
        self.isRequired = required
    }

    /// `<name>`, as shown in usage and errors.
    public var synopsis: String { "<\(name)>" }
}

/// A subcommand's declaration: everything the parser checks and the help text shows.
public struct Command: Sendable, Equatable {
    /// The word that selects the command: `serve`.
    public var name: String
    /// One line saying what the command does, shown in the command list.
    public var abstract: String
    /// Paragraphs shown in the command's help, separated by blank lines.
    public var discussion: String
    /// Positional arguments, in order.
    public var positionals: [Positional]
    /// Options and flags, in the order help lists them; `--help` is added by the parser.
    public var options: [Option]

    /// Creates a command declaration.
    public init(
        name: String, abstract: String, discussion: String = "", positionals: [Positional] = [],
        options: [Option] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.positionals = positionals
        self.options = options
    }

    /// The `--help` flag every command accepts.
    public static let helpOption = Option.flag("help", short: "h", help: "Show this help.")

    /// The options help lists: the declared ones, then `--help`.
    public var allOptions: [Option] { options + [Command.helpOption] }
}
