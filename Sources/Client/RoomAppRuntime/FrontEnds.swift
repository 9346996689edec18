import Foundation
import ProcessSignals
import RoomApp
import RoomCore
import TermCurses
import TermUI

/// The front ends on the real terminal and the process's standard input, with the signals that end them: what
/// `clubroom join` and `clubroom demo` run once their options are read. The screen runs on a thread of its own,
/// inside `Terminal.run`, so the terminal is restored however the run ends; what C libraries print on stderr
/// meanwhile goes to a log (`StandardErrorLog`).
public enum FrontEnds {
    /// The signals a run watches, and what else they do besides leaving.
    public struct Signals: Sendable {
        public var watched: [ProcessSignal]
        /// Only the first signal counts; later ones are ignored while the run lasts.
        public var firstOnly: Bool
        /// Done on a signal after asking the run to leave.
        public var also: @Sendable () -> Void

        public init(_ watched: [ProcessSignal], firstOnly: Bool = false, also: @escaping @Sendable () -> Void = {}) {
            self.watched = watched
            self.firstOnly = firstOnly
            self.also = also
        }

        /// Watches the signals, calling `leave` (then `also`) on each that counts.
        func watch(_ leave: @escaping @Sendable (ProcessSignal) -> Void) -> SignalWatcher {
            let also = self.also
            let handler: @Sendable (ProcessSignal) -> Void = { signal in
                leave(signal)
                also()
            }
            return firstOnly
                ? SignalWatcher(firstOf: watched, handler: handler) : SignalWatcher(watched, handler: handler)
        }
    }

    /// The next line of stdin, nil at its end.
    public static func readInputLine() -> String? { readLine(strippingNewline: true) }

    /// The room on the terminal's screen, until the person leaves, the connection fails before joining, a signal
    /// asks to leave (SIGTERM and SIGHUP, the terminal going away, by default: Ctrl-C is a key here), or `stop`
    /// says so. `logName` names the stderr log (`join`, `demo`).
    public static func roomScreen(
        state: AppState, connection: any RoomConnection, logName: String,
        signals: Signals = Signals([.terminate, .hangUp]), stop: @escaping @Sendable () -> Bool = { false }
    ) async throws -> LoopOutcome {
        try await Task.detached { () throws -> LoopOutcome in
            try onTerminal(logName: logName) { terminal in
                let theme = Theme(level: terminal.colorLevel, ascii: state.ascii)
                let loop = try ScreenLoop(state: state, connection: connection, theme: theme)
                // Watched after the terminal's own handlers are installed, so a signal closes the screen through
                // the usual path, restoring the terminal on the way out of Terminal.run.
                let stopRequest = loop.requestStop
                let watcher = signals.watch { _ in stopRequest() }
                defer { watcher.cancel() }
                return loop.run(on: TerminalSink(terminal), stop: stop)
            }
        }.value
    }

    /// The room in line mode (`--plain`): sentences to `output`, commands and chat from `input` (stdin), until the
    /// session ends; a signal (Ctrl-C and SIGTERM by default) leaves the room cleanly.
    public static func roomLines(
        state: AppState, connection: any RoomConnection, signals: Signals = Signals([.interrupt, .terminate]),
        output: @escaping @Sendable (String) -> Void,
        input: @escaping @Sendable () -> String? = readInputLine
    ) async throws -> LoopOutcome {
        try await Task.detached { () throws -> LoopOutcome in
            let loop = try PlainLoop(state: state, connection: connection, output: output)
            let interrupt = loop.interrupt
            let watcher = signals.watch { _ in interrupt() }
            defer { watcher.cancel() }
            return loop.run(input: input)
        }.value
    }

    /// The lobby on the terminal's screen, with the rooms entered from it on the same screen. SIGTERM and SIGHUP
    /// (the terminal went away) leave the room, if one is open, then the lobby.
    public static func lobbyScreen(
        _ flow: LobbyFlow, state: LobbyState, connect: @escaping @Sendable () -> LobbyConnection
    ) async throws -> LobbyOutcome {
        try await Task.detached { () throws -> LobbyOutcome in
            try onTerminal(logName: "join") { terminal in
                let theme = Theme(level: terminal.colorLevel, ascii: flow.ascii)
                let lobby = try flow.screen(state: state, connect: connect, theme: theme)
                let watcher = SignalWatcher([.terminate, .hangUp]) { _ in flow.stop() }
                defer { watcher.cancel() }
                return lobby.run(on: TerminalSink(terminal))
            }
        }.value
    }

    /// The lobby in line mode, with the rooms entered from it reading the same input. Ctrl-C leaves the room when
    /// one is open (back to the lobby), else the lobby; SIGTERM leaves both.
    public static func lobbyLines(
        _ flow: LobbyFlow, state: LobbyState, connect: @escaping @Sendable () -> LobbyConnection,
        output: @escaping @Sendable (String) -> Void,
        input: @escaping @Sendable () -> String? = readInputLine
    ) throws -> LobbyOutcome {
        let lobby = try flow.lines(state: state, connect: connect, lines: LineSource(read: input), output: output)
        let watcher = SignalWatcher([.interrupt, .terminate]) { signal in flow.stop(lobbyToo: signal == .terminate) }
        defer { watcher.cancel() }
        return lobby.run()
    }

    /// Runs `body` on the terminal, in colour as the environment allows, with Ctrl-C as a key, and with stderr
    /// going to the log named `logName`; the terminal is restored however `body` ends.
    static func onTerminal<T>(logName: String, _ body: (Terminal) throws -> T) throws -> T {
        let environment = ProcessInfo.processInfo.environment
        // C libraries (speexdsp, ALSA) print to stderr; while the screen is up that goes to the log.
        let log = StandardErrorLog(name: logName)
        defer { log.restore() }
        return try Terminal.run(colors: ColorLevel.detect(environment: environment), interruptAsKey: true, body)
    }
}
