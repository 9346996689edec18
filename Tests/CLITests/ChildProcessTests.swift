import Foundation
import RoomTesting
import Testing

/// The test harness's child processes: a child that outlives its deadline says what it printed by then.
@Suite(.ownThread) struct ChildProcessTests {
    @Test func aChildPastItsDeadlineSaysWhatItPrintedAndThatItWasStillRunning() throws {
        let child = try ChildProcess(["sh", "-c", "echo started; exec sleep 20"])
        #expect(
            throws: ChildProcessError.timedOut(command: child.command, seconds: 1, exited: false, printed: "started\n")
        ) {
            try child.finish(seconds: 1)
        }
    }

    /// The child exits at once, but a process it left behind holds its output open: the error says so.
    @Test func aChildWhoseOutputOutlivesItSaysAnotherProcessHeldItOpen() throws {
        let child = try ChildProcess(["sh", "-c", "sleep 3 & echo left"])
        var thrown: ChildProcessError?
        do { _ = try child.finish(seconds: 1.5) } catch let error as ChildProcessError { thrown = error }
        #expect(thrown == .timedOut(command: child.command, seconds: 1.5, exited: true, printed: "left\n"))
        #expect(
            thrown?.description.contains("another process held its output open") == true,
            "\(String(describing: thrown))")
    }
}
