import Foundation
import Platform
import RoomApp
import RoomCore
import Synchronization
import TermUI

/// Runs the lobby for both front ends: a `Store` over `reduceLobby`, and what performs its effects; like
/// `RoomDriver`, it decides nothing itself. A room is entered through `enter`, which runs the room's own
/// front end and returns why the room is over when it was not the person's choice; the lobby's connection is
/// closed meanwhile (the lobby is not watched from inside a room) and opened again on the way back.
final class LobbyDriver {
    var state: LobbyState { store.state }
    var clock: @Sendable () -> Timestamp { store.clock }
    private let store: Store<LobbyState, LobbyAction, LobbyEffect>
    private let connect: () -> LobbyConnection
    private var connection: LobbyConnection?
    /// Counts connections, so the events of one that was closed are not heard.
    private let generation = AtomicCounter()
    private let say: (String) -> Void
    /// The room the last actions asked to join.
    private var joining: RoomEntry?

    init(
        state: LobbyState, connect: @escaping () -> LobbyConnection, clock: @escaping @Sendable () -> Timestamp,
        say: @escaping (String) -> Void
    ) throws(RuntimeError) {
        store = try Store(state: state, reducer: reduceLobby, clock: clock)
        self.connect = connect
        self.say = say
        store.perform = { [unowned self] effect in perform(effect) }
    }

    var wakeDescriptor: Int32 { store.wakeDescriptor }

    var post: @Sendable (LobbyAction) -> Void { store.post }

    func open() {
        let connection = connect()
        self.connection = connection
        let generation = self.generation.increment()
        let current = self.generation
        let post = store.post
        let clock = store.clock
        connection.start { event in
            // A connection that was closed may still say goodbye; only the current one is heard.
            if current.value == generation { post(.directory(event, at: clock())) }
        }
    }

    func close() {
        generation.increment()
        connection?.stop()
        connection = nil
        // What the old connection sent is of no use (the next one starts with the whole list); anything else
        // that was posted (a line, a signal) still counts.
        store.discardPending { action in
            if case .directory = action { return true }
            return false
        }
    }

    func wait(milliseconds: Int) { store.wait(milliseconds: milliseconds) }

    /// Applies what was posted; returns the room to enter, if an action asked for one.
    func applyPending() -> RoomEntry? {
        joining = nil
        store.applyPending()
        return joining
    }

    /// Applies one action and carries out its effects; returns the room to enter, if it asked for one.
    @discardableResult
    func dispatch(_ action: LobbyAction) -> RoomEntry? {
        joining = nil
        store.dispatch(action)
        return joining
    }

    private func perform(_ effect: LobbyEffect) {
        switch effect {
        case .join(let name): joining = RoomEntry(room: name)
        case .enter(let room, let invite): joining = RoomEntry(room: room, invite: invite)
        case .openRoom(let name, let topic, let id): connection?.openRoom(name: name, topic: topic, id: id)
        case .refresh: connection?.refresh()
        case .say(let sentence): say(sentence)
        case .quit: break
        }
    }
}

/// A room the lobby enters: by its name, with the lobby's own credential, or with the host's link the server
/// gave for a room this person just opened.
public struct RoomEntry: Sendable, Equatable, CustomStringConvertible {
    public var room: String
    /// The host's link for a room opened from the lobby; nil to enter as the lobby's credential allows.
    public var invite: String?

    public init(room: String, invite: String? = nil) {
        self.room = room
        self.invite = invite
    }

    public var description: String { room }
}

/// How a run of the lobby ended.
public enum LobbyOutcome: Sendable, Equatable {
    /// The person quit.
    case quit
    /// The lobby never opened (its connection was refused or failed before the first list), with why.
    case failed(String)
}

/// The lobby's screen: the screen runner (`ScreenRunner`) over the lobby's driver, which runs a room on the same
/// screen when one is joined (so `q` in the room comes back here).
public final class LobbyScreenLoop {
    private let driver: LobbyDriver
    private let theme: Theme
    private let enter: (RoomEntry, FrameSink) -> String?
    private let stopRequested = AtomicCounter()
    private let runner = ScreenRunner<LobbyScreenModel>()

    /// `enter` runs a room on the sink until the person leaves it, and returns why it is over when that was not
    /// their choice (a refusal, the room ending), else nil.
    public init(
        state: LobbyState, connect: @escaping () -> LobbyConnection, theme: Theme,
        clock: @escaping @Sendable () -> Timestamp = wallClock, enter: @escaping (RoomEntry, FrameSink) -> String?
    ) throws(RuntimeError) {
        driver = try LobbyDriver(state: state, connect: connect, clock: clock, say: { _ in })
        self.theme = theme
        self.enter = enter
    }

    /// The state now.
    public var state: LobbyState { driver.state }

    /// Asks, from any thread or a signal source, to quit the lobby (the room, if one is open, is left first by
    /// its own loop).
    public var requestStop: @Sendable () -> Void {
        let flag = stopRequested
        let post = driver.post
        let clock = driver.clock
        return {
            flag.increment()
            post(.interrupted(at: clock()))
        }
    }

    /// Whether a stop was asked for: the room's loop checks it to leave too.
    public var isStopping: Bool { stopRequested.value > 0 }

    public func run(on sink: FrameSink) -> LobbyOutcome {
        driver.open()
        let show = LobbyShow(driver: driver, theme: theme, stopping: stopRequested)
        while true {
            runner.run(show, on: sink)
            guard let room = show.joining, !driver.state.quitting, !isStopping else { break }
            show.joining = nil
            // Draw "joining…" before the room's connection takes over the screen.
            runner.drawNow(show, on: sink)
            driver.close()
            let problem = enter(room, sink)
            if isStopping { break }
            driver.open()
            driver.dispatch(.returned(from: room.room, problem: problem, at: driver.clock()))
            // The room drew over the whole screen: draw everything again.
            runner.redrawWhole()
        }
        driver.close()
        return driver.state.failure.map(LobbyOutcome.failed) ?? .quit
    }
}

/// The lobby as the screen runner shows it; a room to enter ends the runner's run.
private final class LobbyShow: ScreenShow {
    let driver: LobbyDriver
    let theme: Theme
    let stopping: AtomicCounter
    /// The room an action asked to join.
    var joining: RoomEntry?

    init(driver: LobbyDriver, theme: Theme, stopping: AtomicCounter) {
        self.driver = driver
        self.theme = theme
        self.stopping = stopping
    }

    var isDone: Bool { joining != nil || driver.state.quitting || stopping.value > 0 }
    var revision: UInt64 { driver.state.revision }
    var nextWakeup: Timestamp? { driver.state.nextWakeup }
    var frameInterval: Timestamp { 0 }
    var now: Timestamp { driver.clock() }
    var wakeDescriptor: Int32 { driver.wakeDescriptor }

    func applyPending() {
        if let room = driver.applyPending() { joining = room }
    }

    func tick(_ now: Timestamp) { driver.dispatch(.tick(now)) }
    func resize(width: Int, height: Int) { driver.dispatch(.resize(width: width, height: height)) }
    func press(_ key: Key) {
        if let room = driver.dispatch(.key(key, at: driver.clock())) { joining = room }
    }
    func model() -> LobbyScreenModel { LobbyScreenMapper.model(driver.state) }
    func render(_ model: LobbyScreenModel, into buffer: inout CellBuffer) {
        LobbyScreen.render(model, into: &buffer, theme: theme)
    }
}

/// Lines from the person's input, shared by the lobby and the rooms entered from it in line mode: one thread
/// reads the input; whoever reads now holds the current generation, and a reader of an older one is told it
/// was detached, so no line meant for the lobby is taken by a room that is over.
public final class LineSource: @unchecked Sendable {
    // @unchecked: everything is behind `condition`.
    public enum Read: Sendable, Equatable {
        case line(String)
        /// The reader's generation is over: someone else reads now.
        case detached
        case end
    }

    private let condition = NSCondition()
    private var lines: [String] = []
    private var ended = false
    private var generation = 0

    /// Starts reading `read` (which returns nil at the end) on a thread of its own.
    public init(read: @escaping @Sendable () -> String?) {
        startThread(named: "clubroom-input") { [self] in
            while let line = read() {
                condition.withLock {
                    lines.append(line)
                    condition.broadcast()
                }
            }
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }
    }

    /// The current generation.
    public var current: Int { condition.withLock { generation } }

    /// Ends the current generation (its reader gets `.detached`) and returns the new one.
    public func advance() -> Int {
        condition.withLock {
            generation += 1
            condition.broadcast()
            return generation
        }
    }

    /// The next line for a reader of generation `reader`.
    public func next(_ reader: Int) -> Read {
        condition.withLock {
            while lines.isEmpty, !ended, reader == generation { condition.wait() }
            if reader != generation { return .detached }
            if lines.isEmpty { return .end }
            return .line(lines.removeFirst())
        }
    }
}

/// The lobby in line mode (`--plain`): prints the rooms and what happens as sentences, reads what to join from
/// the input, and runs a room's line mode when one is joined.
public final class LobbyPlainLoop {
    private let driver: LobbyDriver
    private let lines: LineSource
    private let enter: (RoomEntry, @escaping @Sendable () -> String?) -> String?

    /// `enter` runs a room in line mode with the given input until it is over, and returns why when that was not
    /// the person's choice, else nil.
    public init(
        state: LobbyState, connect: @escaping () -> LobbyConnection, lines: LineSource,
        output: @escaping (String) -> Void, clock: @escaping @Sendable () -> Timestamp = wallClock,
        enter: @escaping (RoomEntry, @escaping @Sendable () -> String?) -> String?
    ) throws(RuntimeError) {
        driver = try LobbyDriver(state: state, connect: connect, clock: clock, say: output)
        self.lines = lines
        self.enter = enter
    }

    public var state: LobbyState { driver.state }

    /// Asks, from any thread, to quit the lobby, as Ctrl-C does.
    public var interrupt: @Sendable () -> Void {
        let post = driver.post
        let clock = driver.clock
        return { post(.interrupted(at: clock())) }
    }

    public func run() -> LobbyOutcome {
        driver.open()
        startReader()
        var joining: RoomEntry?
        let driver = self.driver
        while true {
            LineRunner.run(
                until: { joining != nil || driver.state.quitting }, now: driver.clock, wakeup: { nil },
                tick: { _ in }, wait: { driver.wait(milliseconds: $0) },
                applyPending: { joining = driver.applyPending() })
            guard let room = joining, !driver.state.quitting else { break }
            joining = nil
            driver.close()
            let generation = lines.advance()
            let source = lines
            let problem = enter(room) {
                if case .line(let line) = source.next(generation) { return line }
                return nil
            }
            _ = lines.advance()
            driver.open()
            driver.dispatch(.returned(from: room.room, problem: problem, at: driver.clock()))
            startReader()
        }
        driver.close()
        _ = lines.advance()
        return driver.state.failure.map(LobbyOutcome.failed) ?? .quit
    }

    /// Reads lines for the lobby until the generation moves on (a room takes over) or the input ends.
    private func startReader() {
        let generation = lines.current
        let source = lines
        let post = driver.post
        let clock = driver.clock
        LineRunner.read(
            name: "lobby-input", { source.next(generation) }, line: { post(.line($0, at: clock())) },
            ended: { post(.interrupted(at: clock())) })
    }
}

/// A counter any thread may read and bump.
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    var value: Int { storage.load(ordering: .acquiring) }

    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .acquiringAndReleasing).newValue }
}
