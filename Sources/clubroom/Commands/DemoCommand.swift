import Arguments
import AudioDevices
import ClientAudio
import ClubroomResources
import Demo
import Dispatch
import Foundation
import Platform
import ProcessSignals
import RoomApp
import RoomAppRuntime
import RoomClient
import RoomCore
import RoomProtocol
import StrictJSON
import Synchronization
import TermCurses
import TermUI

/// `clubroom demo`: a live room with speaking bots.
enum DemoCommand: ClubroomCommand {
    static let declaration = Command(
        name: "demo", abstract: "Open a live demo room with speaking bots.",
        discussion: """
            Starts a server on a free loopback port, fills a room with bots that speak, raise their hands and \
            chat, and opens it with you as host. Quitting stops everything it started.

            With --plain, the room is line mode as in 'clubroom join --plain': events as sentences, your \
            commands from stdin (/help lists them). With --no-ui, the room's events are printed as JSON lines \
            (those of 'clubroom bot', plus demo_line for each line said on stage), and you act as host by \
            typing bot commands on stdin.
            """,
        options: [roomSize.option, output.option, ascii.option, plain.option, noUI.option])

    static let roomSize = TypedOption.integer(
        "room-size", placeholder: "N", in: 0...10_000, default: 20, help: "Number of audience members.")
    static let output = TypedOption.string(
        "output", placeholder: "PCM", default: "default", help: "ALSA playback device.")
    static let ascii = SharedOptions.ascii
    static let plain = SharedOptions.plain
    static let noUI = TypedOption.flag(
        "no-ui", help: "Print the room's events as JSON lines instead of opening the room screen.")

    /// The demo's settings, as given on the command line.
    struct Options: Equatable {
        var roomSize: Int
        var output: String
        var showsUI: Bool
        var ascii: Bool
        var plain: Bool

        init(_ arguments: ParsedArguments) throws(ArgumentError) {
            roomSize = arguments[DemoCommand.roomSize]
            output = arguments[DemoCommand.output]
            showsUI = !arguments[DemoCommand.noUI]
            ascii = arguments[DemoCommand.ascii]
            plain = arguments[DemoCommand.plain]
            if !showsUI, plain { throw .conflict("--no-ui", "--plain") }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws -> ExitStatus {
        var options = try Options(arguments)
        if options.showsUI, let problem = outputProblem(option: "--output", options.output) {
            throw JoinFailure(text: problem)
        }
        ignoreBrokenPipes()
        // As for join: a terminal that cannot draw gets line mode, said once; a locale that is not UTF-8, ASCII.
        if options.showsUI, !options.plain, ProcessInfo.processInfo.environment["TERM"] == "dumb" {
            writeError("clubroom demo: TERM=dumb cannot draw the room screen, so this is line mode (--plain).\n")
            options.plain = true
        }
        if options.showsUI, !options.plain, !options.ascii, !Terminal.localeIsUTF8() { options.ascii = true }
        let output = LineWriter()
        let headless = !options.showsUI
        let room = try DemoRoom(
            roomSize: options.roomSize,
            notes: { note in
                // On the room screen, lines said on stage are heard and seen, and problems are only logged.
                if headless { output.write(note.jsonLine) }
            })
        defer { room.stop() }
        let host = room.cast.host(loginName: ProcessInfo.processInfo.environment["USER"])
        let token = try room.server.token(for: host)
        if !options.showsUI { return await runHeadless(room: room, token: token, output: output) }
        return try await runScreen(room: room, token: token, options: options)
    }

    /// The room screen, with you as host. It closes when you leave, when the room ends, or on SIGTERM.
    /// The speakers play on `output`; the host's microphone is silence, since the demo is for listening.
    /// With `--plain`, the same room in line mode, until you leave, the room ends or a signal stops it.
    private static func runScreen(room: DemoRoom, token: String, options: Options) async throws -> ExitStatus {
        let roles = try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
        let speaker: DeviceSpec
        do throws(DeviceSpecError) {
            speaker = try DeviceSpec.output(options.output)
        } catch {
            throw JoinFailure(text: error.description)
        }
        let connection = SessionConnection(
            url: room.server.url, token: token,
            audio: RoomAudioSettings(input: .silence, output: speaker, echoCancellation: false))
        var state = AppState(roles: roles, ascii: options.ascii, lineMode: options.plain)
        state.inDemo = true
        // Every signal leaves the room (in line mode and on the screen alike) and stops the director, so the demo
        // still removes what it made.
        let signals = FrontEnds.Signals([.interrupt, .terminate, .hangUp], firstOnly: true) { room.director.stop() }
        if options.plain {
            let outcome = try await FrontEnds.roomLines(
                state: state, connection: connection, signals: signals, output: { writeOutput($0 + "\n") })
            if case .failed(let why) = outcome { throw JoinFailure(text: why) }
            return .success
        }
        let outcome = try await FrontEnds.roomScreen(
            state: state, connection: connection, logName: "demo", signals: signals
        ) { room.director.isOver }
        if case .failed(let why) = outcome { throw JoinFailure(text: why) }
        if case .roomEnded(_, let reason) = room.director.isOver ? room.director.waitForEnd() : .stopped {
            writeOutput(reason.isEmpty ? "The room has ended.\n" : "The room has ended: \(reason)\n")
        }
        return .success
    }

    /// The room as JSON lines on stdout, with your host commands read from stdin.
    private static func runHeadless(room: DemoRoom, token: String, output: LineWriter) async -> ExitStatus {
        let input = HostInput()
        let signals = SignalWatcher(firstOf: [.interrupt, .terminate, .hangUp]) { _ in input.close() }
        // The host's own session reports the end of the room and then ends, so its last lines are never cut off.
        let runner = BotRunner(url: room.server.url, token: token, output: { line in output.write(line) })
        let status = await Task.detached { runner.run(input: { input.next() }) }.value
        withExtendedLifetime(signals) {}
        switch status {
        case .left, .roomEnded: return .success
        default: return ExitStatus(rawValue: status.rawValue)
        }
    }
}

extension DemoNote {
    /// The note as a JSON line: `demo_line` with the speaker, clip and words, or `demo_problem`.
    var jsonLine: String {
        switch self {
        case .line(let clip):
            JSONValue.object(
                JSONObject([
                    ("event", .string("demo_line")), ("peer", .string(clip.speaker)), ("clip", .string(clip.file)),
                    ("text", .string(clip.text)),
                ])
            ).encodedString
        case .problem(let problem):
            JSONValue.object(JSONObject([("event", .string("demo_problem")), ("message", .string(problem))]))
                .encodedString
        }
    }
}

/// Writes whole lines to stdout from any thread, one at a time, so long lines never interleave.
final class LineWriter: Sendable {
    private let lock = Mutex(())

    func write(_ line: String) {
        lock.withLock { _ in writeOutput(line + "\n") }
    }
}

/// The host's commands from stdin, until stdin ends and the demo is over, or until `close()`: the end of stdin
/// alone does not end the demo, so `clubroom demo --no-ui < /dev/null` runs until it is stopped.
final class HostInput: Sendable {
    private let lines = Mutex<(queue: [String], closed: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)

    init() {
        startThread(named: "demo-input") { [self] in
            while let line = readLine(strippingNewline: true) {
                lines.withLock { $0.queue.append(line) }
                available.signal()
            }
        }
    }

    /// The next line, waiting for one; nil once closed.
    func next() -> String? {
        while true {
            let taken = lines.withLock { state -> String?? in
                if state.closed { return .some(nil) }
                return state.queue.isEmpty ? nil : .some(state.queue.removeFirst())
            }
            if let taken { return taken }
            available.wait()
        }
    }

    /// Makes `next()` return nil from now on.
    func close() {
        lines.withLock { $0.closed = true }
        available.signal()
    }
}
