/// A program with subcommands, such as `clubroom serve`.
public struct Program: Sendable, Equatable {
    /// The name people type: `clubroom`.
    public var name: String
    /// The version `--version` prints.
    public var version: String
    /// One line saying what the program is.
    public var abstract: String
    /// The subcommands, in the order help lists them.
    public var commands: [Command]

    /// Creates a program declaration.
    public init(name: String, version: String, abstract: String, commands: [Command]) {
        self.name = name
        self.version = version
        self.abstract = abstract
        self.commands = commands
    }

    /// What a command line asks for.
    public enum Invocation: Sendable, Equatable {
        /// The program's help: `clubroom`, `clubroom --help`, `clubroom help`.
        case programHelp
        /// A command's help: `clubroom help serve`, `clubroom serve --help`.
        case commandHelp(Command)
        /// `clubroom --version`.
        case version
        /// Run a command with these arguments.
        case run(Command, ParsedArguments)
    }

    /// Parses the words after the program's name.
    public func parse(_ words: [String]) throws(UsageError) -> Invocation {
        guard let first = words.first else { return .programHelp }
        let rest = Array(words.dropFirst())
        switch first {
        case "--help", "-h":
            return .programHelp
        case "--version":
            return .version
        case "help":
            guard let topic = rest.first else { return .programHelp }
            let command = try command(named: topic)
            if rest.count > 1 { throw UsageError(command: nil, problem: .unexpectedArgument(rest[1])) }
            return .commandHelp(command)
        default:
            break
        }
        if first.hasPrefix("-") {
            let suggestion = closestMatch(to: first, among: ["--help", "--version"])
            throw UsageError(command: nil, problem: .unknownOption(first, suggestion: suggestion))
        }
        let command = try command(named: first)
        if command.asksForHelp(rest) { return .commandHelp(command) }
        do {
            return .run(command, try command.parse(rest))
        } catch {
            throw UsageError(command: command, problem: error)
        }
    }

    private func command(named name: String) throws(UsageError) -> Command {
        if let command = commands.first(where: { $0.name == name }) { return command }
        let suggestion = closestMatch(to: name, among: commands.map(\.name))
        throw UsageError(command: nil, problem: .unknownCommand(name, suggestion: suggestion))
    }
}
