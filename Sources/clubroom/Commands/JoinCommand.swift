import Arguments
import AudioEngine
import ClubroomResources
import Crypto
import Foundation
import ProcessSignals
import RoomApp
import RoomAppRuntime
import RoomCore
import TermCurses
import TermUI

/// `clubroom join`: the room screen.
enum JoinCommand: ClubroomCommand {
    static let declaration = Command(
        name: "join", abstract: "Join a room in the terminal.",
        discussion: """
            Opens the room screen: the stage, raised hands and the audience. Press ? in the room for the keys.

            Join with a token from the room's host (--token), or, on a machine that holds the server's secret, \
            mint one yourself with --secret-file, --identity and --role.
            """,
        positionals: [
            Positional(
                "url", type: .url(schemes: ["ws", "wss"]),
                help: "The room's address, such as ws://127.0.0.1:7480/rooms/lobby.")
        ],
        options: [
            .value("token", short: "t", placeholder: "TOKEN", help: "Access token for the room."),
            .value(
                "secret-file", placeholder: "FILE", type: .path, help: "Server secret to mint your own token with."),
            .value("identity", placeholder: "ID", help: "Your identity, with --secret-file."),
            .value("name", placeholder: "NAME", help: "Your display name, with --secret-file."),
            .value("role", placeholder: "ROLE", help: "Your role, with --secret-file."),
            .value(
                "input", placeholder: "PCM", default: "default", help: "ALSA capture device; see 'clubroom devices'."),
            .value("output", placeholder: "PCM", default: "default", help: "ALSA playback device."),
            .flag("ascii", help: "Draw with ASCII only, no Unicode symbols."),
            .flag("plain", help: "Line mode for screen readers and logs: events as sentences, commands from stdin."),
            .flag("echo-cancel", help: "Cancel the echo of your loudspeaker in your microphone."),
        ])

    /// How the person takes part, as given on the command line.
    struct Options: Equatable {
        /// Where the access token comes from.
        enum Credentials: Equatable {
            case token(String)
            case mint(secretFile: String, identity: String, name: String, role: String)
        }

        var url: String
        var credentials: Credentials
        var input: String
        var output: String
        var ascii: Bool
        var plain: Bool
        var echoCancel: Bool

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            url = arguments.string("url") ?? ""
            credentials = try readCredentials(arguments)
            input = arguments.string("input") ?? "default"
            output = arguments.string("output") ?? "default"
            ascii = arguments.flag("ascii")
            plain = arguments.flag("plain")
            echoCancel = arguments.flag("echo-cancel")
            if ascii, plain { throw .conflict("--ascii", "--plain") }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        let options = try Options(arguments)
        let token: String
        switch options.credentials {
        case .token(let given): token = given
        case .mint(let secretFile, let identity, let name, let role):
            token = try TokenCommandCore.mint(
                room: roomName(in: options.url), identity: identity, name: name, role: role, ttl: 12 * 3600,
                secretFile: secretFile, now: Int64(Date().timeIntervalSince1970))
        }
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        ignoreBrokenPipes()
        let audio: RoomAudioSettings
        do throws(DeviceSpecError) {
            audio = RoomAudioSettings(
                input: try DeviceSpec.input(options.input), output: try DeviceSpec.output(options.output),
                echoCancellation: options.echoCancel)
        } catch {
            throw JoinFailure(text: error.description)
        }
        let connection = SessionConnection(url: options.url, token: token, audio: audio)
        let state = AppState(roles: roles, ascii: options.ascii, lineMode: options.plain)
        let outcome: LoopOutcome
        if options.plain {
            outcome = try await runPlain(state: state, connection: connection)
        } else {
            outcome = try await Task.detached { () throws -> LoopOutcome in
                let environment = ProcessInfo.processInfo.environment
                // C libraries (speexdsp, ALSA) print to stderr; while the screen is up that goes to the log.
                let log = StandardErrorLog(name: "join")
                defer { log.restore() }
                return try Terminal.run(colors: ColorLevel.detect(environment: environment), interruptAsKey: true) {
                    terminal in
                    let theme = Theme(level: terminal.colorLevel, ascii: options.ascii)
                    let loop = try ScreenLoop(state: state, connection: connection, theme: theme)
                    // SIGTERM and SIGHUP (the terminal went away) leave the room cleanly, then the terminal is
                    // restored on the way out of Terminal.run; while watched, they bypass the adapter's handlers.
                    let stop = loop.requestStop
                    let signals = SignalWatcher([.terminate, .hangUp]) { _ in stop() }
                    defer { signals.cancel() }
                    return loop.run(on: TerminalSink(terminal))
                }
            }.value
        }
        switch outcome {
        case .left: return .success
        case .failed(let why): throw JoinFailure(text: why)
        }
    }

    private static func runPlain(state: AppState, connection: SessionConnection) async throws -> LoopOutcome {
        let loop = try PlainLoop(state: state, connection: connection, output: { writeOutput($0 + "\n") })
        // Ctrl-C and SIGTERM leave the room cleanly in line mode.
        let interrupt = loop.interrupt
        let signals = SignalWatcher([.interrupt, .terminate]) { _ in interrupt() }
        defer { signals.cancel() }
        nonisolated(unsafe) let unsafeLoop = loop
        return await Task.detached { unsafeLoop.run(input: { readLine(strippingNewline: true) }) }.value
    }

    /// The room's name: the last part of the address's path (`ws://host:7480/rooms/lobby` is `lobby`).
    static func roomName(in url: String) -> String {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return path.split(separator: "/").last.map(String.init) ?? ""
    }
}

/// Joining failed before the room could be shown; `text` says why and what to do.
struct JoinFailure: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

/// A token, or everything needed to mint one; `--token` and `--secret-file` exclude each other.
private func readCredentials(_ arguments: ParsedArguments) throws(ArgumentError) -> JoinCommand.Options.Credentials {
    let minting = ["secret-file", "identity", "name", "role"].filter { arguments.isGiven($0) }
    if let token = arguments.string("token") {
        if let other = minting.first { throw .conflict("--token", "--\(other)") }
        return .token(token)
    }
    guard let secretFile = arguments.path("secret-file") else {
        if let other = minting.first { throw .needs(option: "--\(other)", needed: "--secret-file FILE") }
        throw .missingOption(synopsis: "--token TOKEN")
    }
    guard let identity = arguments.string("identity") else {
        throw .needs(option: "--secret-file", needed: "--identity ID")
    }
    guard let role = arguments.string("role") else { throw .needs(option: "--secret-file", needed: "--role ROLE") }
    return .mint(secretFile: secretFile, identity: identity, name: arguments.string("name") ?? identity, role: role)
}
