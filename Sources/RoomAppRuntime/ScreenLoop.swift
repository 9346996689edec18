import Foundation
import RoomApp
import RoomCore
import Synchronization
import TermUI

/// Where frames go and keys come from: the terminal, or a headless screen in tests and benchmarks.
public protocol FrameSink: AnyObject {
    /// The screen's size now.
    var width: Int { get }
    var height: Int { get }
    /// Shows a frame (writing only what changed since the last one).
    func draw(_ buffer: CellBuffer)
    /// Waits up to `milliseconds` (forever when negative) for keys, or until `wakeDescriptor` is readable;
    /// returns the keys that arrived (none when woken or timed out).
    func waitForKeys(milliseconds: Int, wakeDescriptor: Int32) -> [Key]
}

/// The milliseconds since the Unix epoch, from the system clock.
public func wallClock() -> Timestamp {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Timestamp(now.tv_sec) * 1000 + Timestamp(now.tv_nsec) / 1_000_000
}

/// How a run of the room screen ended.
public enum LoopOutcome: Sendable, Equatable {
    /// The person left (or closed the screen after the room was over).
    case left
    /// The connection failed before the room could be shown, with why.
    case failed(String)
}

/// Counts of what the loop did, for tests and the benchmark.
public struct LoopStatistics: Sendable, Equatable {
    /// Frames drawn (a frame is drawn only when the screen model changed).
    public var frames = 0
    /// Times the loop woke up.
    public var wakeups = 0
    /// Actions applied.
    public var actions = 0

    public init() {}
}

/// Runs the room screen: applies events and keys to the state, and draws a frame only when the screen would
/// change, at most 30 a second. Between frames it sleeps in `poll` until a key, an event (through the inbox's
/// pipe) or the next moment the screen must change by itself (a level bar falling, a notice expiring).
public final class ScreenLoop {
    public private(set) var state: AppState
    public private(set) var statistics = LoopStatistics()
    private let connection: RoomConnection
    private var audioApplied: (mayPublish: Bool, muted: Bool)?
    private let theme: Theme
    private let clock: () -> Timestamp
    private let inbox: Inbox<ConnectionEvent>
    private var quitting = false
    private var ended: String?
    private let stopRequested = Atomic<Bool>(false)

    public init(
        state: AppState, connection: RoomConnection, theme: Theme, clock: @escaping () -> Timestamp = wallClock
    ) throws(RuntimeError) {
        self.state = state
        self.connection = connection
        self.theme = theme
        self.clock = clock
        self.inbox = try Inbox()
    }

    /// Asks the loop to leave the room and return, as on SIGTERM; safe from any thread or a signal source.
    public func requestStop() {
        stopRequested.store(true, ordering: .releasing)
        inbox.wake()
    }

    /// Runs until the person leaves, the connection fails before joining, or a stop is asked for (`requestStop`,
    /// or `stop` returning true, checked on every wakeup); a stop leaves the room cleanly too.
    public func run(on sink: FrameSink, stop: () -> Bool = { false }) -> LoopOutcome {
        let inbox = self.inbox
        connection.start { event in inbox.post(event) }
        var drawnModel: RoomScreenModel?
        var drawnRevision: UInt64 = .max
        var drawnAt: Timestamp?
        var width = -1
        var height = -1
        var buffer = CellBuffer(width: 0, height: 0)
        while !quitting && !stop() && !stopRequested.load(ordering: .acquiring) {
            statistics.wakeups += 1
            for event in inbox.drain() { apply(event) }
            if let failure = ended, !state.room.hasJoined {
                connection.shutdown()
                return .failed(failure)
            }
            if quitting { break }
            var now = clock()
            if let wake = RoomScreenMapper.nextWakeup(state), wake <= now { dispatch(.tick(now)) }
            if sink.width != width || sink.height != height {
                width = sink.width
                height = sink.height
                dispatch(.resize(width: width, height: height))
                buffer = CellBuffer(width: max(0, width), height: max(0, height))
                drawnModel = nil
                drawnAt = nil
            }
            var deadline = RoomScreenMapper.nextWakeup(state)
            if state.revision != drawnRevision {
                if drawnAt.map({ now - $0 >= RoomScreenMapper.frameInterval }) ?? true {
                    let model = RoomScreenMapper.model(state)
                    if model != drawnModel {
                        RoomScreen.render(model, into: &buffer, theme: theme)
                        sink.draw(buffer)
                        statistics.frames += 1
                        drawnModel = model
                        drawnAt = now
                    }
                    drawnRevision = state.revision
                } else {
                    let next = (drawnAt ?? now) + RoomScreenMapper.frameInterval
                    deadline = min(deadline ?? next, next)
                }
            }
            now = clock()
            let timeout = deadline.map { Int(max(0, $0 - now)) } ?? -1
            let keys = sink.waitForKeys(milliseconds: timeout, wakeDescriptor: inbox.wakeDescriptor)
            for key in keys where !quitting {
                if key == .resize { continue }
                dispatch(.key(key, at: clock()))
            }
        }
        if !quitting && ended == nil { connection.leave() }
        finish()
        return .left
    }

    private func apply(_ event: ConnectionEvent) {
        let now = clock()
        switch event {
        case .roles(let roles): dispatch(.roles(roles))
        case .server(let event, let seq): dispatch(.server(event, seq: seq, at: now))
        case .notice(let notice): dispatch(.notice(notice, at: now))
        case .microphone(let level): dispatch(.microphone(level: level))
        case .roundTrip(let milliseconds): dispatch(.roundTrip(milliseconds: milliseconds))
        case .volumes(let volumes):
            dispatch(.volumes(Dictionary(uniqueKeysWithValues: volumes.map { (PeerID($0.key), $0.value) })))
        case .ended(let text):
            ended = text
            if state.leaving {
                quitting = true
            } else if state.room.hasJoined {
                dispatch(.sessionEnded(text + " Press q to close.", at: now))
            }
        }
    }

    private func dispatch(_ action: AppAction) {
        statistics.actions += 1
        for effect in reduceApp(&state, action) {
            switch effect {
            case .send(.leave):
                if ended == nil { connection.leave() }
            case .send(let request):
                connection.send(request)
            case .quit:
                quitting = true
            case .setVolume(let peer, let percent):
                connection.setVolume(percent, for: peer)
            case .say:
                break
            }
        }
        syncAudio()
    }

    /// Tells the connection's sound when the person's right to speak or their mute changed.
    private func syncAudio() {
        guard let me = state.room.me else { return }
        let mayPublish = state.room.roles.can(me.role, .publishAudio)
        if let applied = audioApplied, applied.mayPublish == mayPublish, applied.muted == me.muted { return }
        audioApplied = (mayPublish, me.muted)
        connection.setAudio(mayPublish: mayPublish, muted: me.muted)
    }

    /// Waits briefly for the session to say goodbye, so the leave request reaches the server, then stops it.
    private func finish() {
        let deadline = clock() + 1000
        while ended == nil, clock() < deadline {
            inbox.wait(milliseconds: 50)
            for event in inbox.drain() {
                if case .ended(let text) = event { ended = text }
            }
        }
        connection.shutdown()
    }
}
