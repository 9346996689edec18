import Foundation
import Platform
import RoomApp
import RoomCore

/// Line mode (`--plain`), for screen readers and logs: prints the sentences the reducer has for what happens,
/// one a line, and hands it the lines read from its input (commands or chat), drawing nothing.
public final class PlainLoop {
    private let driver: RoomDriver

    public init(
        state: AppState, connection: RoomConnection, output: @escaping (String) -> Void,
        clock: @escaping @Sendable () -> Timestamp = wallClock
    ) throws(RuntimeError) {
        self.driver = try RoomDriver(state: state, connection: connection, clock: clock, say: output)
    }

    /// The state now.
    public var state: AppState { driver.state }

    /// Asks the loop to leave the room, as Ctrl-C does; safe from any thread.
    public var interrupt: @Sendable () -> Void { driver.interrupt }

    /// Runs until the session ends. `input` is called on a thread of its own and returns the next line, or
    /// `nil` at the end of input (which leaves the room, once the room has answered: a failure to connect is
    /// still what the program reports).
    public func run(input: @escaping @Sendable () -> String?) -> LoopOutcome {
        driver.start()
        let post = driver.post
        let clock = driver.clock
        startThread(named: "plain-input") {
            while let line = input() { post(.line(line, at: clock())) }
            post(.inputEnded(at: clock()))
        }
        while !driver.quitting {
            // Nothing is drawn, so time matters only when someone missing since a reconnect is to be said gone.
            let now = clock()
            if let away = driver.state.awayEnds, away <= now { driver.dispatch(.tick(now)) }
            driver.wait(milliseconds: driver.state.awayEnds.map { Int(max(0, $0 - now)) } ?? -1)
            driver.applyPending()
        }
        return driver.finish()
    }
}
