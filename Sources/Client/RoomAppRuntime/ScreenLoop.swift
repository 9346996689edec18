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

/// The room screen's front end: the screen runner (`ScreenRunner`) over the room's driver. A frame is drawn only
/// when the screen would change, at most 30 a second; between frames it sleeps until a key, an event (through the
/// driver's inbox) or the next moment the screen must change by itself.
public final class ScreenLoop {
    private let driver: RoomDriver
    private let theme: Theme
    private let runner = ScreenRunner<RoomScreenModel>()

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
        statistics.frames = runner.frames
        statistics.wakeups = runner.wakeups
        statistics.actions = driver.actionsApplied
        return statistics
    }

    /// Asks, from any thread or a signal source, to leave the room and return, as on SIGTERM.
    public var requestStop: @Sendable () -> Void { driver.interrupt }

    /// Runs until the person leaves, the connection fails before joining, or a stop is asked for (`requestStop`,
    /// or `stop` returning true, checked on every wakeup); a stop leaves the room cleanly too.
    public func run(on sink: FrameSink, stop: () -> Bool = { false }) -> LoopOutcome {
        let runner = self.runner
        driver.frontEnd = RoomDriver.FrontEnd(
            bell: { sink.bell() },
            suspend: {
                sink.suspend()
                runner.redrawWhole()
            })
        driver.start()
        withoutActuallyEscaping(stop) { stop in
            runner.run(RoomShow(driver: driver, theme: theme, stop: stop), on: sink)
        }
        return driver.finish()
    }
}

/// The room as the screen runner shows it.
private final class RoomShow: ScreenShow {
    let driver: RoomDriver
    let theme: Theme
    let stop: () -> Bool

    init(driver: RoomDriver, theme: Theme, stop: @escaping () -> Bool) {
        self.driver = driver
        self.theme = theme
        self.stop = stop
    }

    var isDone: Bool { driver.quitting }
    var revision: UInt64 { driver.state.revision }
    var nextWakeup: Timestamp? { RoomScreenMapper.nextWakeup(driver.state) }
    var frameInterval: Timestamp { RoomScreenMapper.frameInterval }
    var now: Timestamp { driver.now }
    var wakeDescriptor: Int32 { driver.wakeDescriptor }

    func applyPending() {
        driver.applyPending()
        if !driver.quitting, stop() { driver.dispatch(.interrupted(at: driver.now)) }
    }

    func tick(_ now: Timestamp) { driver.dispatch(.tick(now)) }
    func resize(width: Int, height: Int) { driver.dispatch(.resize(width: width, height: height)) }
    func press(_ key: Key) { driver.dispatch(.key(key, at: driver.now)) }
    func model() -> RoomScreenModel { RoomScreenMapper.model(driver.state) }
    func render(_ model: RoomScreenModel, into buffer: inout CellBuffer) {
        RoomScreen.render(model, into: &buffer, theme: theme)
    }
}
