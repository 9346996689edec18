import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// A room's state kept up to date from a `RoomSession`: server events and local actions go through RoomCore's
/// `reduce`, and the effects it returns are carried out (requests sent, leaving) or handed to `onChange` (notices,
/// help) for a screen to show. The terminal UI and the demo run on it.
///
/// `dispatch` may be called from any thread; `onChange` runs on whichever thread caused the change and must not
/// block.
public final class SessionStore: Sendable {
    /// What changed: the state after it, the effects a screen should show, and the session's end when it ended.
    public struct Change: Sendable {
        public var state: RoomState
        /// Notices and help to show; sends and leaving are already done.
        public var effects: [Effect]
        /// Set once, when the session is over.
        public var end: SessionEnd?
    }

    private let current: Mutex<RoomState>
    private let onChange: @Sendable (Change) -> Void
    private let sessionBox = Mutex<RoomSession?>(nil)

    /// A store for the room at `url`. `roles` is the table used until the server's snapshot brings its own.
    public init(
        url: String, token: String, roles: RoleTable, tls: TLSClientConfiguration = TLSClientConfiguration(),
        reconnect: ReconnectPolicy = ReconnectPolicy(), onChange: @escaping @Sendable (Change) -> Void
    ) throws(TransportError) {
        current = Mutex(RoomState(roles: roles))
        self.onChange = onChange
        let session = try RoomSession(url: url, token: token, tls: tls, reconnect: reconnect) { [weak self] event in
            self?.apply(event)
        }
        sessionBox.withLock { $0 = session }
    }

    /// The state now.
    public var state: RoomState { current.withLock { $0 } }

    /// Connects; changes follow through `onChange`.
    public func start() {
        sessionBox.withLock { $0 }?.start()
    }

    /// Applies a local action (a key's request, a typed command, a clock tick) and carries out its effects.
    public func dispatch(_ action: RoomAction) {
        let (state, effects) = current.withLock { state -> (RoomState, [Effect]) in
            let effects = reduce(&state, action)
            return (state, effects)
        }
        carryOut(effects, state: state, end: nil)
    }

    /// Leaves the room.
    public func leave() {
        sessionBox.withLock { $0 }?.leave()
    }

    /// Stops the session's thread once it has ended.
    public func shutdown() {
        sessionBox.withLock { $0 }?.shutdown()
    }

    private func apply(_ event: SessionEvent) {
        let (state, effects) = current.withLock { state -> (RoomState, [Effect]) in
            if case .reconnected(let message) = event, case .joined(let snapshot) = message.event {
                adoptRoles(snapshot, into: &state)
            }
            if case .message(let message) = event, case .joined(let snapshot) = message.event {
                adoptRoles(snapshot, into: &state)
            }
            var effects: [Effect] = []
            for action in StoreFeed.actions(for: event, selfID: state.selfID) {
                effects += reduce(&state, action)
            }
            return (state, effects)
        }
        if case .ended(let end) = event {
            carryOut(effects, state: state, end: end)
        } else {
            carryOut(effects, state: state, end: nil)
        }
    }

    /// Starts over with the server's role table when it differs from the one in use.
    private func adoptRoles(_ snapshot: JoinedSnapshot, into state: inout RoomState) {
        guard snapshot.roles != state.roles else { return }
        state = RoomState(roles: snapshot.roles)
    }

    private func carryOut(_ effects: [Effect], state: RoomState, end: SessionEnd?) {
        var shown: [Effect] = []
        let session = sessionBox.withLock { $0 }
        for effect in effects {
            switch effect {
            case .send(let request):
                if case .leave = request { continue }
                session?.send(request)
            case .leave:
                session?.leave()
            case .notice, .showHelp:
                shown.append(effect)
            }
        }
        onChange(Change(state: state, effects: shown, end: end))
    }
}
