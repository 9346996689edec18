import Foundation
import RoomApp
import RoomCore
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
    /// Rings the bell.
    func bell()
    /// Stops the program for the shell's job control and returns once it continues; the next frame is drawn whole.
    func suspend()
}

extension FrameSink {
    public func bell() {}
    public func suspend() {}
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

/// The room screen's front end: it draws the driver's state and hands it the keys. A frame is drawn only when the
/// screen would change, at most 30 a second. Between frames it sleeps in `poll` until a key, an event (through
/// the driver's inbox) or the next moment the screen must change by itself (a level bar falling, a notice
/// expiring), which it tells the driver as a tick.
public final class ScreenLoop {
    private let driver: RoomDriver
    private let theme: Theme
    private var frames = 0
    private var wakeups = 0

    public init(
        state: AppState, connection: RoomConnection, theme: Theme,
        clock: @escaping @Sendable () -> Timestamp = wallClock
    ) throws(RuntimeError) {
        self.driver = try RoomDriver(state: state, connection: connection, clock: clock)
        self.theme = theme
    }

    /// The state now.
    public var state: AppState { driver.state }

    /// What the loop has done so far.
    public var statistics: LoopStatistics {
        var statistics = LoopStatistics()
        statistics.frames = frames
        statistics.wakeups = wakeups
        statistics.actions = driver.actionsApplied
        return statistics
    }

    /// Asks, from any thread or a signal source, to leave the room and return, as on SIGTERM.
    public var requestStop: @Sendable () -> Void { driver.interrupt }

    /// Runs until the person leaves, the connection fails before joining, or a stop is asked for (`requestStop`,
    /// or `stop` returning true, checked on every wakeup); a stop leaves the room cleanly too.
    public func run(on sink: FrameSink, stop: () -> Bool = { false }) -> LoopOutcome {
        var suspended = false
        driver.frontEnd = RoomDriver.FrontEnd(
            bell: { sink.bell() },
            suspend: {
                sink.suspend()
                suspended = true
            })
        driver.start()
        var drawnModel: RoomScreenModel?
        var drawnRevision: UInt64 = .max
        var drawnAt: Timestamp?
        var width = -1
        var height = -1
        var buffer = CellBuffer(width: 0, height: 0)
        while !driver.quitting {
            wakeups += 1
            driver.applyPending()
            if !driver.quitting, stop() { driver.dispatch(.interrupted(at: driver.now)) }
            if driver.quitting { break }
            var now = driver.now
            if let wake = RoomScreenMapper.nextWakeup(driver.state), wake <= now { driver.dispatch(.tick(now)) }
            if sink.width != width || sink.height != height || suspended {
                suspended = false
                width = sink.width
                height = sink.height
                driver.dispatch(.resize(width: width, height: height))
                buffer = CellBuffer(width: max(0, width), height: max(0, height))
                drawnModel = nil
                drawnAt = nil
            }
            var deadline = RoomScreenMapper.nextWakeup(driver.state)
            if driver.state.revision != drawnRevision {
                if drawnAt.map({ now - $0 >= RoomScreenMapper.frameInterval }) ?? true {
                    let model = RoomScreenMapper.model(driver.state)
                    if model != drawnModel {
                        RoomScreen.render(model, into: &buffer, theme: theme)
                        sink.draw(buffer)
                        frames += 1
                        drawnModel = model
                        drawnAt = now
                    }
                    drawnRevision = driver.state.revision
                } else {
                    let next = (drawnAt ?? now) + RoomScreenMapper.frameInterval
                    deadline = min(deadline ?? next, next)
                }
            }
            now = driver.now
            let timeout = deadline.map { Int(max(0, $0 - now)) } ?? -1
            let keys = sink.waitForKeys(milliseconds: timeout, wakeDescriptor: driver.wakeDescriptor)
            for key in keys where !driver.quitting {
                if key == .resize { continue }
                driver.dispatch(.key(key, at: driver.now))
            }
        }
        return driver.finish()
    }
}
