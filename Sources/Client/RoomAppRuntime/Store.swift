import RoomCore

/// The one driver under every front end, in the shape of The Composable Architecture's `Store`: it holds a
/// state, applies actions to it with a pure reducer, and hands each effect the reducer returns to `perform`,
/// whose results come back as actions. It decides nothing itself. The room (`RoomDriver`, over `reduceApp`) and
/// the lobby (`LobbyDriver`, over `reduceLobby`) are both a store and what performs their effects.
///
/// What happens elsewhere (a connection's events, lines read on another thread, a signal) arrives as actions
/// through `post`, from any thread, and waits in an inbox until the front end calls `applyPending`; actions
/// posted while a reduce runs queue behind it. The inbox's descriptor lets the front end sleep in `poll` until
/// there is work.
public final class Store<State, Action: Sendable, Effect> {
    /// The state now.
    public private(set) var state: State
    /// Actions applied so far.
    public private(set) var actionsApplied = 0
    /// The clock that stamps the actions the front ends make.
    public let clock: @Sendable () -> Timestamp
    private let reducer: (inout State, Action) -> [Effect]
    private let inbox: Inbox<Action>
    /// Carries out one effect; set by whoever runs the store, before the first action.
    var perform: (Effect) -> Void = { _ in }

    /// A store holding `state`, applying actions with `reducer`.
    public init(
        state: State, reducer: @escaping (inout State, Action) -> [Effect],
        clock: @escaping @Sendable () -> Timestamp = wallClock
    ) throws(RuntimeError) {
        self.state = state
        self.reducer = reducer
        self.clock = clock
        inbox = try Inbox()
    }

    /// The descriptor that becomes readable when something was posted.
    public var wakeDescriptor: Int32 { inbox.wakeDescriptor }

    /// Hands an action to the store from any thread; it is applied at the next `applyPending`.
    public var post: @Sendable (Action) -> Void {
        let inbox = self.inbox
        return { inbox.post($0) }
    }

    /// Applies one action and performs its effects, in order.
    public func dispatch(_ action: Action) {
        actionsApplied += 1
        for effect in reducer(&state, action) { perform(effect) }
    }

    /// Applies everything posted so far, in order.
    public func applyPending() {
        for action in inbox.drain() { dispatch(action) }
    }

    /// Waits up to `milliseconds` (forever when negative) for something to be posted.
    public func wait(milliseconds: Int) {
        inbox.wait(milliseconds: milliseconds)
    }

    /// Drops the posted actions `unwanted` says are of no use any more, keeping the others in order.
    func discardPending(where unwanted: (Action) -> Bool) {
        for action in inbox.drain() where !unwanted(action) { inbox.post(action) }
    }
}
