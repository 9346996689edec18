import Foundation
import Platform
import RoomApp
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization
import TermUI

/// A lobby's connection to the room directory: the real one, or a scripted one in tests.
public protocol LobbyConnection: AnyObject, Sendable {
    /// Connects; events then arrive through `deliver`, from any thread.
    func start(deliver: @escaping @Sendable (LobbyEvent) -> Void)
    /// Asks for the whole list again.
    func refresh()
    /// Closes the connection and stops its threads.
    func stop()
}

/// The real connection: a `DirectorySession` to `…/rooms` with a server invite.
public final class DirectoryConnection: LobbyConnection, @unchecked Sendable {
    // @unchecked: `session` is set once in `start`, under its mutex, and only read afterwards.
    private let url: String
    private let token: String
    private let tls: TLSClientConfiguration
    private let session = Mutex<DirectorySession?>(nil)

    public init(url: String, token: String, tls: TLSClientConfiguration = TLSClientConfiguration()) {
        self.url = url
        self.token = token
        self.tls = tls
    }

    public func start(deliver: @escaping @Sendable (LobbyEvent) -> Void) {
        do {
            let session = try DirectorySession(url: url, token: token, tls: tls) { event in
                deliver(Self.convert(event))
            }
            self.session.withLock { $0 = session }
            session.start()
        } catch {
            deliver(.ended("Cannot reach the lobby at \(url): \(error.description)."))
        }
    }

    public func refresh() {
        session.withLock { $0 }?.refresh()
    }

    public func stop() {
        guard let session = session.withLock({ $0 }) else { return }
        session.stop()
        session.shutdown()
    }

    static func convert(_ event: DirectoryEvent) -> LobbyEvent {
        switch event {
        case .rooms(let rooms): .rooms(rooms)
        case .changed(let changes): .changed(changes)
        case .reconnecting(let attempt): .reconnecting(attempt: attempt)
        case .error(let code, let message): .error(code: code, message: message)
        case .ended(let end): .ended(describe(end))
        }
    }

    /// Why the lobby's connection is over, in plain words.
    public static func describe(_ end: SessionEnd) -> String {
        switch end {
        case .left, .removed, .roomEnded, .replaced: "The lobby closed."
        case .closedByServer(let reason):
            "The server closed the lobby\(reason.isEmpty ? "" : " (\(reason))"). Open it again to come back."
        case .refused(let code, let reason): Refusals.describe(code: code, reason: reason, withInvite: true)
        case .connectionFailed(let problem): "Cannot reach the lobby: \(problem). Check the address and try again."
        }
    }
}

/// A lobby connection driven by a test: it records refreshes and delivers what it is told.
public final class ScriptedLobbyConnection: LobbyConnection, @unchecked Sendable {
    // @unchecked: all state is behind the mutex.
    private let state = Mutex<(deliver: (@Sendable (LobbyEvent) -> Void)?, refreshes: Int, starts: Int)>((nil, 0, 0))
    private let onStart: @Sendable (ScriptedLobbyConnection) -> Void

    public init(onStart: @escaping @Sendable (ScriptedLobbyConnection) -> Void = { _ in }) {
        self.onStart = onStart
    }

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

/// Holds the lobby's state, applies actions with `reduceLobby` and carries out its effects, for both front ends;
/// like `RoomDriver`, it decides nothing itself. A room is entered through `enter`, which runs the room's own
/// front end and returns why the room is over when it was not the person's choice; the lobby's connection is
/// closed meanwhile (the lobby is not watched from inside a room) and opened again on the way back.
final class LobbyDriver {
    private(set) var state: LobbyState
    let clock: @Sendable () -> Timestamp
    private let connect: () -> LobbyConnection
    private var connection: LobbyConnection?
    /// Counts connections, so the events of one that was closed are not heard.
    private let generation = AtomicCounter()
    private let inbox: Inbox<LobbyAction>
    private let say: (String) -> Void

    init(
        state: LobbyState, connect: @escaping () -> LobbyConnection, clock: @escaping @Sendable () -> Timestamp,
        say: @escaping (String) -> Void
    ) throws(RuntimeError) {
        self.state = state
        self.connect = connect
        self.clock = clock
        self.say = say
        inbox = try Inbox()
    }

    var wakeDescriptor: Int32 { inbox.wakeDescriptor }

    var post: @Sendable (LobbyAction) -> Void {
        let inbox = self.inbox
        return { inbox.post($0) }
    }

    func open() {
        let connection = connect()
        self.connection = connection
        let generation = self.generation.increment()
        let current = self.generation
        let inbox = self.inbox
        let clock = self.clock
        connection.start { event in
            // A connection that was closed may still say goodbye; only the current one is heard.
            if current.value == generation { inbox.post(.directory(event, at: clock())) }
        }
    }

    func close() {
        generation.increment()
        connection?.stop()
        connection = nil
        // What the old connection sent is of no use (the next one starts with the whole list); anything else
        // that was posted (a line, a signal) still counts.
        let kept = inbox.drain().filter { action in
            if case .directory = action { return false }
            return true
        }
        for action in kept { inbox.post(action) }
    }

    func wait(milliseconds: Int) { inbox.wait(milliseconds: milliseconds) }

    /// Applies what was posted; returns the room to enter, if an action asked for one.
    func applyPending() -> String? {
        var room: String?
        for action in inbox.drain() {
            if let wanted = dispatch(action) { room = wanted }
        }
        return room
    }

    /// Applies one action and carries out its effects; returns the room to enter, if it asked for one.
    @discardableResult
    func dispatch(_ action: LobbyAction) -> String? {
        var room: String?
        for effect in reduceLobby(&state, action) {
            switch effect {
            case .join(let name): room = name
            case .refresh: connection?.refresh()
            case .say(let sentence): say(sentence)
            case .quit: break
            }
        }
        return room
    }
}

/// How a run of the lobby ended.
public enum LobbyOutcome: Sendable, Equatable {
    /// The person quit.
    case quit
    /// The lobby never opened (its connection was refused or failed before the first list), with why.
    case failed(String)
}

/// The lobby's screen: draws the driver's state, hands it the keys, and runs a room on the same screen when one
/// is joined (so `q` in the room comes back here).
public final class LobbyScreenLoop {
    private let driver: LobbyDriver
    private let theme: Theme
    private let enter: (String, FrameSink) -> String?
    private let stopRequested = AtomicCounter()
    public private(set) var frames = 0

    /// `enter` runs a room on the sink until the person leaves it, and returns why it is over when that was not
    /// their choice (a refusal, the room ending), else nil.
    public init(
        state: LobbyState, connect: @escaping () -> LobbyConnection, theme: Theme,
        clock: @escaping @Sendable () -> Timestamp = wallClock, enter: @escaping (String, FrameSink) -> String?
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
        var drawn: LobbyScreenModel?
        var drawnRevision: UInt64 = .max
        var width = -1
        var height = -1
        var buffer = CellBuffer(width: 0, height: 0)
        while !driver.state.quitting, !isStopping {
            var room = driver.applyPending()
            if driver.state.quitting || isStopping { break }
            var now = driver.clock()
            if let wake = driver.state.nextWakeup, wake <= now { driver.dispatch(.tick(now)) }
            if sink.width != width || sink.height != height {
                width = sink.width
                height = sink.height
                driver.dispatch(.resize(width: width, height: height))
                buffer = CellBuffer(width: max(0, width), height: max(0, height))
                drawn = nil
            }
            if driver.state.revision != drawnRevision {
                let model = LobbyScreenMapper.model(driver.state)
                if model != drawn {
                    LobbyScreen.render(model, into: &buffer, theme: theme)
                    sink.draw(buffer)
                    frames += 1
                    drawn = model
                }
                drawnRevision = driver.state.revision
            }
            if room == nil {
                now = driver.clock()
                let timeout = driver.state.nextWakeup.map { Int(max(0, $0 - now)) } ?? -1
                let keys = sink.waitForKeys(milliseconds: timeout, wakeDescriptor: driver.wakeDescriptor)
                for key in keys where !driver.state.quitting && room == nil {
                    if key == .resize { continue }
                    room = driver.dispatch(.key(key, at: driver.clock())) ?? room
                }
            }
            if let room {
                // Draw "joining…" before the room's connection takes over the screen.
                let model = LobbyScreenMapper.model(driver.state)
                LobbyScreen.render(model, into: &buffer, theme: theme)
                sink.draw(buffer)
                driver.close()
                let problem = enter(room, sink)
                if isStopping { break }
                driver.open()
                driver.dispatch(.returned(from: room, problem: problem, at: driver.clock()))
                // The room drew over the whole screen: draw everything again.
                drawn = nil
                width = -1
            }
        }
        driver.close()
        return driver.state.failure.map(LobbyOutcome.failed) ?? .quit
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
    private let enter: (String, @escaping @Sendable () -> String?) -> String?

    /// `enter` runs a room in line mode with the given input until it is over, and returns why when that was not
    /// the person's choice, else nil.
    public init(
        state: LobbyState, connect: @escaping () -> LobbyConnection, lines: LineSource,
        output: @escaping (String) -> Void, clock: @escaping @Sendable () -> Timestamp = wallClock,
        enter: @escaping (String, @escaping @Sendable () -> String?) -> String?
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
        while !driver.state.quitting {
            driver.wait(milliseconds: -1)
            guard let room = driver.applyPending() else { continue }
            driver.close()
            let generation = lines.advance()
            let source = lines
            let problem = enter(room) {
                if case .line(let line) = source.next(generation) { return line }
                return nil
            }
            _ = lines.advance()
            driver.open()
            driver.dispatch(.returned(from: room, problem: problem, at: driver.clock()))
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
        startThread(named: "lobby-input") {
            while true {
                switch source.next(generation) {
                case .line(let line): post(.line(line, at: clock()))
                case .detached: return
                case .end:
                    post(.interrupted(at: clock()))
                    return
                }
            }
        }
    }
}

/// A counter any thread may read and bump.
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)

    var value: Int { storage.load(ordering: .acquiring) }

    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .acquiringAndReleasing).newValue }
}
