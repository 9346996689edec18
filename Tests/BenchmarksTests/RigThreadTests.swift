import BenchmarkSupport
import Foundation
import RoomTesting
import Synchronization
import Testing

@Suite(.ownThread) struct RigThreadTests {
    @Test func aRigThreadStandsAsideUnderTheIdlePolicyAndStepsBack() {
        let seen = Mutex<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let before = RigThread.isStandingAside
            let aside = RigThread.standAside()
            let during = RigThread.isStandingAside
            let back = RigThread.stepBack()
            seen.withLock { $0 = [before, aside, during, back, RigThread.isStandingAside] }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(seen.withLock { $0 } == [false, true, true, true, false])
    }
}
