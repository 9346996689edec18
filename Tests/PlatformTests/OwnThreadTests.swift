import RoomTesting
import Testing

@Suite(.ownThread) struct OwnThreadTests {
    @Test func aBlockingTestRunsOnAQueueOfItsOwn() {
        #expect(OwnThread.threadOwner == "aBlockingTestRunsOnAQueueOfItsOwn()")
    }

    @Test func whatATestAwaitsComesBackToItsQueue() async throws {
        try await Task.sleep(for: .milliseconds(5))
        #expect(OwnThread.threadOwner == "whatATestAwaitsComesBackToItsQueue()")
    }

    @Suite(.ownThread) struct Nested {
        @Test func aSuiteInsideAnotherTakesOneTurn() {
            #expect(OwnThread.threadOwner == "aSuiteInsideAnotherTakesOneTurn()")
        }
    }
}

@Test func withoutTheTraitATestRunsOnTheSharedThreads() {
    #expect(OwnThread.threadOwner == nil)
}
