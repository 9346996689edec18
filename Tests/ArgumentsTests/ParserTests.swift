import Arguments
import Testing

/// A command with one of everything, used by the parser and help tests.
let sample = Command(
    name: "serve", abstract: "Run a room server.",
    discussion: """
        Serves rooms over WebSocket. People join with a token signed by the server's secret, which is created \
        when missing.

        Logs go to stderr.
        """,
    positionals: [Positional("room", type: .choice(["lobby", "stage"]), required: false, help: "Room to open.")],
    options: [
        .value(
            "listen", short: "l", placeholder: "HOST:PORT", type: .endpoint, default: "127.0.0.1:7480",
            help: "Address to listen on."),
        .value("peers", placeholder: "N", type: .integer(1...10_000), default: "100", help: "Most peers in a room."),
        .value("ttl", placeholder: "DURATION", type: .duration, help: "How long tokens stay valid."),
        .value(
            "data", placeholder: "DIR", type: .path, defaultDescription: "$XDG_DATA_HOME/clubroom",
            help: "Where the database lives, created when missing with the directories above it."),
        .value("secret", placeholder: "TEXT", required: true, help: "Signing secret."),
        .flag("verbose", short: "v", help: "Log every message."),
    ])

let program = Program(
    name: "clubroom", version: "1.2.3", abstract: "Audio rooms in the terminal.",
    commands: [sample, Command(name: "devices", abstract: "List audio devices.")])

@Test func parsesOptionsInEveryFormWithDefaults() throws {
    let parsed = try sample.parse(["--secret", "s3", "-l", "[::1]:80", "--peers=42", "stage", "-v", "--ttl", "1h30m"])
    #expect(parsed.endpoint("listen") == Endpoint(host: "::1", port: 80))
    #expect(parsed.integer("peers") == 42)
    #expect(parsed.duration("ttl") == .seconds(5400))
    #expect(parsed.string("secret") == "s3")
    #expect(parsed.choice("room") == "stage")
    #expect(parsed.flag("verbose"))
    #expect(parsed.path("data") == nil)
    #expect(parsed.isGiven("peers"))
}

@Test func fillsDefaultsAndMarksThemNotGiven() throws {
    let parsed = try sample.parse(["--secret", "x"])
    #expect(parsed.endpoint("listen") == Endpoint(host: "127.0.0.1", port: 7480))
    #expect(parsed.integer("peers") == 100)
    #expect(!parsed.isGiven("listen"))
    #expect(!parsed.flag("verbose"))
    #expect(parsed.choice("room") == nil)
}

@Test func lastValueWinsAndDoubleDashEndsOptions() throws {
    let parsed = try sample.parse(["--peers", "1", "--peers", "2", "--secret", "x", "--", "lobby"])
    #expect(parsed.integer("peers") == 2)
    #expect(parsed.choice("room") == "lobby")
    #expect(throws: ArgumentError.badValue(argument: "<room>", value: "--verbose", expected: "one of lobby, stage")) {
        try sample.parse(["--secret", "x", "--", "--verbose"])
    }
}

@Test func unknownOptionSuggestsTheClosest() {
    #expect(throws: ArgumentError.unknownOption("--lisen", suggestion: "--listen")) {
        try sample.parse(["--lisen", "a:1"])
    }
    #expect(throws: ArgumentError.unknownOption("--verbsoe", suggestion: "--verbose")) {
        try sample.parse(["--verbsoe"])
    }
    #expect(throws: ArgumentError.unknownOption("--zzz", suggestion: nil)) { try sample.parse(["--zzz"]) }
    #expect(throws: ArgumentError.unknownOption("-x", suggestion: nil)) { try sample.parse(["-x"]) }
}

@Test func missingValueAtTheEndOrBeforeAnotherOption() {
    #expect(throws: ArgumentError.missingValue(option: "--listen", placeholder: "HOST:PORT")) {
        try sample.parse(["--listen"])
    }
    #expect(throws: ArgumentError.missingValue(option: "--peers", placeholder: "N")) {
        try sample.parse(["--peers", "--verbose"])
    }
}

@Test func badValuesSayWhatWasExpected() {
    #expect(throws: ArgumentError.badValue(argument: "--peers", value: "0", expected: "a whole number from 1 to 10000"))
    {
        try sample.parse(["--peers", "0"])
    }
    #expect(
        throws: ArgumentError.badValue(argument: "--peers", value: "ten", expected: "a whole number from 1 to 10000")
    ) {
        try sample.parse(["--peers=ten"])
    }
    let duration = "a positive duration such as 30s, 5m or 1h"
    for text in ["30", "5x", "0s", "m", "", "1h3"] {
        #expect(throws: ArgumentError.badValue(argument: "--ttl", value: text, expected: duration)) {
            try sample.parse(["--ttl=\(text)"])
        }
    }
    let endpoint = "HOST:PORT with a port from 0 to 65535"
    for text in ["localhost", ":80", "host:", "host:70000", "::1:80", "a b:1", "[]:1"] {
        #expect(throws: ArgumentError.badValue(argument: "--listen", value: text, expected: endpoint)) {
            try sample.parse(["--listen=\(text)"])
        }
    }
    #expect(throws: ArgumentError.badValue(argument: "<room>", value: "hall", expected: "one of lobby, stage")) {
        try sample.parse(["--secret", "x", "hall"])
    }
}

@Test func durationsAddTheirParts() throws {
    let cases: [(String, Duration)] = [
        ("500ms", .milliseconds(500)), ("30s", .seconds(30)), ("5m", .seconds(300)), ("1h", .seconds(3600)),
        ("2d", .seconds(172_800)), ("1m30s", .seconds(90)),
    ]
    for (text, duration) in cases {
        #expect(ValueType.duration.parse(text) == .duration(duration))
    }
}

@Test func urlsNeedAnAllowedSchemeAndAHost() {
    let type = ValueType.url(schemes: ["ws", "wss"])
    #expect(type.parse("ws://127.0.0.1:7480/rooms/lobby") == .string("ws://127.0.0.1:7480/rooms/lobby"))
    #expect(type.parse("wss://example.org/rooms/a") == .string("wss://example.org/rooms/a"))
    #expect(type.parse("http://example.org/") == nil)
    #expect(type.parse("ws:///rooms/a") == nil)
    #expect(type.expected == "a ws:// or wss:// URL such as ws://127.0.0.1:7480/rooms/lobby")
}

@Test func helpParsesAsAFlag() throws {
    #expect(try sample.parse(["--secret", "x", "-h"]).flag("help"))
}

@Test func flagsTakeNoValue() {
    #expect(throws: ArgumentError.unexpectedValue(option: "--verbose")) { try sample.parse(["--verbose=yes"]) }
}

@Test func missingRequiredPositionalAndOption() {
    let command = Command(name: "join", abstract: "Join.", positionals: [Positional("url", help: "Where.")])
    #expect(throws: ArgumentError.missingPositional("<url>")) { try command.parse([]) }
    #expect(throws: ArgumentError.missingOption(synopsis: "--secret TEXT")) { try sample.parse(["-v"]) }
}

@Test func leftoverWordsAreUnexpected() {
    #expect(throws: ArgumentError.unexpectedArgument("extra")) {
        try sample.parse(["--secret", "x", "lobby", "extra"])
    }
}

@Test func everyErrorIsOneLine() {
    let errors: [ArgumentError] = [
        .unknownCommand("sevre", suggestion: "serve"), .unknownOption("--lisen", suggestion: "--listen"),
        .missingValue(option: "--listen", placeholder: "HOST:PORT"),
        .badValue(argument: "--peers", value: "0", expected: "a whole number from 1 to 10000"),
        .unexpectedValue(option: "--json"), .missingPositional("<url>"), .missingOption(synopsis: "--room ROOM"),
        .unexpectedArgument("extra"), .conflict("--play", "--tone"),
        .needs(option: "--tls-cert", needed: "--tls-key FILE"),
        .notApplicable(option: "--clients", context: "'bench store'"),
    ]
    let messages = errors.map(\.message)
    #expect(
        messages == [
            "unknown command 'sevre' (did you mean 'serve'?)",
            "unknown option '--lisen' (did you mean '--listen'?)",
            "missing value for '--listen' (expected HOST:PORT)",
            "bad value '0' for '--peers' (expected a whole number from 1 to 10000)",
            "'--json' does not take a value",
            "missing argument '<url>'",
            "missing option '--room ROOM'",
            "unexpected argument 'extra'",
            "'--play' and '--tone' cannot be used together",
            "'--tls-cert' needs '--tls-key FILE' as well",
            "'--clients' does not apply to 'bench store'",
        ])
    #expect(messages.allSatisfy { !$0.contains("\n") })
}

@Test func suggestionsNeedToBeClose() {
    #expect(closestMatch(to: "sevre", among: ["serve", "join", "bot"]) == "serve")
    #expect(closestMatch(to: "jion", among: ["serve", "join", "bot"]) == "join")
    #expect(closestMatch(to: "dev", among: ["demo", "devices"]) == "devices")
    #expect(closestMatch(to: "xyz", among: ["serve", "join", "bot"]) == nil)
    #expect(closestMatch(to: "serrve", among: ["serve", "join", "bot"]) == "serve")
    #expect(closestMatch(to: "servexx", among: ["serve", "join", "bot"]) == nil)
    #expect(closestMatch(to: String(repeating: "serve ", count: 2000), among: ["serve", "join", "bot"]) == nil)
}

/// A link typed where a command or another argument belongs is not repeated with its invite (the part after `#`).
@Test func aMistypedLinkIsRepeatedWithoutItsInvite() {
    let link = "wss://rooms.example.org/rooms/jazz#invite=eyJhbGciOiJIUzI1NiJ9.e30.c2ln"
    let messages = [
        ArgumentError.unknownCommand(link, suggestion: nil), .unexpectedArgument(link),
        .badValue(argument: "<url>", value: link, expected: "a link"),
    ].map(\.message)
    #expect(
        messages == [
            "unknown command 'wss://rooms.example.org/rooms/jazz#…'",
            "unexpected argument 'wss://rooms.example.org/rooms/jazz#…'",
            "bad value 'wss://rooms.example.org/rooms/jazz#…' for '<url>' (expected a link)",
        ])
    #expect(messages.allSatisfy { !$0.contains("eyJ") })
}
