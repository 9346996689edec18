import RoomTesting
import Testing

/// Every command `clubroom --help` lists.
let commandNames = ["serve", "join", "rooms", "invite", "links", "bans", "bot", "token", "demo", "devices", "bench"]

@Test func unknownCommandIsAUsageError() throws {
    let result = try runClubroom(["sevre"])
    #expect(result.status == 2)
    #expect(result.firstErrorLine == "clubroom: unknown command 'sevre' (did you mean 'serve'?)")
    #expect(result.standardError.contains("\nUSAGE: clubroom <command> [<options>]\n"))
    #expect(result.standardOutput.isEmpty)
}

@Test func unknownOptionSuggestsTheClosest() throws {
    let result = try runClubroom(["serve", "--lisen", "127.0.0.1:0"])
    #expect(result.status == 2)
    #expect(result.firstErrorLine == "clubroom serve: unknown option '--lisen' (did you mean '--listen'?)")
    #expect(
        result.standardError == """
            clubroom serve: unknown option '--lisen' (did you mean '--listen'?)
            USAGE: clubroom serve [<options>]
            See 'clubroom serve --help'.

            """)
}

@Test func missingValueIsAUsageError() throws {
    let result = try runClubroom(["serve", "--listen"])
    #expect(result.status == 2)
    #expect(result.firstErrorLine == "clubroom serve: missing value for '--listen' (expected HOST:PORT)")
}

@Test(arguments: [
    (
        ["token", "--room", "r", "--identity", "i", "--role", "host", "--ttl", "5x"],
        "clubroom token: bad value '5x' for '--ttl' (expected a positive duration such as 30s, 5m or 1h)"
    ),
    (
        ["bench", "fanout", "--speakers", "0"],
        "clubroom bench: bad value '0' for '--speakers' (expected a whole number from 1 to 100)"
    ),
    (
        ["bench", "everything"],
        "clubroom bench: bad value 'everything' for '<suite>' (expected one of store, join, departures, soak, fanout, latency, loss, cpu, ui, highlight, directory, quality-path, requests, failover, checkpoint, faults, record, stream)"
    ),
    (
        ["join", "http://example.org", "--token", "t"],
        "clubroom join: bad value 'http://example.org' for '<url>' (expected a ws:// or wss:// URL such as ws://127.0.0.1:7480/rooms/lobby)"
    ),
    (["bot", "ws://127.0.0.1:1/rooms/a"], "clubroom bot: missing option '--token TOKEN'"),
    (
        ["bot", "ws://127.0.0.1:1/rooms/a", "--token", "t", "--tone", "440", "--input", "tone:440"],
        "clubroom bot: '--tone' and '--input' cannot be used together"
    ),
    (
        ["invite", "ws://127.0.0.1:7480", "--ttl", "36500d"],
        "clubroom invite: bad value '36500d' for '--ttl' (expected a lifetime from 1m to 30d, as for /link)"
    ),
    (
        ["join", "ws://127.0.0.1:1/rooms/a", "--link-file", "link"],
        "clubroom join: '<url>' and '--link-file' cannot be used together"
    ),
    (["serve", "--tls-cert", "c.pem"], "clubroom serve: '--tls-cert' needs '--tls-key FILE' as well"),
    (["bench", "store", "--clients", "5"], "clubroom bench: '--clients' does not apply to 'bench store'"),
    (["bench", "store", "--nodes", "3"], "clubroom bench: '--nodes' does not apply to 'bench store'"),
    (
        ["bench", "fanout", "--nodes", "0"],
        "clubroom bench: bad value '0' for '--nodes' (expected a whole number from 1 to 16)"
    ),
    (["devices", "now"], "clubroom devices: unexpected argument 'now'"),
    (
        ["record", "ws://127.0.0.1:1/rooms/a", "--seconds", "5"],
        "clubroom record: missing option '--out FILE.opus', or a stream: '--icecast URL', '--hls DIR' or '--rtmp URL'"
    ),
])
func badCommandLinesAreUsageErrors(arguments: [String], firstLine: String) throws {
    let result = try runClubroom(arguments)
    #expect(result.status == 2)
    #expect(result.firstErrorLine == firstLine)
    #expect(result.standardError.split(separator: "\n").count == 3)
}

@Test(arguments: commandNames)
func commandHelpGoesToStdout(command: String) throws {
    for arguments in [[command, "--help"], [command, "-h"], ["help", command]] {
        let result = try runClubroom(arguments)
        #expect(result.status == 0)
        #expect(result.standardOutput.hasPrefix("OVERVIEW: "))
        #expect(result.standardOutput.contains("\nUSAGE: clubroom \(command)"))
        #expect(result.standardOutput.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(result.standardError.isEmpty)
    }
}

@Test func programHelpListsEveryCommand() throws {
    let result = try runClubroom(["--help"])
    #expect(result.status == 0)
    #expect(result.standardOutput.hasPrefix("OVERVIEW: Audio rooms in the terminal.\n"))
    for command in commandNames {
        #expect(result.standardOutput.contains("\n  \(command) "))
    }
}

@Test func versionPrintsOneLine() throws {
    let result = try runClubroom(["--version"])
    #expect(result.status == 0)
    #expect(result.standardOutput == "clubroom 0.1.0\n")
}

@Test func devicesListsPCMsWithoutAlsaNoise() throws {
    let result = try runClubroom(["devices"])
    #expect(result.status == 0)
    #expect(result.standardOutput.contains("null  (input and output)\n"))
    #expect(result.standardOutput.contains("Choose devices with --input NAME and --output NAME"))
    #expect(result.standardError.isEmpty)
}

/// A bot's `--input` is parsed as join's is, and a bot has no sound card: each refusal is one sentence, before it
/// connects (nothing listens on port 1).
@Test(arguments: [
    ("default", "clubroom bot: --input 'default': a bot has no sound card; give tone:HZ, wav:PATH or silence"),
    (
        "tone:5",
        "clubroom bot: --input 'tone:5': '5' is not a tone frequency; use tone:HZ with a whole number of hertz from 20 "
            + "to 20000"
    ),
    ("wav:/nonexistent/a.wav", "clubroom bot: --input 'wav:/nonexistent/a.wav': /nonexistent/a.wav cannot be read"),
])
func aBotsInputIsADeviceSpecWithoutSoundCards(input: String, error: String) throws {
    let result = try runClubroom(["bot", "ws://127.0.0.1:1/rooms/a", "--token", "t", "--input", input])
    #expect(result.status == 1)
    #expect(result.standardError == error + "\n")
}

/// `rooms` given a room's link says which room it names, never the link itself: its invite is a secret.
@Test func roomsNeverEchoesARoomLinksInvite() throws {
    let result = try runClubroom(["rooms", "ws://127.0.0.1:9/rooms/jazz#invite=aaaa.bbbb.cccc"])
    #expect(result.status == 1)
    #expect(!result.standardError.contains("bbbb"))
    #expect(
        result.standardError
            == "clubroom rooms: That is the address of the room jazz; give the server's, such as ws://127.0.0.1:9.\n")
}
