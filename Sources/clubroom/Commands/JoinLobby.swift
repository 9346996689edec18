import ClientAudio
import Foundation
import ProcessSignals
import RoomApp
import RoomAppRuntime
import RoomCore
import RoomProtocol
import Synchronization
import TermCurses
import TermUI

/// `clubroom join SERVER-URL`: the lobby, and the rooms entered from it.
extension JoinCommand {
    static func runLobby(
        link: ClubroomLink, entry: Entry, roles: RoleTable, audio: RoomAudioSettings, options: Options
    ) async throws -> ExitStatus {
        let lobbyToken = try entry.lobbyToken()
        let server = link.server
        let connect: () -> LobbyConnection = { DirectoryConnection(url: server.directoryURL, token: lobbyToken) }
        /// A room's connection, with what opens it.
        func roomConnection(_ room: String) -> Result<SessionConnection, JoinFailure> {
            do {
                let credential = try entry.credential(forRoom: room, at: server)
                return .success(
                    SessionConnection(
                        url: server.roomURL(room), token: credential.token, headers: credential.headers,
                        withInvite: credential.invite, audio: audio))
            } catch let failure as JoinFailure {
                return .failure(failure)
            } catch {
                return .failure(JoinFailure(text: "\(error)"))
            }
        }
        let state = LobbyState(server: server.displayName, lineMode: options.plain)
        let outcome: LobbyOutcome
        if options.plain {
            outcome = try runPlainLobby(state: state, connect: connect, roles: roles, roomConnection: roomConnection)
        } else {
            outcome = try await runScreenLobby(
                state: state, connect: connect, roles: roles, roomConnection: roomConnection, ascii: options.ascii)
        }
        switch outcome {
        case .quit: return .success
        case .failed(let why): throw JoinFailure(text: why)
        }
    }

    private static func runScreenLobby(
        state: LobbyState, connect: @escaping () -> LobbyConnection, roles: RoleTable,
        roomConnection: @escaping (String) -> Result<SessionConnection, JoinFailure>, ascii: Bool
    ) async throws -> LobbyOutcome {
        let options = (ascii: ascii, plain: false)
        // The screen runs on a thread of its own; these are handed to it and used there only.
        nonisolated(unsafe) let connect = connect
        nonisolated(unsafe) let roomConnection = roomConnection
        return try await Task.detached { () throws -> LobbyOutcome in
            let environment = ProcessInfo.processInfo.environment
            // C libraries (speexdsp, ALSA) print to stderr; while the screen is up that goes to the log.
            let log = StandardErrorLog(name: "join")
            defer { log.restore() }
            return try Terminal.run(colors: ColorLevel.detect(environment: environment), interruptAsKey: true) {
                terminal in
                let theme = Theme(level: terminal.colorLevel, ascii: options.ascii)
                // The room open now, so a signal can leave it before the lobby quits.
                nonisolated(unsafe) var currentRoom: ScreenLoop?
                let roomLock = NSLock()
                nonisolated(unsafe) var lobbyStop: (@Sendable () -> Void)?
                let lobby = try LobbyScreenLoop(state: state, connect: connect, theme: theme) { room, sink in
                    switch roomConnection(room) {
                    case .failure(let failure): return failure.text
                    case .success(let connection):
                        let roomState = AppState(roles: roles, ascii: options.ascii, lineMode: false)
                        guard let loop = try? ScreenLoop(state: roomState, connection: connection, theme: theme) else {
                            return "The room's screen could not start."
                        }
                        roomLock.withLock { currentRoom = loop }
                        defer { roomLock.withLock { currentRoom = nil } }
                        switch loop.run(on: sink) {
                        case .left: return nil
                        case .failed(let why): return why
                        }
                    }
                }
                lobbyStop = lobby.requestStop
                // SIGTERM and SIGHUP (the terminal went away) leave the room, if one is open, then the lobby; the
                // terminal is restored on the way out of Terminal.run.
                let signals = SignalWatcher([.terminate, .hangUp]) { _ in
                    lobbyStop?()
                    roomLock.withLock { currentRoom }?.requestStop()
                }
                defer { signals.cancel() }
                return lobby.run(on: TerminalSink(terminal))
            }
        }.value
    }

    private static func runPlainLobby(
        state: LobbyState, connect: @escaping () -> LobbyConnection, roles: RoleTable,
        roomConnection: @escaping (String) -> Result<SessionConnection, JoinFailure>
    ) throws -> LobbyOutcome {
        let lines = LineSource { readLine(strippingNewline: true) }
        nonisolated(unsafe) var currentRoom: PlainLoop?
        let roomLock = NSLock()
        let lobby = try LobbyPlainLoop(
            state: state, connect: connect, lines: lines, output: { writeOutput($0 + "\n") }
        ) { room, input in
            switch roomConnection(room) {
            case .failure(let failure): return failure.text
            case .success(let connection):
                let roomState = AppState(roles: roles, ascii: false, lineMode: true)
                guard
                    let loop = try? PlainLoop(
                        state: roomState, connection: connection, output: { writeOutput($0 + "\n") })
                else { return "The room could not start." }
                roomLock.withLock { currentRoom = loop }
                defer { roomLock.withLock { currentRoom = nil } }
                switch loop.run(input: input) {
                case .left: return nil
                case .failed(let why): return why
                }
            }
        }
        // Ctrl-C leaves the room when one is open (back to the lobby), else the lobby; SIGTERM leaves both.
        let interruptLobby = lobby.interrupt
        let signals = SignalWatcher([.interrupt, .terminate]) { signal in
            let room = roomLock.withLock { currentRoom }
            room?.interrupt()
            if room == nil || signal == .terminate { interruptLobby() }
        }
        defer { signals.cancel() }
        return lobby.run()
    }
}
