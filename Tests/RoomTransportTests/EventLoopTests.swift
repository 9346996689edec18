import Foundation
import RoomTesting
import RoomTransport
import Testing

@Suite(.ownThread) struct EventLoopTests {
    /// The kernel shows the loop's thread by the loop's name (`ps -L`, `top -H`), cut to its 15 bytes.
    @Test func theLoopsThreadCarriesItsNameInTheKernel() throws {
        let loop = try EventLoop(name: "test-named-loop-thread")
        defer { loop.shutdown() }
        let comm = Recorder<String>()
        loop.execute {
            comm.record((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "unreadable")
        }
        #expect(comm.wait(for: 1, seconds: 5) == ["test-named-loop\n"])
    }

    @Test func scheduledTasksRunInDueOrderOnTheLoopAndCancelledOnesNever() throws {
        let loop = try EventLoop(name: "test-timers")
        defer { loop.shutdown() }
        let order = Recorder<String>()
        loop.schedule(after: .milliseconds(400)) { order.record("third \(loop.inLoop)") }
        loop.schedule(after: .milliseconds(200)) { order.record("second \(loop.inLoop)") }
        let cancelled = loop.schedule(after: .milliseconds(300)) { order.record("cancelled") }
        loop.schedule(after: .zero) { order.record("first \(loop.inLoop)") }
        cancelled.cancel()
        loop.schedule(after: .milliseconds(600)) { order.record("last") }
        #expect(order.wait(for: 4) == ["first true", "second true", "third true", "last"])
        #expect(cancelled.isCancelled)
    }

    @Test func executeRunsInOrderOnTheLoopThread() throws {
        let loop = try EventLoop(name: "test-execute")
        defer { loop.shutdown() }
        let seen = Recorder<Int>()
        #expect(!loop.inLoop)
        for index in 0..<100 { loop.execute { seen.record(loop.inLoop ? index : -1) } }
        #expect(seen.wait(for: 100) == Array(0..<100))
    }
}
