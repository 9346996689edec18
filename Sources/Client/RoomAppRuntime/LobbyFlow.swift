import RoomApp
import RoomCore
import Synchronization
import TermUI

/// A room entered from the lobby that could not be opened, with why in the person's words.
public struct RoomUnavailable: Error, Sendable, Equatable {
    public var why: String

    public init(_ why: String) {
        self.why = why
    }
}

/// What opens a room entered from the lobby (by name, or with the host's link of a room just opened): its
/// connection, or why it cannot be opened.
public typealias RoomOpener = @Sendable (_ entry: RoomEntry) -> Result<any RoomConnection, RoomUnavailable>

/// The lobby → room → lobby hop, for both front ends: it makes the lobby's loop, whose rooms run on the same
/// screen (or read the same input) until they are left, and routes a signal to what is open now. It holds no
/// terminal, so the hop and the signals are tested headless, with a scripted connection and an in-memory screen;
/// `FrontEnds` puts it on the real terminal.
public final class LobbyFlow: Sendable {
    private let roles: RoleTable
    /// Whether rooms are drawn with ASCII only.
    public let ascii: Bool
    private let clock: @Sendable () -> Timestamp
    private let open: RoomOpener
    /// Leaves the room open now; nil while none is.
    private let leaveRoom = Mutex<(@Sendable () -> Void)?>(nil)
    /// Quits the lobby; nil until its loop is made.
    private let quitLobby = Mutex<(@Sendable () -> Void)?>(nil)

    /// A flow whose rooms get their connections from `open` and know the roles from `roles`.
    public init(
        roles: RoleTable, ascii: Bool = false, clock: @escaping @Sendable () -> Timestamp = wallClock,
        open: @escaping RoomOpener
    ) {
        self.roles = roles
        self.ascii = ascii
        self.clock = clock
        self.open = open
    }

    /// The lobby on a screen; a room joined runs on the same screen (so `q` in the room comes back here).
    public func screen(
        state: LobbyState, connect: @escaping @Sendable () -> LobbyConnection, theme: Theme
    ) throws(RuntimeError) -> LobbyScreenLoop {
        let lobby = try LobbyScreenLoop(state: state, connect: connect, theme: theme, clock: clock) {
            [self] room, sink in
            enter(room, lineMode: false, unavailable: "The room's screen could not start.") { state, connection in
                let loop = try ScreenLoop(state: state, connection: connection, theme: theme, clock: clock)
                return (loop.requestStop, { loop.run(on: sink) })
            }
        }
        quitLobby.withLock { $0 = lobby.requestStop }
        return lobby
    }

    /// The lobby in line mode; a room joined reads the same input and writes to the same `output`.
    public func lines(
        state: LobbyState, connect: @escaping @Sendable () -> LobbyConnection, lines: LineSource,
        output: @escaping (String) -> Void
    ) throws(RuntimeError) -> LobbyPlainLoop {
        let lobby = try LobbyPlainLoop(state: state, connect: connect, lines: lines, output: output, clock: clock) {
            [self] room, input in
            enter(room, lineMode: true, unavailable: "The room could not start.") { state, connection in
                let loop = try PlainLoop(state: state, connection: connection, output: output, clock: clock)
                return (loop.interrupt, { loop.run(input: input) })
            }
        }
        quitLobby.withLock { $0 = lobby.interrupt }
        return lobby
    }

    /// A signal's work, from any thread: leaves the room open now, if any, and quits the lobby; with `lobbyToo`
    /// false the lobby is quit only when no room is open (Ctrl-C in line mode goes back to the lobby).
    public func stop(lobbyToo: Bool = true) {
        let room = leaveRoom.withLock { $0 }
        // The lobby first: a room that ends now must find the lobby stopping, not open it again.
        if lobbyToo || room == nil { quitLobby.withLock { $0 }?() }
        room?()
    }

    /// Whether a room is open now.
    public var inRoom: Bool { leaveRoom.withLock { $0 != nil } }

    /// Opens `room` and runs the loop `start` makes for it, with the loop's leave as what a signal does; returns
    /// why the room is over when that was not the person's choice (`unavailable` when the loop cannot start).
    private func enter(
        _ room: RoomEntry, lineMode: Bool, unavailable: String,
        start: (AppState, any RoomConnection) throws -> (
            leave: @Sendable () -> Void, run: () -> LoopOutcome
        )
    ) -> String? {
        let connection: any RoomConnection
        switch open(room) {
        case .failure(let refusal): return refusal.why
        case .success(let opened): connection = opened
        }
        let state = AppState(roles: roles, ascii: lineMode ? false : ascii, lineMode: lineMode)
        guard let loop = try? start(state, connection) else { return unavailable }
        leaveRoom.withLock { $0 = loop.leave }
        defer { leaveRoom.withLock { $0 = nil } }
        switch loop.run() {
        case .left: return nil
        case .failed(let why): return why
        }
    }
}
