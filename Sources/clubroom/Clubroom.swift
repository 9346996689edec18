import Arguments

/// The version `clubroom --version` prints.
let clubroomVersion = "0.1.0"

/// A `clubroom` subcommand: its declaration for the parser, and what it does.
///
/// Each command lives in its own file under `Commands/`. When a feature lands, its `run` is replaced; the
/// declaration and the typed options stay the contract between the command line and the feature.
protocol ClubroomCommand: Sendable {
    /// Name, help and options, as the parser and the help text see them.
    static var declaration: Command { get }
    /// Does the work. Returns the exit status; throws what went wrong, for `report(_:command:)` to show.
    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus
}

/// The commands, in the order `clubroom --help` lists them.
let clubroomCommands: [any ClubroomCommand.Type] = [
    ServeCommand.self, JoinCommand.self, RoomsCommand.self, InviteCommand.self, LinksCommand.self, BansCommand.self,
    BotCommand.self, RecordCommand.self,
    TokenCommand.self,
    DemoCommand.self, DevicesCommand.self, BenchCommand.self,
]

/// The whole command line, as declared.
let clubroomProgram = Program(
    name: "clubroom", version: clubroomVersion, abstract: "Audio rooms in the terminal.",
    commands: clubroomCommands.map { $0.declaration })

/// A process exit status. 0 success, 1 failure (including a feature not in this build), 2 usage error.
struct ExitStatus: RawRepresentable, Equatable, Sendable {
    var rawValue: Int32

    static let success = ExitStatus(rawValue: 0)
    static let failure = ExitStatus(rawValue: 1)
    static let usage = ExitStatus(rawValue: 2)
}

/// Runs the command line and returns the exit status; everything a person reads goes through here.
func runClubroom(_ words: [String]) async -> ExitStatus {
    assert(clubroomProgram.declarationProblems.isEmpty, "\(clubroomProgram.declarationProblems)")
    let invocation: Program.Invocation
    do {
        invocation = try clubroomProgram.parse(words)
    } catch {
        let shown = report(error, command: error.command)
        writeError(shown.text)
        return shown.status
    }
    switch invocation {
    case .programHelp:
        writeOutput(clubroomProgram.helpText)
        return .success
    case .commandHelp(let command):
        writeOutput(clubroomProgram.helpText(for: command))
        return .success
    case .version:
        writeOutput("clubroom \(clubroomProgram.version)\n")
        return .success
    case .run(let command, let arguments):
        guard let implementation = clubroomCommands.first(where: { $0.declaration.name == command.name }) else {
            return .failure
        }
        do {
            return try await implementation.run(arguments)
        } catch {
            let shown = report(error, command: command)
            writeError(shown.text)
            return shown.status
        }
    }
}
