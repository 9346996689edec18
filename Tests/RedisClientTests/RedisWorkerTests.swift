import Dispatch
import Foundation
import RedisClient
import RoomTesting
import Synchronization
import Testing

/// Where a worker's results land: a serial queue standing in for the server's loop, recording what arrived.
final class Mailbox<Value: Sendable>: Sendable {
    let queue = DispatchQueue(label: "clubroom-test-mailbox")
    private let received = Mutex<[Value]>([])
    private let onQueue = Mutex<[Bool]>([])
    private let key = DispatchSpecificKey<Bool>()

    init() { queue.setSpecific(key: key, value: true) }

    var deliver: @Sendable (@escaping @Sendable () -> Void) -> Void {
        { [queue] task in queue.async(execute: task) }
    }

    func put(_ value: Value) {
        received.withLock { $0.append(value) }
        onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == true) }
    }

    var values: [Value] { received.withLock { $0 } }
    var allOnQueue: Bool { onQueue.withLock { $0.allSatisfy { $0 } } }

    func wait(for count: Int, limit: Double = 5) -> [Value] {
        _ = waitUntil(limit: limit) { values.count >= count }
        return values
    }
}

@Suite(.ownThread, .serialized) struct RedisWorkerTests {
    func worker(
        _ server: RedisServerProcess, _ mailbox: Mailbox<Result<RedisReply, RedisError>>, maximumQueued: Int = 100
    )
        throws -> RedisWorker
    {
        RedisWorker(
            name: "clubroom-test-redis", endpoint: try RedisEndpoint(url: server.url),
            options: RedisOptions(connectTimeoutMilliseconds: 300, commandTimeoutMilliseconds: 400),
            maximumQueued: maximumQueued, deliver: mailbox.deliver)
    }

    @Test func resultsComeBackInOrderThroughDeliver() throws {
        let server = try RedisServerProcess()
        let mailbox = Mailbox<Result<RedisReply, RedisError>>()
        let redis = try worker(server, mailbox)
        defer { redis.stop() }
        for value in 1...20 {
            redis.command(RedisCommand("RPUSH", "order", String(value))) { mailbox.put($0) }
        }
        let results = mailbox.wait(for: 20)
        #expect(results.map { try? $0.get() } == (1...20).map { .integer(Int64($0)) })
        #expect(mailbox.allOnQueue)
    }

    @Test func whileRedisIsPausedCallsFailWithinTheirDeadlineAndWorkResumesAfter() throws {
        let server = try RedisServerProcess()
        let mailbox = Mailbox<Result<RedisReply, RedisError>>()
        let redis = try worker(server, mailbox)
        defer { redis.stop() }
        redis.command(RedisCommand("PING")) { mailbox.put($0) }
        #expect(mailbox.wait(for: 1).count == 1)
        server.pause()
        // The first call waits for its reply and times out; the two behind it outlive their 100 ms deadline
        // in the queue and are answered without being sent.
        for _ in 0..<3 { redis.command(RedisCommand("INCR", "paused"), deadlineMilliseconds: 100) { mailbox.put($0) } }
        let results = mailbox.wait(for: 4)
        #expect(results.count == 4)
        #expect(results[1] == .failure(.timedOut(endpoint: "127.0.0.1:\(server.port)", milliseconds: 400)))
        for result in results[2...] {
            guard case .failure(.expired(let waited)) = result else {
                Issue.record("expected expired, got \(result)")
                continue
            }
            #expect(waited >= 100)
        }
        server.resume()
        redis.command(RedisCommand("GET", "paused")) { mailbox.put($0) }
        // The expired calls were never sent. The timed-out one was, and Redis may run it once it thaws: whether
        // a call that timed out ran is unknown, which is why callers only retry what is idempotent.
        let last = mailbox.wait(for: 5).last
        #expect(last == .success(.null) || last == .success(.bulk(Array("1".utf8))))
        #expect(redis.connects == 2)
    }

    @Test func aFullQueueRefusesAtOnce() throws {
        let server = try RedisServerProcess()
        let mailbox = Mailbox<Result<RedisReply, RedisError>>()
        let redis = try worker(server, mailbox, maximumQueued: 2)
        defer { redis.stop() }
        // BLPOP holds the thread for 300 ms, so the next calls queue behind it.
        redis.command(RedisCommand("BLPOP", "nothing", "0.3")) { mailbox.put($0) }
        #expect(waitUntil(limit: 2) { redis.queued == 0 })
        for _ in 0..<3 { redis.command(RedisCommand("PING")) { mailbox.put($0) } }
        let results = mailbox.wait(for: 4)
        #expect(results.first == .failure(.overloaded(queued: 2)))
        #expect(results[1] == .success(.null))
        #expect(results[2...].allSatisfy { $0 == .success(.status("PONG")) })
    }

    @Test func stopInterruptsACallBlockedOnRedisAndAnswersTheQueued() throws {
        let server = try RedisServerProcess()
        let mailbox = Mailbox<Result<RedisReply, RedisError>>()
        let redis = RedisWorker(
            name: "clubroom-test-redis", endpoint: try RedisEndpoint(url: server.url),
            options: RedisOptions(commandTimeoutMilliseconds: 30_000), deliver: mailbox.deliver)
        redis.command(RedisCommand("BLPOP", "nothing", "20")) { mailbox.put($0) }
        #expect(waitUntil(limit: 2) { redis.queued == 0 && redis.connects == 1 })
        redis.command(RedisCommand("PING")) { mailbox.put($0) }
        redis.stop()
        let results = mailbox.wait(for: 2)
        guard case .failure(.connectionLost) = results.first else {
            Issue.record("the blocked call ended with \(String(describing: results.first))")
            return
        }
        #expect(results[1] == .failure(.stopped))
        redis.command(RedisCommand("PING")) { mailbox.put($0) }
        #expect(mailbox.wait(for: 3).last == .failure(.stopped))
    }
}
