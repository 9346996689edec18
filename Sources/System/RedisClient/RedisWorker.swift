import Dispatch
import Foundation
import Platform
import Synchronization

/// The asynchronous side of Redis: one connection on a thread of its own, so a caller (the server's network
/// loop) never waits for Redis. Calls queue in order; each result is handed back through `deliver` (the
/// loop's `execute`), never on the caller's stack.
///
/// A call that waited in the queue past its deadline (Redis paused, the connection timing out ahead of it) is
/// answered `expired` without being sent, so callers hear "unavailable" within their deadline plus at most one
/// command timeout. The queue is bounded: past `maximumQueued` calls are refused with `overloaded` at once.
public final class RedisWorker: Sendable {
    public let endpoint: RedisEndpoint
    public let name: String
    public let maximumQueued: Int
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let queue = Mutex<(jobs: [Job], head: Int, stopping: Bool)>(([], 0, false))
    private let wakeUp = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let socketSlot: SocketSlot

    private struct Job: Sendable {
        let deadline: Int64
        let enqueued: Int64
        let run: @Sendable (RedisConnection) -> Void
        let fail: @Sendable (RedisError) -> Void
    }

    /// Starts the thread. The connection is made on the first call (or by `connect`).
    public init(
        name: String, endpoint: RedisEndpoint, options: RedisOptions = RedisOptions(), maximumQueued: Int = 10_000,
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.name = name
        self.endpoint = endpoint
        self.maximumQueued = maximumQueued
        self.deliver = deliver
        let connection = RedisConnection(endpoint: endpoint, options: options)
        socketSlot = connection.socketSlot
        let box = ConnectionBox(connection)
        startThread(named: name) { [self] in run(box.take()) }
    }

    /// How many connections were made so far (1 after the first call; more after reconnects).
    public var connects: Int { socketSlot.connects }

    /// Calls waiting, not counting the one running.
    public var queued: Int { queue.withLock { $0.jobs.count - $0.head } }

    /// Runs `body` with the connection on the worker's thread, then hands its result to `completion` through
    /// `deliver`. `body` runs only if the call is still within `deadlineMilliseconds` of being queued.
    public func perform<Value: Sendable>(
        deadlineMilliseconds: Int = 5000,
        _ body: @escaping @Sendable (RedisConnection) throws(RedisError) -> Value,
        completion: @escaping @Sendable (Result<Value, RedisError>) -> Void
    ) {
        let now = RedisConnection.milliseconds()
        let deliver = self.deliver
        let job = Job(
            deadline: now + Int64(deadlineMilliseconds), enqueued: now,
            run: { connection in
                let result: Result<Value, RedisError>
                do throws(RedisError) {
                    result = .success(try body(connection))
                } catch {
                    result = .failure(error)
                }
                deliver { completion(result) }
            },
            fail: { error in deliver { completion(.failure(error)) } })
        let refusal = queue.withLock { state -> RedisError? in
            if state.stopping { return .stopped }
            if state.jobs.count - state.head >= maximumQueued {
                return .overloaded(queued: state.jobs.count - state.head)
            }
            state.jobs.append(job)
            return nil
        }
        if let refusal {
            job.fail(refusal)
        } else {
            wakeUp.signal()
        }
    }

    /// Sends the commands as one pipeline; the replies come back in order (error replies in place).
    public func pipeline(
        _ commands: [RedisCommand], deadlineMilliseconds: Int = 5000,
        completion: @escaping @Sendable (Result<[RedisReply], RedisError>) -> Void
    ) {
        perform(
            deadlineMilliseconds: deadlineMilliseconds,
            { connection throws(RedisError) in
                try connection.pipeline(commands)
            }, completion: completion)
    }

    /// Sends one command; an error reply comes back as `RedisError.server`.
    public func command(
        _ command: RedisCommand, deadlineMilliseconds: Int = 5000,
        completion: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void
    ) {
        perform(
            deadlineMilliseconds: deadlineMilliseconds,
            { connection throws(RedisError) in
                try connection.command(command)
            }, completion: completion)
    }

    /// Stops the thread after the running call; queued calls are answered `stopped`. A call blocked on Redis is
    /// interrupted (its socket is shut down) rather than waited out.
    public func stop() {
        let first = queue.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        socketSlot.interrupt()
        wakeUp.signal()
        finished.wait()
    }

    private func run(_ connection: RedisConnection) {
        while true {
            wakeUp.wait()
            let next = queue.withLock { state -> (job: Job?, stopping: Bool, rest: [Job]) in
                if state.stopping {
                    let rest = Array(state.jobs[state.head...])
                    state.jobs.removeAll()
                    state.head = 0
                    return (nil, true, rest)
                }
                guard state.head < state.jobs.count else { return (nil, false, []) }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head > 64, state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return (job, false, [])
            }
            if next.stopping {
                for job in next.rest { job.fail(.stopped) }
                break
            }
            guard let job = next.job else { continue }
            let now = RedisConnection.milliseconds()
            if now > job.deadline {
                job.fail(.expired(waitedMilliseconds: Int(now - job.enqueued)))
                continue
            }
            job.run(connection)
        }
        connection.close()
        finished.signal()
    }
}

/// Moves the connection, made on the creating thread, into the worker's thread closure exactly once.
private final class ConnectionBox: @unchecked Sendable {
    // Safe: written in init, read once by the worker thread, which the Thread start orders after init.
    private var connection: RedisConnection?

    init(_ connection: RedisConnection) { self.connection = connection }

    func take() -> RedisConnection {
        defer { connection = nil }
        return connection!
    }
}
