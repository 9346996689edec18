import Arguments
import AudioDevices
import ClientAudio
import ClubroomResources
import Foundation
import ProcessSignals
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization
import TermCurses
import TermUI

/// `clubroom join`: the room screen.
enum JoinCommand: ClubroomCommand {
    static let declaration = Command(
        name: "join", abstract: "Join a room, or a server's lobby, in the terminal.",
        discussion: """
            With a server's address or link (clubroom invite prints one), opens the lobby: the live rooms, \
            most listeners first. Enter joins the selected room; q in a room comes back to the lobby, q in the \
            lobby quits. With a room's address or link, opens that room's screen: the stage, raised hands and \
            the audience. Press ? for the keys.

            A link carries its invite (wss://HOST/rooms#invite=...): paste it as it is. A link or token given \
            on the command line shows in ps to every user of this machine; to keep it out, give - for the link \
            and the link on stdin's first line, or --link-file FILE, or nothing: then the link is asked for \
            without being shown (or read from stdin when it is not a terminal). Otherwise join with a token \
            from the room's host: --token TOKEN, --token-file FILE, the CLUBROOM_TOKEN environment variable, or \
            typed when asked. On a machine that holds the server's secret, mint one yourself with \
            --secret-file, --identity and --role.

            Devices are ALSA PCMs (see 'clubroom devices') or virtual ones: tone:HZ, wav:PATH and silence for \
            --input; null and record:PATH for --output.
            """,
        positionals: [
            Positional(
                // Read as text: a link is taken as it was pasted (quotes, angle brackets), see `readLink`.
                "url", type: .string, required: false,
                help:
                    "A link, a server's address (ws://127.0.0.1:7480) for its lobby, or a room's (ws://127.0.0.1:7480/rooms/lobby); - reads it from stdin."
            )
        ],
        options: [
            linkFile.option, token.option, tokenFile.option, secretFile.option, identity.option, name.option,
            role.option, profile.option, input.option, output.option, ascii.option, plain.option, echoCancel.option,
            voiceProcessing.option,
        ])

    static let linkFile = SharedOptions.linkFile
    static let token = TypedOption.string(
        "token", short: "t", placeholder: "TOKEN", help: "Access token or invite for the room or lobby.")
    static let tokenFile = SharedOptions.tokenFile
    static let secretFile = TypedOption.path(
        "secret-file", placeholder: "FILE", help: "Server secret to mint your own token with.")
    static let identity = TypedOption.string("identity", placeholder: "ID", help: "Your identity, with --secret-file.")
    static let name = TypedOption.string(
        "name", placeholder: "NAME", defaultDescription: "your login name",
        help: "Your display name (with a link, or with --secret-file).")
    static let role = TypedOption.string(
        "role", placeholder: "ROLE",
        help: "Your role, with --secret-file: host, mod (moderator), speaker or listener (audience).")
    static let profile = TypedOption.string(
        "profile", placeholder: "NAME", defaultDescription: "this account's own",
        help: "Come as another local person, with a guest key of their own: two people on one machine.")
    static let input = TypedOption.string(
        "input", placeholder: "DEVICE", default: "default",
        help: "Microphone: an ALSA PCM, tone:HZ, wav:PATH or silence; see 'clubroom devices'.")
    static let output = TypedOption.string(
        "output", placeholder: "DEVICE", default: "default", help: "Loudspeaker: an ALSA PCM, null or record:PATH.")
    static let ascii = SharedOptions.ascii
    static let plain = SharedOptions.plain
    static let echoCancel = TypedOption.flag(
        "echo-cancel", help: "Cancel the echo of your loudspeaker in your microphone.")
    static let voiceProcessing = TypedOption.choice(
        "voice-processing", placeholder: "on|off", ["on", "off"],
        help: "Noise suppression and gain control on your microphone (default: on for a sound card, off for "
            + "a file or a tone).")

    /// How the person takes part, as given on the command line.
    struct Options: Equatable {
        /// Where the access token comes from.
        enum Credentials: Equatable {
            case token(String)
            case tokenFile(String)
            case mint(secretFile: String, identity: String, name: String, role: String)
            /// None given: the link's own invite, else `CLUBROOM_TOKEN`, else asked on the terminal.
            case link
        }

        /// Where the link or address comes from.
        enum LinkSource: Equatable {
            case given(String)
            case file(String)
            /// `-`, or nothing given: stdin's first line, or asked for on the terminal without echo.
            case standardInput

            /// The link of `join` and `record`: the positional argument `argument` (normalized, its scheme
            /// checked) or `--link-file`, not both; `-` or neither is stdin.
            init(_ arguments: ParsedArguments, argument: String) throws(ArgumentError) {
                switch (arguments.string(argument), arguments[SharedOptions.linkFile]) {
                case (.some, .some): throw .conflict("<\(argument)>", "--link-file")
                case (nil, .some(let file)): self = .file(file)
                case (.some("-"), nil), (nil, nil): self = .standardInput
                case (.some(let url), nil):
                    self = .given(JoinCommand.normalized(url))
                    try checkLinkScheme(JoinCommand.normalized(url))
                }
            }
        }

        var link: LinkSource
        var credentials: Credentials
        /// The display name an invite holder asks for.
        var name: String?
        /// The local person an invite holder comes as (`--profile`), nil for the account's own.
        var profile: String?
        var input: String
        var output: String
        var ascii: Bool
        var plain: Bool
        var echoCancel: Bool
        /// Voice processing as asked (`--voice-processing on|off`); nil: as suits the microphone.
        var voiceProcessing: Bool?

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            link = try LinkSource(arguments, argument: "url")
            credentials = try readCredentials(arguments)
            name = arguments[JoinCommand.name]
            profile = arguments[JoinCommand.profile]
            if let profile, !Entry.isValidProfile(profile) {
                throw .badValue(
                    argument: "--profile", value: profile, expected: "1 to 32 letters, digits, '-', '_' or '.'")
            }
            input = arguments[JoinCommand.input]
            output = arguments[JoinCommand.output]
            ascii = arguments[JoinCommand.ascii]
            plain = arguments[JoinCommand.plain]
            echoCancel = arguments[JoinCommand.echoCancel]
            voiceProcessing = arguments[JoinCommand.voiceProcessing].map { $0 == "on" }
            if ascii, plain { throw .conflict("--ascii", "--plain") }
        }

        /// How to get in through `link`: its invite, `--token`, `--token-file`, a secret to mint with,
        /// `CLUBROOM_TOKEN`, or a token asked for on the terminal (without echo). An empty token is an error here,
        /// before any connection.
        func entry(_ link: ClubroomLink, environment: [String: String]) throws -> Entry {
            let guestName = name ?? Entry.defaultName()
            func given(_ token: String, by option: String) throws -> Entry {
                if link.invite != nil {
                    throw JoinFailure(
                        text: "The link carries its own invite; leave out \(option), or give the address alone.")
                }
                let trimmed = token.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !trimmed.isEmpty else {
                    throw JoinFailure(
                        text: "the token is empty; give the one the room's host sent you (--token, --token-file or "
                            + "CLUBROOM_TOKEN)")
                }
                return Entry(
                    kind: RoomToken.looksLikeInvite(trimmed) ? .invite(trimmed) : .roomToken(trimmed),
                    guestName: guestName, profile: profile)
            }
            switch credentials {
            case .token(let token):
                return try given(token, by: "--token")
            case .tokenFile(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw JoinFailure(text: "cannot read the token file \(path); check the path")
                }
                return try given(String(decoding: data, as: UTF8.self), by: "--token-file")
            case .mint(let secretFile, let identity, let name, let role):
                if link.invite != nil {
                    throw JoinFailure(
                        text: "The link carries its own invite; leave out --secret-file, or give the address alone.")
                }
                return Entry(
                    kind: .mint(secretFile: secretFile, identity: identity, name: name, role: role),
                    guestName: guestName)
            case .link:
                if let invite = link.invite {
                    return Entry(kind: .invite(invite), guestName: guestName, profile: profile)
                }
                if let token = environment["CLUBROOM_TOKEN"] { return try given(token, by: "CLUBROOM_TOKEN") }
                if isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 {
                    return try given(JoinCommand.askForToken(room: link.room), by: "the token")
                }
                throw JoinFailure(
                    text: link.room == nil
                        ? "The lobby needs a link with an invite (clubroom invite prints one), or --token INVITE."
                        : "Joining \(link.room ?? "") needs a link with an invite, --token TOKEN, --token-file FILE, "
                            + "CLUBROOM_TOKEN or --secret-file."
                )
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        var options = try Options(arguments)
        let environment = ProcessInfo.processInfo.environment
        if let advice = bareFileAdvice(options) { throw JoinFailure(text: advice) }
        if let problem = outputProblem(option: "--output", options.output) { throw JoinFailure(text: problem) }
        let link = try readLink(try linkText(options.link))
        if case .mint(let secretFile, let identity, let name, let role) = options.credentials {
            options.credentials = .mint(
                secretFile: secretFile, identity: identity, name: name, role: try roleArgument(role))
        }
        let entry = try options.entry(link, environment: environment)
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        ignoreBrokenPipes()
        var audio: RoomAudioSettings
        do throws(DeviceSpecError) {
            audio = RoomAudioSettings(
                input: try DeviceSpec.input(options.input), output: try DeviceSpec.output(options.output),
                echoCancellation: options.echoCancel, voiceProcessing: options.voiceProcessing)
        } catch {
            throw JoinFailure(text: error.description)
        }
        // A terminal that cannot draw gets line mode, said once; a locale that is not UTF-8 gets ASCII.
        if !options.plain, environment["TERM"] == "dumb" {
            writeError("clubroom join: TERM=dumb cannot draw the room screen, so this is line mode (--plain).\n")
            options.plain = true
            options.ascii = false
        }
        if !options.plain, !options.ascii, !Terminal.localeIsUTF8() { options.ascii = true }
        // Line mode has no level bar to draw.
        audio.reportsLevel = !options.plain
        guard let roomName = link.room else {
            return try await runLobby(link: link, entry: entry, roles: roles, audio: audio, options: options)
        }
        let credential = try entry.credential(forRoom: roomName, at: link.server)
        let connection = SessionConnection(
            url: link.url, token: credential.token, headers: credential.headers, withInvite: credential.invite,
            audio: audio)
        var state = AppState(roles: roles, ascii: options.ascii, lineMode: options.plain)
        _ = reduceApp(&state, .microphoneName(options.input))
        let outcome =
            options.plain
            ? try await FrontEnds.roomLines(state: state, connection: connection, output: { writeOutput($0 + "\n") })
            : try await FrontEnds.roomScreen(state: state, connection: connection, logName: "join")
        switch outcome {
        case .left: return .success
        case .failed(let why): throw JoinFailure(text: why)
        }
    }

    /// The address as the server expects it: a slash at the end of the path (`…/rooms/lobby/`) is dropped.
    static func normalized(_ url: String) -> String {
        var parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        while let path = parts.first, path.hasSuffix("/"),
            path.dropFirst(path.hasPrefix("wss:") ? 6 : 5)
                .contains("/")
        {
            parts[0] = String(path.dropLast())
        }
        return parts.joined(separator: "?")
    }

    /// The link or address as given: on the command line, in a file, on stdin's first line, or typed at a prompt
    /// that does not show it (when stdin is a terminal).
    static func linkText(_ source: Options.LinkSource) throws -> String {
        switch source {
        case .given(let url):
            return url
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw JoinFailure(text: "cannot read the link file \(path); check the path")
            }
            return normalized(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        case .standardInput:
            let text =
                isatty(STDIN_FILENO) == 1
                ? askHidden("Link (from the room's host; it is not shown as you paste it): ")
                : (readLine(strippingNewline: true) ?? "")
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else {
                throw JoinFailure(text: "no link was given; paste it, or give it with --link-file FILE")
            }
            return normalized(trimmed)
        }
    }

    /// Asks for the token on the terminal, without showing what is typed.
    static func askForToken(room: String?) -> String {
        askHidden(room.map { "Token for \($0) (from the room's host): " } ?? "Invite for the lobby (from its host): ")
    }

    /// Asks for a secret on the terminal, without showing what is typed.
    static func askHidden(_ prompt: String) -> String {
        writeError(prompt)
        var saved = termios()
        let canHide = tcgetattr(STDIN_FILENO, &saved) == 0
        if canHide {
            var hidden = saved
            hidden.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &hidden)
        }
        let line = readLine(strippingNewline: true) ?? ""
        if canHide { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        writeError("\n")
        return line
    }

    /// What to write instead when a device is given as a bare path to a file (ALSA would look for a PCM of that
    /// name and not find it): `wav:PATH` plays a file as the microphone, `record:PATH` records the room.
    static func bareFileAdvice(_ options: Options) -> String? {
        func isBarePath(_ value: String) -> Bool {
            !value.contains(":") && (value.contains("/") || value.lowercased().hasSuffix(".wav"))
        }
        if isBarePath(options.input), FileManager.default.fileExists(atPath: options.input) {
            return "--input \(options.input) is a file, not a microphone; to play it as your microphone, write "
                + "--input wav:\(options.input)"
        }
        if isBarePath(options.output) {
            return "--output \(options.output) looks like a file, not a loudspeaker; to record the room into it, "
                + "write --output record:\(options.output)"
        }
        return nil
    }
}

/// Why the loudspeaker `spec` given with `option` cannot be used, as the sentence a person reads before
/// anything joins (a recording whose file cannot be written); nil when it can be, or when the spec does not parse
/// (the parse says that). `join`, `demo` and `bot` (whose `--record PATH` is `record:PATH`) refuse with it.
func outputProblem(option: String, _ spec: String) -> String? {
    guard let device = try? DeviceSpec.output(spec), let problem = device.outputProblem else { return nil }
    return "\(option) \(spec): the recording cannot be written, because \(problem)"
}

/// Joining failed before the room could be shown; `text` says why and what to do.
struct JoinFailure: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

/// A token, a token file, or everything needed to mint one (they exclude each other); none of them means the
/// link's invite, `CLUBROOM_TOKEN` or asking. `--name` alone names an invite holder.
private func readCredentials(_ arguments: ParsedArguments) throws(ArgumentError) -> JoinCommand.Options.Credentials {
    let minting = [JoinCommand.secretFile, JoinCommand.identity, JoinCommand.role].filter { arguments.isGiven($0) }
        .map(\.option.spelling)
    if let token = arguments[JoinCommand.token] {
        if arguments.isGiven(JoinCommand.tokenFile) { throw .conflict("--token", "--token-file") }
        if let other = minting.first { throw .conflict("--token", other) }
        return .token(token)
    }
    if let file = arguments[JoinCommand.tokenFile] {
        if let other = minting.first { throw .conflict("--token-file", other) }
        return .tokenFile(file)
    }
    guard let secretFile = arguments[JoinCommand.secretFile] else {
        if let other = minting.first { throw .needs(option: other, needed: "--secret-file FILE") }
        return .link
    }
    guard let identity = arguments[JoinCommand.identity] else {
        throw .needs(option: "--secret-file", needed: "--identity ID")
    }
    guard let role = arguments[JoinCommand.role] else { throw .needs(option: "--secret-file", needed: "--role ROLE") }
    return .mint(secretFile: secretFile, identity: identity, name: arguments[JoinCommand.name] ?? identity, role: role)
}
