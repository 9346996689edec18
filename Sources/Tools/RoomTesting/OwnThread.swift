import Dispatch
import Testing

/// Runs each test of a suite, and everything it awaits, on a thread of its own rather than on the few threads Swift's
/// tasks share (one per core: two on a two-core machine). A test that blocks, waiting on a child process, a socket,
/// a pipe or the clock, holds the thread it runs on; two of them on the shared threads stop every other test in the
/// process until one finishes, and the tests waiting behind them run out of their time limits through no fault of
/// their own.
///
/// Nothing here limits how many such tests run at once (a test waiting here for its turn would already be inside its
/// time limit): `make test` caps how many tests Swift Testing runs at the same time instead.
public struct OwnThread: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The suite itself only gathers its tests; each test case takes its own thread, once, however many of
        // the suites around it ask for one.
        guard testCase != nil, !Self.onOwnThread else { return try await function() }
        try await Self.$onOwnThread.withValue(true) {
            try await withTaskExecutorPreference(ThreadExecutor(name: test.name)) { try await function() }
        }
    }

    /// The name of the test whose own thread runs the caller, or nil on any other thread.
    public static var threadOwner: String? { DispatchQueue.getSpecific(key: ThreadExecutor.owner) }

    @TaskLocal private static var onOwnThread = false
}

extension Trait where Self == OwnThread {
    /// Each test of the suite runs on a thread of its own: see ``OwnThread``.
    public static var ownThread: Self { OwnThread() }
}

/// A task executor with one serial queue: Dispatch gives a serial queue a thread of its own when it has work, outside
/// the shared threads of Swift's tasks.
private final class ThreadExecutor: TaskExecutor {
    let queue: DispatchQueue

    static let owner = DispatchSpecificKey<String>()

    init(name: String) {
        queue = DispatchQueue(label: "test \(name)")
        queue.setSpecific(key: Self.owner, value: name)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
