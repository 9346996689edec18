import Dispatch
import Foundation
import RedisClient
import RoomTesting
import Synchronization
import Testing

@testable import ClusterState

func store(_ server: RedisServerProcess, retention: RetentionLimits = RetentionLimits()) throws -> ClusterRedis {
    let connection = RedisConnection(
        endpoint: try RedisEndpoint(url: server.url),
        options: RedisOptions(connectTimeoutMilliseconds: 500, commandTimeoutMilliseconds: 500))
    let store = ClusterRedis(connection: connection, retention: retention)
    try store.loadFunctions()
    return store
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func entry(_ seq: UInt64, after prev: UInt64, _ body: String, request: String = "") -> RoomEntry {
    RoomEntry(id: EntryID(seq: seq), prev: EntryID(seq: prev), requestID: request, body: bytes(body))
}

@Suite(.ownThread, .serialized) struct ClusterRedisTests {
    @Test func twoNodesRacingForTheSameRoomsGetOneOwnerEach() throws {
        let server = try RedisServerProcess(appendOnly: false)
        // Each racing thread uses its own connection only.
        nonisolated(unsafe) let stores = try [store(server), store(server)]
        let rooms = (0..<40).map { "race-\($0)" }
        let results = Mutex<[String: [AcquireResult]]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for room in rooms {
                let result = try? stores[index].acquire(
                    room, node: "n\(index)", incarnation: UInt64(index + 1), leaseMilliseconds: 5000)
                results.withLock { $0[room, default: []].append(result!) }
            }
        }
        for room in rooms {
            let answers = results.withLock { $0[room] ?? [] }
            let winners = answers.compactMap { answer -> LeaseToken? in
                if case .acquired(let token) = answer { return token }
                return nil
            }
            #expect(winners.count == 1, "room \(room): \(answers)")
            guard let winner = winners.first else { continue }
            #expect(winner.epoch == 1)
            #expect(
                answers.contains { answer in
                    if case .held(let holder, let left) = answer { return holder == winner && left > 4000 }
                    return false
                })
            #expect(try stores[0].owner(room) == winner)
        }
        #expect(try stores[0].rooms() == rooms.sorted())
    }

    @Test func aStaleOwnersAppendIsFencedAndTheNewOwnerContinuesTheChain() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let (a, b) = (try store(server), try store(server))
        guard case .acquired(let first) = try a.acquire("r", node: "a", incarnation: 1, leaseMilliseconds: 200) else {
            Issue.record("a did not acquire")
            return
        }
        #expect(
            try a.append("r", entry: entry(10, after: 0, "one"), token: first, at: 1) == .appended(EntryID(seq: 10)))
        // A's lease runs out (A is frozen, say); B takes the room under the next epoch.
        #expect(waitUntil(limit: 2) { (try? a.owner("r")) == nil })
        guard case .acquired(let second) = try b.acquire("r", node: "b", incarnation: 7, leaseMilliseconds: 5000)
        else {
            Issue.record("b did not acquire")
            return
        }
        #expect(second == LeaseToken(node: "b", incarnation: 7, epoch: 2))
        // A wakes and writes as if it still owned the room: refused, whatever it writes.
        #expect(try a.append("r", entry: entry(11, after: 10, "stale"), token: first, at: 2) == .fenced(owner: second))
        #expect(try a.renew("r", token: first, leaseMilliseconds: 5000) == false)
        #expect(
            try b.append("r", entry: entry(11, after: 10, "two"), token: second, at: 3) == .appended(EntryID(seq: 11)))
        let written = try b.entries("r", after: .zero)
        #expect(written.map(\.body) == [bytes("one"), bytes("two")])
        #expect(written.map(\.epoch) == [1, 2])
        #expect(written.map(\.prev) == [.zero, EntryID(seq: 10)])
        // Releasing with the stale token does nothing; with the right one the room is free again.
        try a.release("r", token: first)
        #expect(try a.owner("r") == second)
        try b.release("r", token: second)
        #expect(try a.owner("r") == nil)
    }

    @Test func appendsAreIdempotentChainedAndCarryTheirStateAtomically() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let redis = try store(server, retention: RetentionLimits(entries: 100, chat: 2, audit: 2))
        guard case .acquired(let token) = try redis.acquire("r", node: "a", incarnation: 1, leaseMilliseconds: 5000)
        else {
            Issue.record("no lease")
            return
        }
        let first = entry(5, after: 0, "joined", request: "1-0")
        let operations: [StateOperation] = [
            .setPeer("alice", bytes("host")), .setPeer("bob", bytes("audience")), .setMeta("topic", bytes("hi")),
            .appendChat(bytes("c1")), .appendChat(bytes("c2")), .appendChat(bytes("c3")), .appendAudit(bytes("a1")),
        ]
        #expect(
            try redis.append("r", entry: first, token: token, operations: operations, requestCursor: "1-0", at: 42)
                == .appended(EntryID(seq: 5)))
        // A retry after a lost reply changes nothing.
        #expect(
            try redis.append("r", entry: first, token: token, operations: [.removePeer("alice")], at: 43)
                == .duplicate(EntryID(seq: 5)))
        // A writer whose view is behind is told where the chain is.
        #expect(
            try redis.append("r", entry: entry(7, after: 3, "x"), token: token, at: 44) == .gap(last: EntryID(seq: 5)))
        #expect(
            try redis.append(
                "r", entry: entry(6, after: 5, "left"), token: token,
                operations: [
                    .removePeer("bob"), .removeMeta("topic"), .appendAudit(bytes("a2")), .appendAudit(bytes("a3")),
                ],
                at: 45) == .appended(EntryID(seq: 6)))
        let snapshot = try redis.snapshot("r")
        #expect(
            snapshot
                == RoomSnapshot(
                    meta: [:], peers: ["alice": bytes("host")], chat: [bytes("c2"), bytes("c3")],
                    lastID: EntryID(seq: 6),
                    requestCursor: "1-0", lastAt: 45))
        #expect(try redis.audit("r") == [bytes("a2"), bytes("a3")])
        #expect(try redis.entries("r", after: EntryID(seq: 5)).map(\.body) == [bytes("left")])
        #expect(throws: ClusterError.badName("lastId")) {
            try redis.append(
                "r", entry: entry(8, after: 6, "x"), token: token, operations: [.setMeta("lastId", [])], at: 1)
        }
        #expect(throws: ClusterError.badName("a{b}")) { try redis.owner("a{b}") }
    }

    @Test func functionsAndStreamsSurviveARestartOnTheAppendOnlyFileButScriptsDoNot() throws {
        let server = try RedisServerProcess(appendOnly: true)
        let redis = try store(server)
        let script = try redis.connection.command("SCRIPT", "LOAD", "return 1").requireString("a script's SHA")
        guard case .acquired(let token) = try redis.acquire("r", node: "a", incarnation: 1, leaseMilliseconds: 60_000)
        else {
            Issue.record("no lease")
            return
        }
        #expect(
            try redis.append("r", entry: entry(1, after: 0, "kept"), token: token, at: 1) == .appended(EntryID(seq: 1)))
        // Answered is not yet in the file: with an fsync every second, Redis holds a write back for up to 2 s while
        // an fsync is under way (a busy disk). A crash once it is in the file must not lose it.
        #expect(
            waitUntil(limit: 5) {
                let info = try? redis.connection.command("INFO", "persistence").requireString("INFO persistence")
                return info?.contains("aof_buffer_length:0\r\n") ?? false
            })
        server.kill()
        try server.start()
        let raw = RedisConnection(endpoint: try RedisEndpoint(url: server.url))
        #expect(try raw.command("FCALL_RO", "cr_version", "0") == .bulk(bytes("2")))
        #expect(throws: RedisError.server("NOSCRIPT No matching script. Please use EVAL.")) {
            try raw.command("EVALSHA", script, "0")
        }
        let after = ClusterRedis(connection: raw)
        #expect(try after.owner("r") == token)
        #expect(try after.entries("r", after: .zero).map(\.body) == [bytes("kept")])
        #expect(
            try after.append("r", entry: entry(2, after: 1, "more"), token: token, at: 2) == .appended(EntryID(seq: 2)))
    }

    @Test func aRedisRestartedEmptyGetsTheLibraryAgainAndEpochsKeepRising() throws {
        let server = try RedisServerProcess(appendOnly: true)
        let redis = try store(server)
        guard case .acquired(let old) = try redis.acquire("r", node: "a", incarnation: 1, leaseMilliseconds: 60_000)
        else {
            Issue.record("no lease")
            return
        }
        server.kill()
        try server.start(keepingData: false)
        let raw = RedisConnection(endpoint: try RedisEndpoint(url: server.url))
        #expect(throws: RedisError.server("ERR Function not found")) { try raw.command("FCALL", "cr_version", "0") }
        // The old token is worthless in the emptied Redis; a new lease starts above the floor the node knew.
        let fresh = ClusterRedis(connection: raw)
        #expect(try fresh.append("r", entry: entry(1, after: 0, "x"), token: old, at: 1) == .fenced(owner: nil))
        #expect(
            try fresh.acquire("r", node: "a", incarnation: 1, leaseMilliseconds: 5000, epochFloor: 7)
                == .acquired(LeaseToken(node: "a", incarnation: 1, epoch: 8)))
    }

    @Test func nodesRegisterWithUniqueSlotsAndExpireUnlessRefreshed() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let redis = try store(server)
        let a = NodeRecord(
            name: "a", incarnation: 1, slot: 0, mediaAddress: "127.0.0.2:4000", relayAddress: "127.0.0.2:4001")
        var b = NodeRecord(
            name: "b", incarnation: 2, slot: 0, mediaAddress: "127.0.0.3:4000", relayAddress: "127.0.0.3:4001")
        guard
            case .registered(let slotA, let generation) = try redis.register(
                a, ttlMilliseconds: 300, generationCandidate: "g1"),
            case .registered(let slotB, let sameGeneration) = try redis.register(
                b, ttlMilliseconds: 60_000, generationCandidate: "g2")
        else {
            Issue.record("registration failed")
            return
        }
        #expect((slotA, slotB) == (1, 2))
        #expect(generation == "g1" && sameGeneration == "g1")
        b.slot = slotB
        var sameName = a
        sameName.incarnation = 9
        #expect(
            try redis.register(sameName, ttlMilliseconds: 300, generationCandidate: "g")
                == .nameTaken("1|1|127.0.0.2:4000|127.0.0.2:4001"))
        var liveA = a
        liveA.slot = 1
        #expect(try redis.liveNodes() == [liveA, b])
        // A stops refreshing: its registration lapses, and its name and slot become free.
        #expect(waitUntil(limit: 2) { (try? redis.liveNodes()) == [b] })
        #expect(try redis.connection.command("SISMEMBER", ClusterKeys.nodes, "a") == .integer(0))
        #expect(
            try redis.register(sameName, ttlMilliseconds: 300, generationCandidate: "g")
                == .registered(slot: 1, generation: "g1"))
        try redis.unregister(b)
        #expect(try redis.liveNodes().map(\.name) == ["a"])
    }

    @Test func requestsQueueInOrderAndTheOwnersCursorCommitsWithItsOutcome() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let redis = try store(server)
        let ids = try (1...3).map { try redis.submitRequest("r", from: "edge", body: bytes("q\($0)")) }
        let read = try redis.requests("r", after: "0-0")
        #expect(read == (0..<3).map { RoomRequest(id: ids[$0], node: "edge", body: bytes("q\($0 + 1)")) })
        guard case .acquired(let token) = try redis.acquire("r", node: "o", incarnation: 1, leaseMilliseconds: 5000)
        else { return }
        #expect(
            try redis.append(
                "r", entry: entry(1, after: 0, "answer", request: ids[1]), token: token, requestCursor: ids[1], at: 1)
                == .appended(EntryID(seq: 1)))
        let cursor = try redis.snapshot("r").requestCursor
        #expect(cursor == ids[1])
        #expect(try redis.requests("r", after: cursor).map(\.body) == [bytes("q3")])
        #expect(try redis.requests("r", after: ids[2], blockMilliseconds: 50) == [])
    }
}
