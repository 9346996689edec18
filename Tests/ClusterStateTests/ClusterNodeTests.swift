import Dispatch
import Foundation
import RedisClient
import RoomTesting
import Synchronization
import Testing

@testable import ClusterState

/// Production timings divided by about ten, so a failover takes a second instead of ten.
func quickTiming() -> ClusterTiming {
    var timing = ClusterTiming()
    timing.leaseMilliseconds = 600
    timing.selfFenceMilliseconds = 450
    timing.tickMilliseconds = 100
    timing.nodeTTLMilliseconds = 600
    timing.acquireJitterMilliseconds = 50
    timing.formerOwnerHeadStartMilliseconds = 200
    timing.requestDeadlineMilliseconds = 600
    timing.commandTimeoutMilliseconds = 200
    timing.readBlockMilliseconds = 100
    return timing
}

final class NoticeLog: Sendable {
    private let stored = Mutex<[ClusterNotice]>([])
    func append(_ notice: ClusterNotice) { stored.withLock { $0.append(notice) } }
    var all: [ClusterNotice] { stored.withLock { $0 } }
}

/// A node under test with its notices collected on a queue standing in for the server's loop.
final class TestNode: Sendable {
    let node: ClusterNode
    let queue = DispatchQueue(label: "clubroom-test-node")
    private let received = NoticeLog()

    init(_ name: String, port: Int, incarnation: UInt64) {
        let queue = self.queue
        let received = self.received
        node = ClusterNode(
            configuration: ClusterConfiguration(
                redis: RedisEndpoint(host: "127.0.0.1", port: port), node: name, incarnation: incarnation,
                mediaAddress: "127.0.0.1:1", relayAddress: "127.0.0.1:2", timing: quickTiming()),
            deliver: { task in queue.async(execute: task) },
            notify: { notice in received.append(notice) })
    }

    var notices: [ClusterNotice] { received.all }

    /// Waits for a notice at index `from` or later that matches.
    func waitFor(from start: Int = 0, limit: Double = 5, _ match: (ClusterNotice) -> Bool) -> ClusterNotice? {
        var found: ClusterNotice?
        _ = waitUntil(limit: limit) {
            found = notices.dropFirst(start).first(where: match)
            return found != nil
        }
        return found
    }

    /// Runs an asynchronous call and waits for its answer.
    func call<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value? {
        let answer = Mutex<Value?>(nil)
        start { value in answer.withLock { $0 = value } }
        _ = waitUntil(limit: 5) { answer.withLock { $0 } != nil }
        return answer.withLock { $0 }
    }

    func claim(_ room: String) -> Result<AcquireResult, ClusterError>? { call { node.claim(room, completion: $0) } }

    func append(
        _ room: String, _ entry: RoomEntry, operations: [StateOperation] = []
    ) -> Result<AppendResult, ClusterError>? {
        call { node.append(room, entry: entry, operations: operations, completion: $0) }
    }
}

@Suite(.ownThread, .serialized) struct ClusterNodeTests {
    @Test func startingWithRedisUnreachableFailsNamingTheAddress() throws {
        let port = try freeLoopbackPort()
        let node = TestNode("a", port: port, incarnation: 1)
        #expect(
            throws: ClusterError.unavailable(.unreachable(endpoint: "127.0.0.1:\(port)", reason: "Connection refused"))
        ) { try node.node.start() }
        #expect(
            ClusterError.unavailable(.unreachable(endpoint: "127.0.0.1:\(port)", reason: "Connection refused"))
                .description
                == "the cluster is unavailable, try again: Redis at 127.0.0.1:\(port) is unreachable: Connection refused"
        )
    }

    @Test func aSecondNodeUnderARunningNodesNameIsRefused() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let first = TestNode("same", port: server.port, incarnation: 1)
        try first.node.start()
        defer { first.node.stop() }
        let second = TestNode("same", port: server.port, incarnation: 2)
        #expect(throws: ClusterError.nameTaken(node: "same", by: "1|1|127.0.0.1:1|127.0.0.1:2")) {
            try second.node.start()
        }
    }

    @Test func aNodeThatDiesIsNoticedAndItsRoomGetsANewOwner() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let a = TestNode("a", port: server.port, incarnation: 11)
        let b = TestNode("b", port: server.port, incarnation: 22)
        try a.node.start()
        try b.node.start()
        defer { b.node.stop() }
        #expect(a.claim("room") == .success(.acquired(LeaseToken(node: "a", incarnation: 11, epoch: 1))))
        guard case .success(.held(let holder, _)) = b.claim("room") else {
            Issue.record("b got the room while a held it")
            return
        }
        #expect(holder.node == "a")
        #expect(a.node.owns("room") != nil && b.node.owns("room") == nil)
        #expect(a.append("room", entry(1, after: 0, "by a")) == .success(.appended(EntryID(seq: 1))))
        a.node.abandon()
        #expect(b.waitFor { if case .nodeLeft(let node) = $0 { return node.name == "a" } else { return false } } != nil)
        let taken = b.waitFor { if case .becameOwner = $0 { return true } else { return false } }
        #expect(
            taken == .becameOwner(room: "room", token: LeaseToken(node: "b", incarnation: 22, epoch: 2), reseed: false))
        #expect(b.append("room", entry(2, after: 1, "by b")) == .success(.appended(EntryID(seq: 2))))
    }

    @Test func aFrozenOwnerStopsActingAsOwnerAndIsFencedWhenItWakes() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let proxy = try FreezableProxy(targetPort: server.port)
        let a = TestNode("a", port: proxy.port, incarnation: 1)
        let b = TestNode("b", port: server.port, incarnation: 2)
        try a.node.start()
        try b.node.start()
        defer {
            a.node.stop()
            b.node.stop()
        }
        guard case .success(.acquired(let first)) = a.claim("room") else {
            Issue.record("a did not get the room")
            return
        }
        b.node.watch("room")
        // A is cut off from Redis as if frozen: no renewal gets through.
        proxy.freeze()
        #expect(a.waitFor { $0 == .lostOwnership(room: "room", token: first, fenced: false) } != nil)
        #expect(a.node.owns("room") == nil)
        #expect(a.append("room", entry(1, after: 0, "x")) == .failure(.notOwner(room: "room")))
        let taken = b.waitFor { if case .becameOwner = $0 { return true } else { return false } }
        #expect(
            taken == .becameOwner(room: "room", token: LeaseToken(node: "b", incarnation: 2, epoch: 2), reseed: false))
        proxy.thaw()
        // Whatever A still has in flight under its old token is refused by Redis itself.
        let direct = try store(server)
        #expect(
            try direct.append("room", entry: entry(1, after: 0, "stale"), token: first, at: 1)
                == .fenced(owner: LeaseToken(node: "b", incarnation: 2, epoch: 2)))
        #expect(b.append("room", entry(1, after: 0, "fresh")) == .success(.appended(EntryID(seq: 1))))
        #expect(try direct.entries("room", after: .zero).map(\.body) == [bytes("fresh")])
    }

    @Test func whileRedisIsPausedRequestsAreUnavailableAndOwnershipComesBackAfter() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let a = TestNode("a", port: server.port, incarnation: 1)
        try a.node.start()
        defer { a.node.stop() }
        guard case .success(.acquired(let first)) = a.claim("room") else {
            Issue.record("no room")
            return
        }
        server.pause()
        #expect(a.waitFor { if case .redisUnavailable = $0 { return true } else { return false } } != nil)
        #expect(a.waitFor { $0 == .lostOwnership(room: "room", token: first, fenced: false) } != nil)
        guard case .failure(let error) = a.call({ a.node.submit("room", body: bytes("mute"), completion: $0) }) else {
            Issue.record("a request went through a paused Redis")
            return
        }
        #expect(error.isUnavailable)
        let seen = a.notices.count
        server.resume()
        #expect(a.waitFor(from: seen) { $0 == .redisAvailable } != nil)
        // The former owner takes its room back first (its lease expired on Redis's clock meanwhile).
        let back = a.waitFor(from: seen) { if case .becameOwner = $0 { return true } else { return false } }
        #expect(
            back == .becameOwner(room: "room", token: LeaseToken(node: "a", incarnation: 1, epoch: 2), reseed: false))
        #expect(a.append("room", entry(1, after: 0, "after")) == .success(.appended(EntryID(seq: 1))))
    }

    @Test func aRedisRestartedEmptyIsRebuiltFromTheOwningNode() throws {
        let server = try RedisServerProcess(appendOnly: true)
        let a = TestNode("a", port: server.port, incarnation: 1)
        let b = TestNode("b", port: server.port, incarnation: 2)
        try a.node.start()
        try b.node.start()
        defer {
            a.node.stop()
            b.node.stop()
        }
        guard case .success(.acquired(let first)) = a.claim("room") else {
            Issue.record("no room")
            return
        }
        #expect(
            a.append(
                "room", entry(1, after: 0, "joined"),
                operations: [.setPeer("p1", bytes("host")), .setMeta("topic", bytes("t"))])
                == .success(.appended(EntryID(seq: 1))))
        b.node.follow("room", after: .zero)
        #expect(
            b.waitFor {
                if case .entries(_, let list) = $0 { return list.map(\.id) == [EntryID(seq: 1)] } else { return false }
            } != nil)
        let before = try #require(a.call { a.node.snapshot("room", completion: $0) }.flatMap { try? $0.get() })
        server.kill()
        try server.start(keepingData: false)
        #expect(a.waitFor { $0 == .redisLostData } != nil)
        let again = a.waitFor { if case .becameOwner(_, _, true) = $0 { return true } else { return false } }
        guard case .becameOwner(_, let token, true) = again else {
            Issue.record("a did not take its room back for a reseed")
            return
        }
        #expect(token.epoch > first.epoch)
        #expect(
            a.call {
                a.node.reseed("room", snapshot: before, id: EntryID(seq: 2), body: bytes("reset"), completion: $0)
            }
                == .success(.appended(EntryID(seq: 2))))
        var rebuilt = try #require(a.call { a.node.snapshot("room", completion: $0) }.flatMap { try? $0.get() })
        #expect(rebuilt.lastID == EntryID(seq: 2))
        rebuilt.lastID = before.lastID
        rebuilt.lastAt = before.lastAt
        #expect(rebuilt == before)
        // The follower sees the reset entry continue its stream.
        let reset = b.waitFor {
            if case .entries(_, let list) = $0 { return list.first?.kind == .reset } else { return false }
        }
        guard case .entries(_, let list) = reset else {
            Issue.record("b saw no reset")
            return
        }
        #expect(list.map(\.body) == [bytes("reset")])
    }

    @Test func requestsFromAnEdgeReachTheOwnerInOrder() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let owner = TestNode("owner", port: server.port, incarnation: 1)
        let edge = TestNode("edge", port: server.port, incarnation: 2)
        try owner.node.start()
        try edge.node.start()
        defer {
            owner.node.stop()
            edge.node.stop()
        }
        guard case .success(.acquired) = owner.claim("room") else { return }
        owner.node.serveRequests("room", after: "0-0")
        for index in 1...3 {
            guard case .success = edge.call({ edge.node.submit("room", body: bytes("r\(index)"), completion: $0) })
            else {
                Issue.record("request \(index) was not queued")
                return
            }
        }
        _ = waitUntil(limit: 5) {
            owner.notices.flatMap { notice -> [RoomRequest] in
                if case .requests(_, let list) = notice { return list }
                return []
            }.count == 3
        }
        let requests = owner.notices.flatMap { notice -> [RoomRequest] in
            if case .requests(_, let list) = notice { return list }
            return []
        }
        #expect(requests.map(\.body) == [bytes("r1"), bytes("r2"), bytes("r3")])
        #expect(requests.allSatisfy { $0.node == "edge" })
    }
}
