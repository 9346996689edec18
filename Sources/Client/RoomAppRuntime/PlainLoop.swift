import Foundation
import Platform
import RoomApp
import RoomCore

/// The one line runner, under the room's and the lobby's line mode: a thread reads the input and posts each line
/// to the store, and the runner sleeps on the store's inbox, applying what arrives, until the run is over. Nothing
/// is drawn, so time matters only when the state has a moment to be told of (someone missing since a reconnect is
/// to be said gone).
enum LineRunner {
    /// Reads with `next` on a thread of its own (named `name`) and hands each line to `line`, until `next` says
    /// the input ended (then `ended` is called) or that someone else reads now.
    static func read(
        name: String, _ next: @escaping @Sendable () -> LineSource.Read, line: @escaping @Sendable (String) -> Void,
        ended: @escaping @Sendable () -> Void
    ) {
        startThread(named: name) {
            while true {
                switch next() {
                case .line(let text): line(text)
                case .detached: return
                case .end:
                    ended()
                    return
                }
            }
        }
    }

    /// Sleeps on the inbox (`wait`) and applies what arrives (`applyPending`) until `isDone`; at `wakeup`, if
    /// any, it tells the store the time (`tick`) first.
    static func run(
        until isDone: () -> Bool, now: () -> Timestamp, wakeup: () -> Timestamp?, tick: (Timestamp) -> Void,
        wait: (Int) -> Void, applyPending: () -> Void
    ) {
        while !isDone() {
            let time = now()
            if let moment = wakeup(), moment <= time { tick(time) }
            wait(wakeup().map { Int(max(0, $0 - time)) } ?? -1)
            applyPending()
        }
    }
}

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
        LineRunner.read(
            name: "plain-input", { input().map(LineSource.Read.line) ?? .end },
            line: { post(.line($0, at: clock())) }, ended: { post(.inputEnded(at: clock())) })
        let driver = self.driver
        LineRunner.run(
            until: { driver.quitting }, now: clock, wakeup: { driver.state.awayEnds },
            tick: { driver.dispatch(.tick($0)) }, wait: { driver.wait(milliseconds: $0) },
            applyPending: { driver.applyPending() })
        return driver.finish()
    }
}
