import Dispatch
import Glibc
import RoomTesting
import RoomTransport
import Synchronization
import Testing

@testable import RoomServer

@Suite(.ownThread) struct MemoryReturnTests {
    /// Counts the returns, from whichever thread makes them.
    final class Returns: Sendable {
        let count = Atomic<Int>(0)
    }

    /// Departures below the threshold return nothing; the one that crosses it schedules one return, made after
    /// the delay (not at once), however many more leave meanwhile; then the count starts again.
    @Test func oneReturnOnceEnoughHaveLeftAfterTheDelay() throws {
        let loop = try EventLoop(name: "test-memory")
        defer { loop.shutdown() }
        let returns = Returns()
        let memory = MemoryReturn(threshold: 100, delay: .milliseconds(300)) {
            returns.count.add(1, ordering: .relaxed)
        }
        let below = onLoop(loop) { () -> (Bool, Int) in
            memory.departed(60, loop: loop)
            memory.departed(39, loop: loop)
            return (memory.isScheduled, memory.departures)
        }
        #expect(below == (false, 99))
        let crossed = onLoop(loop) { () -> (Bool, Int) in
            memory.departed(1, loop: loop)
            memory.departed(500, loop: loop)
            return (memory.isScheduled, memory.departures)
        }
        #expect(crossed == (true, 600))
        usleep(100_000)
        #expect(returns.count.load(ordering: .relaxed) == 0)
        usleep(900_000)
        #expect(returns.count.load(ordering: .relaxed) == 1)
        let after = onLoop(loop) { (memory.isScheduled, memory.departures) }
        #expect(after == (false, 0))
    }

    /// Departures that go on move the return on, but never past the longest wait after the crossing.
    @Test func laterDeparturesPutTheReturnOffUpToTheLongestWait() throws {
        let loop = try EventLoop(name: "test-memory")
        defer { loop.shutdown() }
        let returns = Returns()
        let memory = MemoryReturn(threshold: 10, delay: .milliseconds(1000), longestWait: .milliseconds(2500)) {
            returns.count.add(1, ordering: .relaxed)
        }
        // Ten departures every 200 ms for 3 s: each would put the return a second further off. The longest wait
        // holds it at about 2.4 s (the last move that fits); the departures after it start the next count, whose
        // return is due a second after the last of them.
        for _ in 0..<15 {
            onLoop(loop) { memory.departed(10, loop: loop) }
            usleep(200_000)
        }
        #expect(returns.count.load(ordering: .relaxed) == 1)
        usleep(1_500_000)
        #expect(returns.count.load(ordering: .relaxed) == 2)
    }

    /// Without a loop (a server not yet listening), the return is made at once.
    @Test func withoutALoopTheReturnIsMadeAtOnce() {
        let returns = Returns()
        let memory = MemoryReturn(threshold: 10, delay: .seconds(60)) { returns.count.add(1, ordering: .relaxed) }
        memory.departed(9, loop: nil)
        #expect(returns.count.load(ordering: .relaxed) == 0)
        memory.departed(1, loop: nil)
        #expect(returns.count.load(ordering: .relaxed) == 1)
        #expect(memory.departures == 0)
    }
}
