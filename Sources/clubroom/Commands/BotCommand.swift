import Arguments
import Foundation
import RoomClient

/// `clubroom bot`: a headless client driven by JSON lines.
enum BotCommand: ClubroomCommand {
    static let declaration = Command(
        name: "bot", abstract: "Join a room headless, driven by JSON lines.",
        discussion: """
            Reads one JSON command per line on stdin and writes one JSON event per line on stdout, for scripts, \
            tests and demos. End of input leaves the room.
            """,
        positionals: [
            Positional(
                "url", type: .url(schemes: ["ws", "wss"]),
                help: "The room's address, such as ws://127.0.0.1:7480/rooms/lobby.")
        ],
        options: [
            .value("token", short: "t", placeholder: "TOKEN", required: true, help: "Access token for the room."),
            .flag("auto-accept", help: "Accept invitations to speak by itself."),
            .value("play", placeholder: "FILE.wav", type: .path, help: "Loop this WAV file as the microphone."),
            .value("tone", placeholder: "HZ", type: .integer(20...20_000), help: "Send a sine tone as the microphone."),
            .value(
                "record", placeholder: "OUT.wav", type: .path, help: "Record what the bot hears, mixed, to a WAV file."),
        ])

    /// What the bot does, as given on the command line.
    struct Options: Equatable {
        /// What the bot sends as its microphone.
        enum Source: Equatable {
            case silence
            case file(String)
            case tone(hertz: Int)
        }

        var url: String
        var token: String
        var autoAccept: Bool
        var source: Source
        var recording: String?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            url = arguments.string("url") ?? ""
            token = arguments.string("token") ?? ""
            autoAccept = arguments.flag("auto-accept")
            recording = arguments.path("record")
            switch (arguments.path("play"), arguments.integer("tone")) {
            case (.some, .some): throw .conflict("--play", "--tone")
            case (.some(let file), nil): source = .file(file)
            case (nil, .some(let hertz)): source = .tone(hertz: hertz)
            case (nil, nil): source = .silence
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        if options.source != .silence || options.recording != nil {
            throw CommandFailure.notAvailable("--play, --tone and --record need audio, which is not in this build yet")
        }
        signal(SIGPIPE, SIG_IGN)
        let bot = BotRunner(
            url: options.url, token: options.token, behaviour: BotRunner.Behaviour(autoAccept: options.autoAccept),
            output: { line in writeOutput(line + "\n") })
        let status = await Task.detached { bot.run(input: { readLine(strippingNewline: true) }) }.value
        return ExitStatus(rawValue: status.rawValue)
    }
}
