import Arguments
import AudioCodec
import AudioDevices
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

            The microphone is a virtual device, as for 'clubroom join --input': tone:HZ, wav:PATH or silence \
            (the default: the bot only listens). --tone HZ and --play FILE are short for --input tone:HZ and \
            --input wav:FILE.
            """,
        positionals: [
            Positional(
                "url", type: .url(schemes: ["ws", "wss"]),
                help: "The room's address, such as ws://127.0.0.1:7480/rooms/lobby.")
        ],
        options: [
            token.option, tokenFile.option, autoAccept.option, input.option, tone.option, play.option, record.option,
            blockUDP.option, logPackets.option,
        ])

    static let token = TypedOption.string(
        "token", short: "t", placeholder: "TOKEN", help: "Access token for the room (shows in ps).")
    static let tokenFile = SharedOptions.tokenFile
    static let autoAccept = TypedOption.flag("auto-accept", help: "Accept invitations to speak by itself.")
    static let input = TypedOption.string(
        "input", placeholder: "DEVICE", help: "Microphone: tone:HZ, wav:PATH or silence (the default).")
    static let tone = TypedOption.integer("tone", placeholder: "HZ", in: 20...20_000, help: "Same as --input tone:HZ.")
    static let play = TypedOption.path("play", placeholder: "FILE.wav", help: "Same as --input wav:FILE.wav.")
    static let record = TypedOption.path(
        "record", placeholder: "OUT.wav", help: "Record what the bot hears, mixed, to a WAV file.")
    static let blockUDP = TypedOption.flag(
        "block-udp", help: "Drop all media UDP, so audio falls back to the WebSocket (for tests).")
    static let logPackets = TypedOption.flag(
        "log-packets", help: "Print each packet heard as it arrives (for tests).")

    /// What the bot does, as given on the command line.
    struct Options: Equatable {
        var url: String
        /// Where the token comes from: `--token`, `--token-file`, else `CLUBROOM_TOKEN`.
        enum TokenSource: Equatable {
            case given(String)
            case file(String)
            case environment
        }

        var token: TokenSource
        var autoAccept: Bool
        /// The microphone as given: `--input`'s device spec, or what `--tone` or `--play` is short for; nil:
        /// none (the bot only listens).
        var input: String?
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
            let given: [(option: String, spec: String)] = [
                arguments[BotCommand.play].map { ("--play", "wav:\($0)") },
                arguments[BotCommand.tone].map { ("--tone", "tone:\($0)") },
                arguments[BotCommand.input].map { ("--input", $0) },
            ].compactMap { $0 }
            if given.count > 1 { throw .conflict(given[0].option, given[1].option) }
            input = given.first?.spec
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        if let path = options.recording, let problem = WAVFileOutput.problemWriting(path: path) {
            throw JoinFailure(text: "--record \(path): the recording cannot be written, because \(problem)")
        }
        let token = try readToken(options.token, environment: ProcessInfo.processInfo.environment)
        let microphone = try botMicrophone(options.input)
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

/// The bot's microphone from its `--input` spec (nil: none), parsed as `join` parses its own. A bot has no sound
/// card: an ALSA device is refused. A WAV file is read (any rate and channel count, converted) before the bot
/// connects, so a file that cannot be used stops it at once.
func botMicrophone(_ input: String?) throws -> MicrophoneSource {
    guard let input else { return .none }
    let spec = try DeviceSpec.input(input)
    switch spec {
    case .silence: return .none
    case .tone: return .device(spec)
    case .wav(let path):
        do {
            return .samples(try SoundFile.readMono48k(path: path))
        } catch {
            throw JoinFailure(text: "--input '\(input)': \(error)")
        }
    case .alsa, .null, .record:
        throw JoinFailure(
            text: "--input '\(input)': a bot has no sound card; give tone:HZ, wav:PATH or silence")
    }
}
