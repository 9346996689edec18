import Glibc
import RoomTesting
import Synchronization
import Testing

@testable import RoomTransport

/// A handler that records its ticks and asks for the next one `after` milliseconds later (nil: never).
private final class TickCounter: EventLoopHandler, @unchecked Sendable {
    // Safe to share: `ticks` is behind a mutex; `after` is fixed.
    let ticks = Mutex<[Int64]>([])
    let after: Int64?

    init(after: Int64?) { self.after = after }

    func handle(events: UInt32) {}
    func tick(nowMilliseconds now: Int64) -> Int64? {
        ticks.withLock { $0.append(now) }
        return after.map { now + $0 }
    }
    func loopStopping() {}

    var count: Int { ticks.withLock { $0.count } }

    /// Waits up to 5 s for `count` ticks.
    func wait(for count: Int) -> Bool {
        for _ in 0..<500 where self.count < count { usleep(10_000) }
        return self.count >= count
    }
}

/// The loop ticks its handlers when one of them has something due, not on a fixed beat: an idle client or server
/// sleeps.
@Suite(.ownThread) struct EventLoopTickTests {
    /// Runs `body` with a loop of its own on which each of `handlers` is registered on a descriptor of its own (a
    /// pipe's read end, nothing ever written to it); then stops the loop and closes the pipes.
    private func withLoop(ticking handlers: [TickCounter], _ body: (EventLoop) throws -> Void) throws {
        let loop = try EventLoop(name: "test-ticks")
        var ends: [Int32] = []
        defer {
            loop.shutdown()
            ends.forEach { close($0) }
        }
        for handler in handlers {
            var pair: [Int32] = [-1, -1]
            _ = pipe(&pair)
            ends += pair
            let descriptor = pair[0]
            loop.execute { try? loop.register(descriptor, handler, writable: false) }
        }
        try body(loop)
    }

    @Test func aHandlerWithNothingDueIsTickedOnceAfterRegisteringAndThenOnlyEverySecond() throws {
        let idle = TickCounter(after: nil)
        try withLoop(ticking: [idle]) { _ in
            #expect(idle.wait(for: 1))
            usleep(600_000)
            #expect(idle.count == 1, "\(idle.ticks.withLock { $0 })")
            #expect(idle.wait(for: 2))
            let ticks = idle.ticks.withLock { $0 }
            // The second comes a second after the step of the grid the first came on.
            #expect(ticks[1] - ticks[0] >= EventLoop.longestTickGap - EventLoop.tickMilliseconds, "\(ticks)")
        }
    }

    @Test func aHandlersDueTimeBringsTheTickForwardForEveryHandler() throws {
        let idle = TickCounter(after: nil)
        let busy = TickCounter(after: 50)
        try withLoop(ticking: [idle, busy]) { _ in
            // Due 50 ms after each tick, rounded up to the 100 ms grid; the idle one is ticked with it (one pass
            // ticks every handler).
            #expect(busy.wait(for: 8))
            let ticks = busy.ticks.withLock { $0 }
            #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $1 - $0 >= 50 }, "\(ticks)")
            #expect(idle.count >= ticks.count, "idle \(idle.count), busy \(ticks.count)")
        }
    }

    @Test func anEarlierDeadlineBringsTheTickForward() throws {
        let waiting = TickCounter(after: nil)
        try withLoop(ticking: [waiting]) { loop in
            #expect(waiting.wait(for: 1))
            let asked = EventLoop.now()
            loop.execute { loop.tick(noLaterThan: EventLoop.now() + 20) }
            #expect(waiting.wait(for: 2))
            let second = waiting.ticks.withLock { $0[1] }
            #expect(second - asked < EventLoop.longestTickGap / 2, "asked at \(asked), ticked at \(second)")
        }
    }
}
