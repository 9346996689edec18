import RoomApp
import RoomAppRuntime
import RoomCore
import Synchronization

/// A connection driven by the test or benchmark that holds it: it records requests and sound commands, and
/// delivers what it is told.
public final class ScriptedConnection: RoomConnection, @unchecked Sendable {
    // @unchecked: all state is behind the mutexes; `clock` and `onStart` are set once.
    private let state = Mutex<
        (deliver: (@Sendable (AppAction) -> Void)?, sent: [ClientRequest], left: Bool, retries: Int)
    >((nil, [], false, 0))
    private let soundCommands = Mutex<[SoundCommand]>([])
    private let clock: @Sendable () -> Timestamp
    /// What the connection does when started, e.g. deliver a snapshot.
    private let onStart: @Sendable (ScriptedConnection) -> Void

    /// A connection that runs `onStart` when started; `clock` stamps the end it delivers on `leave()`.
    public init(
        onStart: @escaping @Sendable (ScriptedConnection) -> Void = { _ in },
        clock: @escaping @Sendable () -> Timestamp = wallClock
    ) {
        self.clock = clock
        self.onStart = onStart
    }

    public func start(deliver: @escaping @Sendable (AppAction) -> Void) {
        state.withLock { $0.deliver = deliver }
        onStart(self)
    }

    /// Delivers an action as if the session had reported it.
    public func deliver(_ action: AppAction) {
        state.withLock { $0.deliver }?(action)
    }

    public func send(_ request: ClientRequest) {
        state.withLock { $0.sent.append(request) }
    }

    public func leave() {
        let deliver = state.withLock { state -> (@Sendable (AppAction) -> Void)? in
            state.left = true
            state.sent.append(.leave)
            return state.deliver
        }
        deliver?(.sessionEnded("You left the room.", at: clock()))
    }

    public func shutdown() {}

    public func retryNow() {
        state.withLock { $0.retries += 1 }
    }

    /// How many times `retryNow` was called.
    public var retries: Int { state.withLock { $0.retries } }

    public func perform(_ command: SoundCommand) {
        soundCommands.withLock { $0.append(command) }
    }

    /// The sound commands so far, in order.
    public var sound: [SoundCommand] { soundCommands.withLock { $0 } }

    /// The volumes set so far, as "PEER PERCENT".
    public var volumesSet: [String] {
        sound.compactMap { command in
            guard case .setVolume(let peer, let percent) = command else { return nil }
            return "\(peer.rawValue) \(percent)"
        }
    }

    /// The requests sent so far.
    public var sent: [ClientRequest] { state.withLock { $0.sent } }
}

/// A lobby connection driven by a test: it records refreshes and delivers what it is told.
public final class ScriptedLobbyConnection: LobbyConnection, @unchecked Sendable {
    // @unchecked: all state is behind the mutex.
    private let state = Mutex<
        (deliver: (@Sendable (LobbyEvent) -> Void)?, refreshes: Int, starts: Int, opens: [OpenRequest])
    >((nil, 0, 0, []))
    private let onStart: @Sendable (ScriptedLobbyConnection) -> Void
    private let onOpen: @Sendable (ScriptedLobbyConnection, OpenRequest) -> Void

    /// A room the lobby asked to open.
    public struct OpenRequest: Sendable, Equatable {
        public var name: String
        public var topic: String
        public var id: String
    }

    /// `onOpen` answers a request to open a room, as the server would (or not at all).
    public init(
        onStart: @escaping @Sendable (ScriptedLobbyConnection) -> Void = { _ in },
        onOpen: @escaping @Sendable (ScriptedLobbyConnection, OpenRequest) -> Void = { _, _ in }
    ) {
        self.onStart = onStart
        self.onOpen = onOpen
    }

    public func openRoom(name: String, topic: String, id: String) {
        let request = OpenRequest(name: name, topic: topic, id: id)
        state.withLock { $0.opens.append(request) }
        onOpen(self, request)
    }

    /// The rooms the lobby asked to open, in order.
    public var opens: [OpenRequest] { state.withLock { $0.opens } }

    public func start(deliver: @escaping @Sendable (LobbyEvent) -> Void) {
        state.withLock {
            $0.deliver = deliver
            $0.starts += 1
        }
        onStart(self)
    }

    public func deliver(_ event: LobbyEvent) {
        state.withLock { $0.deliver }?(event)
    }

    public func refresh() { state.withLock { $0.refreshes += 1 } }

    public func stop() { state.withLock { $0.deliver = nil } }

    /// How many times the list was asked for again.
    public var refreshes: Int { state.withLock { $0.refreshes } }
    /// How many times the lobby connected (once, and once more after each room).
    public var starts: Int { state.withLock { $0.starts } }
}
