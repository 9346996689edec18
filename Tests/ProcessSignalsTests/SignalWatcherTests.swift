import Foundation
import ProcessSignals
import RoomTesting
import Synchronization
import Testing

/// Signals the test suite itself never sees otherwise, so the process's other tests are not disturbed.
let first = ProcessSignal(SIGUSR1, name: "SIGUSR1")
let second = ProcessSignal(SIGUSR2, name: "SIGUSR2")

/// Waits up to two seconds for `condition`.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<200 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// The handler a signal has now.
func disposition(_ signal: ProcessSignal) -> Int {
    var action = sigaction()
    sigaction(signal.number, nil, &action)
    return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
}

/// A handler that counts, installed the ordinary way, to see that a watcher puts it back.
let plainHandlerCalls = Atomic<Int>(0)
func plainHandler(_ signal: Int32) { plainHandlerCalls.add(1, ordering: .relaxed) }

@Suite(.ownThread, .serialized) struct SignalWatcherTests {
    @Test func watchingTheSameSignalAgainWorksAsTheFirstTime() {
        for round in 1...3 {
            let seen = Atomic<Int>(0)
            let watcher = SignalWatcher([first]) { _ in seen.add(1, ordering: .relaxed) }
            kill(getpid(), first.number)
            #expect(eventually { seen.load(ordering: .relaxed) == 1 }, "round \(round)")
            watcher.cancel()
        }
        #expect(disposition(first) == unsafeBitCast(SIG_DFL, to: Int.self))
    }

    @Test func everySignalReachesTheHandlerAndCancellingPutsBackThePreviousHandler() {
        _ = plainHandlerCalls.load(ordering: .relaxed)
        signal(first.number, plainHandler)
        let before = disposition(first)
        let seen = Mutex<[String]>([])
        let watcher = SignalWatcher([first, second]) { signal in seen.withLock { $0.append(signal.name) } }
        #expect(disposition(first) != before)
        kill(getpid(), first.number)
        #expect(eventually { seen.withLock { $0 } == ["SIGUSR1"] })
        kill(getpid(), second.number)
        kill(getpid(), first.number)
        #expect(eventually { seen.withLock { $0.count } == 3 })
        #expect(seen.withLock { $0.sorted() } == ["SIGUSR1", "SIGUSR1", "SIGUSR2"])
        #expect(plainHandlerCalls.load(ordering: .relaxed) == 0)
        watcher.cancel()
        watcher.cancel()
        #expect(disposition(first) == before)
        kill(getpid(), first.number)
        #expect(eventually { plainHandlerCalls.load(ordering: .relaxed) == 1 })
        #expect(seen.withLock { $0.count } == 3)
        signal(first.number, SIG_DFL)
        signal(second.number, SIG_DFL)
    }

    @Test func firstOfCallsOnceWhateverArrivesNext() {
        let calls = Mutex<[String]>([])
        let watcher = SignalWatcher(firstOf: [first, second]) { signal in calls.withLock { $0.append(signal.name) } }
        kill(getpid(), second.number)
        #expect(eventually { !calls.withLock { $0 }.isEmpty })
        kill(getpid(), first.number)
        kill(getpid(), second.number)
        usleep(100_000)
        #expect(calls.withLock { $0 } == ["SIGUSR2"])
        watcher.cancel()
        #expect(disposition(first) == unsafeBitCast(SIG_DFL, to: Int.self))
    }

    @Test func waitingForTheFirstReturnsItAndKeepsTheRestIgnored() async {
        Thread.detachNewThread {
            usleep(50_000)
            kill(getpid(), first.number)
        }
        let (signal, watcher) = await SignalWatcher.first(of: [first, second])
        #expect(signal == first)
        // Still watched: a second one does not end the process.
        kill(getpid(), first.number)
        usleep(50_000)
        watcher.cancel()
        #expect(disposition(first) == unsafeBitCast(SIG_DFL, to: Int.self))
    }
}
