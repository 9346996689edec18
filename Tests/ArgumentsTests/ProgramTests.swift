import Testing

@testable import Arguments

@Test func programRecognisesHelpVersionAndCommands() throws {
    #expect(try program.parse([]) == .programHelp)
    #expect(try program.parse(["--help"]) == .programHelp)
    #expect(try program.parse(["-h"]) == .programHelp)
    #expect(try program.parse(["help"]) == .programHelp)
    #expect(try program.parse(["--version"]) == .version)
    #expect(try program.parse(["help", "serve"]) == .commandHelp(sample))
    #expect(try program.parse(["serve", "--peers", "bad", "--help"]) == .commandHelp(sample))
    #expect(try program.parse(["devices"]) == .run(program.commands[1], ParsedArguments()))
}

@Test func programErrorsNameTheCommandTheyConcern() {
    #expect(throws: UsageError(command: nil, problem: .unknownCommand("sevre", suggestion: "serve"))) {
        try program.parse(["sevre"])
    }
    #expect(throws: UsageError(command: nil, problem: .unknownCommand("nope", suggestion: nil))) {
        try program.parse(["help", "nope"])
    }
    #expect(throws: UsageError(command: nil, problem: .unknownOption("--verison", suggestion: "--version"))) {
        try program.parse(["--verison"])
    }
    #expect(throws: UsageError(command: sample, problem: .unknownOption("--lisen", suggestion: "--listen"))) {
        try program.parse(["serve", "--lisen", "x:1"])
    }
    #expect(throws: UsageError(command: sample, problem: .unknownOption("--help2", suggestion: "--help"))) {
        try program.parse(["serve", "--secret", "x", "--help2"])
    }
}

@Test func sampleCommandHelpText() {
    let expected = """
        OVERVIEW: Run a room server.

        Serves rooms over WebSocket. People join with a token signed by the server's
        secret, which is created when missing.

        Logs go to stderr.

        USAGE: clubroom serve [<room>] --secret TEXT [<options>]

        ARGUMENTS:
          <room>  Room to open. (values: lobby, stage)

        OPTIONS:
          -l, --listen HOST:PORT  Address to listen on. (default: 127.0.0.1:7480)
              --peers N           Most peers in a room. (default: 100)
              --ttl DURATION      How long tokens stay valid.
              --data DIR          Where the database lives, created when missing with
                                  the directories above it.
                                  (default: $XDG_DATA_HOME/clubroom)
              --secret TEXT       Signing secret. (required)
          -v, --verbose           Log every message.
          -h, --help              Show this help.

        """
    #expect(program.helpText(for: sample) == expected)
}

@Test func programHelpText() {
    let expected = """
        OVERVIEW: Audio rooms in the terminal.

        USAGE: clubroom <command> [<options>]

        COMMANDS:
          serve    Run a room server.
          devices  List audio devices.

        OPTIONS:
          -h, --help     Show this help.
              --version  Show the version.

        See 'clubroom help <command>' for a command's options.

        """
    #expect(program.helpText == expected)
}

@Test func longUsageWrapsUnderTheCommand() {
    let options = (1...8).map { Option.value("option\($0)", placeholder: "VALUE", required: true, help: "An option.") }
    let command = Command(name: "wide", abstract: "Many options.", options: options)
    let usage = program.usage(for: command)
    #expect(
        usage == """
            USAGE: clubroom wide --option1 VALUE --option2 VALUE --option3 VALUE
                                 --option4 VALUE --option5 VALUE --option6 VALUE
                                 --option7 VALUE --option8 VALUE
            """)
    #expect(usage.split(separator: "\n").allSatisfy { $0.count <= 80 })
}

@Test func everyHelpLineFitsIn80Columns() {
    for line in program.helpText(for: sample).split(separator: "\n") {
        #expect(line.count <= 80, "\(line)")
    }
}

@Test func declarationProblemsAreFound() {
    #expect(program.declarationProblems == [])
    let broken = Command(
        name: "broken", abstract: "Broken.", positionals: [Positional("port", help: "A port.")],
        options: [
            .value("port", placeholder: "N", type: .integer(1...9), default: "10", help: "A port."),
            .flag("help", help: "Help again."),
            .value("when", short: "h", placeholder: "T", required: true, help: "When."),
        ])
    #expect(
        Program(name: "p", version: "1", abstract: "P.", commands: [broken, broken]).declarationProblems == [
            "broken: the default '10' of '--port' is not a whole number from 1 to 9",
            "broken: '--help' is declared twice",
            "broken: '-h' is declared twice",
            "broken: 'port' is declared twice",
            "the command 'broken' is declared twice",
            "broken: the default '10' of '--port' is not a whole number from 1 to 9",
            "broken: '--help' is declared twice",
            "broken: '-h' is declared twice",
            "broken: 'port' is declared twice",
        ])
}
