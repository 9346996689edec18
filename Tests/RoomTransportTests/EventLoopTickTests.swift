import Glibc
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
@Suite struct EventLoopTickTests {
    /// Registers `handler` on a descriptor of its own (a pipe's read end, nothing ever written to it); returns
    /// both ends, to close.
    private func register(_ handler: TickCounter, on loop: EventLoop) -> [Int32] {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        let descriptor = ends[0]
        loop.execute { try? loop.register(descriptor, handler, writable: false) }
        return ends
    }

    @Test func aHandlerWithNothingDueIsTickedOnceAfterRegisteringAndThenOnlyEverySecond() throws {
        let loop = try EventLoop(name: "test-ticks")
        defer { loop.shutdown() }
        let idle = TickCounter(after: nil)
        let ends = register(idle, on: loop)
        defer { ends.forEach { close($0) } }
        #expect(idle.wait(for: 1))
        usleep(600_000)
        #expect(idle.count == 1, "\(idle.ticks.withLock { $0 })")
        #expect(idle.wait(for: 2))
        let ticks = idle.ticks.withLock { $0 }
        // The second comes a second after the step of the grid the first came on.
        #expect(ticks[1] - ticks[0] >= EventLoop.longestTickGap - EventLoop.tickMilliseconds, "\(ticks)")
    }

    @Test func aHandlersDueTimeAndAnEarlierDeadlineBringTheTickForward() throws {
        let loop = try EventLoop(name: "test-ticks")
        defer { loop.shutdown() }
        let idle = TickCounter(after: nil)
        let busy = TickCounter(after: 50)
        let ends = register(idle, on: loop) + register(busy, on: loop)
        defer { ends.forEach { close($0) } }
        // Every 50 ms for the busy one; the idle one is ticked with it (one pass ticks every handler).
        #expect(busy.wait(for: 8))
        let ticks = busy.ticks.withLock { $0 }
        #expect(zip(ticks, ticks.dropFirst()).allSatisfy { $1 - $0 >= 50 }, "\(ticks)")

        let alone = try EventLoop(name: "test-ticks")
        defer { alone.shutdown() }
        let waiting = TickCounter(after: nil)
        let own = register(waiting, on: alone)
        defer { own.forEach { close($0) } }
        #expect(waiting.wait(for: 1))
        let asked = EventLoop.now()
        alone.execute { alone.tick(noLaterThan: EventLoop.now() + 20) }
        #expect(waiting.wait(for: 2))
        let second = waiting.ticks.withLock { $0[1] }
        #expect(second - asked < EventLoop.longestTickGap / 2, "asked at \(asked), ticked at \(second)")
    }
}
