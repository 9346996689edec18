import Foundation
import RoomTesting
import StrictJSON
import Testing

extension NodeBot {
    /// How many chats saying `text` the bot saw.
    func chats(saying text: String) -> Int {
        events.filter { $0["event"] == .string("chat") && $0.text("text") == text }.count
    }

    /// Sends `line` (a chat saying `text` under a fixed id) every second until `watcher` sees the chat, for up to
    /// `timeout` seconds: a client's retries of a request refused for want of the cluster.
    func sendUntilSeen(_ line: String, text: String, by watcher: NodeBot, timeout: Double = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            send(line)
            if (try? watcher.wait(for: "chat", timeout: 1) { $0.text("text") == text }) != nil { return true }
        }
        return false
    }

    /// The errors the bot printed for its request `id`.
    func errors(for id: Int) -> [JSONObject] {
        events.filter { $0["event"] == .string("error") && $0["id"] == .integer(Int64(id)) }
    }
}

/// A request id takes effect at most once, and a requester is told "changed nothing" (`internal`) only when that
/// is certain: with Redis paused, and with a node whose replies from Redis are cut. (docs/cluster.md, "Request
/// ids and unknown outcomes".)
@Suite(.ownThread, .serialized, .enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
struct ClusterRequestIDTests {
    @Test func aChatQueuedWhileRedisIsPausedIsNeverRefusedThenAppliedAndItsRetryAppliesOnce() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let ana = try cluster.bot("ana", role: "audience", node: 1)
        try ana.wait(for: "joined")
        ana.send(#"{"cmd":"chat","text":"ready","id":1}"#)
        try host.wait(for: "chat") { $0.text("text") == "ready" }

        // Ana's node queues her chat for the owner as Redis stops: the request reaches Redis, which answers
        // nothing until it resumes 3 s later, and then the owner applies it.
        cluster.redis.pause()
        ana.send(#"{"cmd":"chat","text":"queued","id":7}"#)
        usleep(3_000_000)
        // By now her node may know Redis is away: a request it answers `internal` must never take effect.
        ana.send(#"{"cmd":"chat","text":"refused?","id":8}"#)
        usleep(500_000)
        cluster.redis.resume()

        try host.wait(for: "chat", timeout: 20) { $0.text("text") == "queued" }
        try ana.wait(for: "chat", timeout: 20) { $0.text("text") == "queued" }
        // A retry under the same id takes effect no second time.
        ana.send(#"{"cmd":"chat","text":"queued","id":7}"#)
        // Just after Redis is back, Ana's node may still refuse a new request at once, for a moment (it changed
        // nothing): she sends it again under its id until it takes effect.
        #expect(ana.sendUntilSeen(#"{"cmd":"chat","text":"after","id":9}"#, text: "after", by: host))
        // Id 8 is decided one way or the other within the node's wait (10 s).
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, ana.errors(for: 8).isEmpty, host.chats(saying: "refused?") == 0 {
            usleep(100_000)
        }
        usleep(1_000_000)

        // The chat that went to Redis was never called refused, and it appears once everywhere.
        #expect(ana.errors(for: 7).isEmpty, "\(ana.errors(for: 7))")
        #expect(host.chats(saying: "queued") == 1)
        #expect(ana.chats(saying: "queued") == 1)
        // Refused means not applied; otherwise it took effect once.
        let refused = ana.errors(for: 8).contains { $0.text("code") == "internal" }
        #expect(ana.errors(for: 8).allSatisfy { $0.text("code") == "internal" }, "\(ana.errors(for: 8))")
        #expect(host.chats(saying: "refused?") == (refused ? 0 : 1))
        #expect(ana.chats(saying: "refused?") == (refused ? 0 : 1))
        #expect(host.sequence(of: ["chat"]) == ana.sequence(of: ["chat"]))
    }
}

/// The same with a node whose replies from Redis are dropped (its commands still reach Redis and take effect).
@Suite(.ownThread, .serialized, .enabled(if: partitionTestsEnabled, "\(partitionSkipReason)"))
struct ClusterRequestIDPartitionTests {
    @Test func aNodeThatHearsNothingFromRedisNeverCallsARequestThatTookEffectRefused() throws {
        let namespace = try NetworkNamespace()
        let cluster = try TestCluster(nodes: 2, namespace: namespace)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        #expect(cluster.nodes[0].log.wait(timeout: 5) { $0.contains("room stage: this node owns it now") } != nil)
        let ana = try cluster.bot("ana", role: "audience", node: 1)
        try ana.wait(for: "joined")
        ana.send(#"{"cmd":"chat","text":"ready","id":1}"#)
        try host.wait(for: "chat") { $0.text("text") == "ready" }

        // Only Redis → n2 is cut: n2's request reaches Redis and the owner (n1) applies it; n2 hears no reply.
        try namespace.partition(from: "127.0.0.5", to: "127.0.0.3")
        ana.send(#"{"cmd":"chat","text":"landed","id":7}"#)
        try host.wait(for: "chat", timeout: 10) { $0.text("text") == "landed" }
        usleep(4_000_000)
        try namespace.heal()

        // Back in touch, n2 learns the owner's decision and Ana sees her chat, once; she was never told it
        // changed nothing. Her retry under the same id changes nothing more.
        try ana.wait(for: "chat", timeout: 20) { $0.text("text") == "landed" }
        ana.send(#"{"cmd":"chat","text":"landed","id":7}"#)
        #expect(ana.sendUntilSeen(#"{"cmd":"chat","text":"after","id":9}"#, text: "after", by: host))
        try ana.wait(for: "chat", timeout: 15) { $0.text("text") == "after" }
        usleep(1_000_000)
        #expect(!ana.errors(for: 7).contains { $0.text("code") == "internal" }, "\(ana.errors(for: 7))")
        #expect(host.chats(saying: "landed") == 1)
        #expect(ana.chats(saying: "landed") == 1)
    }
}
