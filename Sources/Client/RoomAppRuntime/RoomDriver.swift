import Foundation
import Platform
import RoomApp
import RoomCore

/// The milliseconds since the Unix epoch, from the system clock.
public func wallClock() -> Timestamp {
    WallClock.milliseconds()
}

/// How a run of the room ended.
public enum LoopOutcome: Sendable, Equatable {
    /// The person left (or closed the screen after the room was over).
    case left
    /// The connection failed before the room could be shown, with why.
    case failed(String)
}

/// Runs the room for both front ends, the screen (`ScreenLoop`) and line mode (`PlainLoop`): a `Store` over
/// `reduceApp`, and what performs its effects: requests go to the connection, sound commands to the connection's
/// sound, sentences to the front end's `say`, and `.quit` ends the run. It decides nothing itself; the front ends
/// only draw, read keys or lines, and wait.
public final class RoomDriver {
    /// The room and everything the screen keeps beside it.
    public var state: AppState { store.state }
    /// Whether the reducer asked to end the run (`.quit`).
    public private(set) var quitting = false
    /// Actions applied so far.
    public var actionsApplied: Int { store.actionsApplied }
    /// The clock that stamps the actions the front ends make.
    public var clock: @Sendable () -> Timestamp { store.clock }
    private let store: Store<AppState, AppAction, AppEffect>
    private let connection: RoomConnection
    private let say: (String) -> Void
    private var leaveSent = false

    /// What only the front end can do: ring the bell, suspend the program.
    public struct FrontEnd {
        public var bell: () -> Void
        public var suspend: () -> Void

        public init(bell: @escaping () -> Void = {}, suspend: @escaping () -> Void = {}) {
            self.bell = bell
            self.suspend = suspend
        }
    }

    /// The front end's part; line mode has no bell to ring and the terminal suspends it by itself.
    public var frontEnd = FrontEnd()

    /// A driver for `connection`. `say` receives the sentences the reducer has for line mode; `clock` stamps the
    /// actions the front ends make.
    public init(
        state: AppState, connection: RoomConnection, clock: @escaping @Sendable () -> Timestamp = wallClock,
        say: @escaping (String) -> Void = { _ in }
    ) throws(RuntimeError) {
        store = try Store(state: state, reducer: reduceApp, clock: clock)
        self.connection = connection
        self.say = say
        store.perform = { [unowned self] effect in perform(effect) }
    }

    /// The descriptor that becomes readable when something was posted.
    public var wakeDescriptor: Int32 { store.wakeDescriptor }

    /// Hands an action to the driver from any thread; it is applied at the next `applyPending`.
    public var post: @Sendable (AppAction) -> Void { store.post }

    /// Asks, from any thread, to leave the room at once (a signal, the end of input): posts `.interrupted`.
    public var interrupt: @Sendable () -> Void {
        let post = store.post
        let clock = store.clock
        return { post(.interrupted(at: clock())) }
    }

    /// The time for an action made now.
    public var now: Timestamp { store.clock() }

    /// Connects: the connection's events start arriving in the inbox.
    public func start() {
        connection.start(deliver: store.post)
    }

    /// Applies everything posted so far, in order.
    public func applyPending() { store.applyPending() }

    /// Waits up to `milliseconds` (forever when negative) for something to be posted.
    public func wait(milliseconds: Int) { store.wait(milliseconds: milliseconds) }

    /// Applies one action and carries out its effects.
    public func dispatch(_ action: AppAction) { store.dispatch(action) }

    private func perform(_ effect: AppEffect) {
        switch effect {
        case .send(.leave):
            guard !leaveSent, !state.sessionOver else { return }
            leaveSent = true
            connection.leave()
        case .send(let request):
            connection.send(request)
        case .sound(let command):
            connection.perform(command)
        case .say(let sentence):
            say(sentence)
        case .quit:
            quitting = true
        case .bell:
            frontEnd.bell()
        case .suspend:
            frontEnd.suspend()
        case .retryNow:
            connection.retryNow()
        }
    }

    /// Ends the run: leaves the room if that has not been asked yet, waits up to `grace` for the session to say
    /// goodbye (so the leave reaches the server), applying what arrives, then stops the connection.
    public func finish(grace: Duration = .seconds(1)) -> LoopOutcome {
        if !leaveSent, !state.sessionOver {
            leaveSent = true
            connection.leave()
        }
        let deadline = ContinuousClock.now + grace
        while !state.sessionOver, ContinuousClock.now < deadline {
            store.wait(milliseconds: 50)
            store.applyPending()
        }
        connection.shutdown()
        return state.failure.map(LoopOutcome.failed) ?? .left
    }
}
