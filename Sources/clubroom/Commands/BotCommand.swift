import Arguments
import AudioCodec
import ClientAudio
import Foundation
import ProcessSignals
import RoomClient

/// `clubroom bot`: a headless client driven by JSON lines.
enum BotCommand: ClubroomCommand {
    static let declaration = Command(
        name: "bot", abstract: "Join a room headless, driven by JSON lines.",
        discussion: """
            Reads one JSON command per line on stdin and writes one JSON event per line on stdout, for scripts, \
            tests and demos. End of input leaves the room.

            The token comes from --token TOKEN, --token-file FILE or the CLUBROOM_TOKEN environment variable; \
            one given with --token shows in ps to every user of this machine, the other two do not.
            """,
        positionals: [
            Positional(
                "url", type: .url(schemes: ["ws", "wss"]),
                help: "The room's address, such as ws://127.0.0.1:7480/rooms/lobby.")
        ],
        options: [
            token.option, tokenFile.option, autoAccept.option, play.option, tone.option, record.option,
            blockUDP.option, logPackets.option,
        ])

    static let token = TypedOption.string(
        "token", short: "t", placeholder: "TOKEN", help: "Access token for the room (shows in ps).")
    static let tokenFile = SharedOptions.tokenFile
    static let autoAccept = TypedOption.flag("auto-accept", help: "Accept invitations to speak by itself.")
    static let play = TypedOption.path("play", placeholder: "FILE.wav", help: "Loop this WAV file as the microphone.")
    static let tone = TypedOption.integer(
        "tone", placeholder: "HZ", in: 20...20_000, help: "Send a sine tone as the microphone.")
    static let record = TypedOption.path(
        "record", placeholder: "OUT.wav", help: "Record what the bot hears, mixed, to a WAV file.")
    static let blockUDP = TypedOption.flag(
        "block-udp", help: "Drop all media UDP, so audio falls back to the WebSocket (for tests).")
    static let logPackets = TypedOption.flag(
        "log-packets", help: "Print each packet heard as it arrives (for tests).")

    /// What the bot does, as given on the command line.
    struct Options: Equatable {
        /// What the bot sends as its microphone.
        enum Source: Equatable {
            case silence
            case file(String)
            case tone(hertz: Int)
        }

        var url: String
        /// Where the token comes from: `--token`, `--token-file`, else `CLUBROOM_TOKEN`.
        enum TokenSource: Equatable {
            case given(String)
            case file(String)
            case environment
        }

        var token: TokenSource
        var autoAccept: Bool
        var source: Source
        var recording: String?
        var blockUDP: Bool
        var logPackets: Bool

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            url = arguments.string("url") ?? ""
            switch (arguments[BotCommand.token], arguments[BotCommand.tokenFile]) {
            case (.some, .some): throw .conflict("--token", "--token-file")
            case (.some(let token), nil): self.token = .given(token)
            case (nil, .some(let file)): token = .file(file)
            case (nil, nil):
                guard ProcessInfo.processInfo.environment["CLUBROOM_TOKEN"] != nil else {
                    throw .missingOption(synopsis: "--token TOKEN")
                }
                token = .environment
            }
            autoAccept = arguments[BotCommand.autoAccept]
            recording = arguments[BotCommand.record]
            blockUDP = arguments[BotCommand.blockUDP]
            logPackets = arguments[BotCommand.logPackets]
            switch (arguments[BotCommand.play], arguments[BotCommand.tone]) {
            case (.some, .some): throw .conflict("--play", "--tone")
            case (.some(let file), nil): source = .file(file)
            case (nil, .some(let hertz)): source = .tone(hertz: hertz)
            case (nil, nil): source = .silence
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        let token = try readToken(options.token, environment: ProcessInfo.processInfo.environment)
        let microphone: MicrophoneSource
        switch options.source {
        case .silence: microphone = .none
        case .tone(let hertz): microphone = .tone(hertz: Double(hertz))
        case .file(let path): microphone = .samples(try loadMicrophone(path))
        }
        ignoreBrokenPipes()
        let media = BotMediaOptions(
            source: microphone, recordPath: options.recording, blockUDP: options.blockUDP,
            logPackets: options.logPackets)
        let bot = BotRunner(
            url: options.url, token: token,
            behaviour: BotRunner.Behaviour(autoAccept: options.autoAccept, media: media),
            output: { line in writeOutput(line + "\n") })
        let status = await Task.detached { bot.run(input: { readLine(strippingNewline: true) }) }.value
        return ExitStatus(rawValue: status.rawValue)
    }
}

/// The bot's token from where the options say; an empty one, or none at all, is an error before connecting.
func readToken(_ source: BotCommand.Options.TokenSource, environment: [String: String]) throws -> String {
    let text: String
    switch source {
    case .given(let token): text = token
    case .file(let path):
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JoinFailure(text: "cannot read the token file \(path); check the path")
        }
        text = String(decoding: data, as: UTF8.self)
    case .environment:
        guard let token = environment["CLUBROOM_TOKEN"] else {
            throw JoinFailure(text: "no token: give --token-file FILE, CLUBROOM_TOKEN or --token TOKEN")
        }
        text = token
    }
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !trimmed.isEmpty else {
        throw JoinFailure(text: "the token is empty; give the one the room's host sent you")
    }
    return trimmed
}

/// A WAV file's samples as a 48 kHz mono microphone (any rate and channel count, converted).
func loadMicrophone(_ path: String) throws -> [Int16] {
    do {
        return try SoundFile.readMono48k(path: path)
    } catch {
        throw MicrophoneFileError(text: "--play: \(error)")
    }
}

/// A `--play` file that cannot be used, in words.
struct MicrophoneFileError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}
