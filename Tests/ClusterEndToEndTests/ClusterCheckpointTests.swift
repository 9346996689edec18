import ClusterServer
import ClusterState
import Crypto
import Foundation
import RedisClient
import RoomTesting
import StrictJSON
import Testing

/// The owner's checkpoint of a room in Redis, every 32 entries: written beside the entry it follows (encoded off
/// the owner's loop), and what a node that did not see the room's history starts from.
@Suite(.ownThread, .serialized) struct ClusterCheckpointTests {
    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func aNodeJoiningLateStartsFromTheOwnersCheckpointAndTheEntriesAfterIt() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        // One entry for the join, one per chat: past the first checkpoint (32 entries), and a few after it.
        for index in 0..<40 {
            host.send(#"{"cmd":"chat","text":"line \#(index)"}"#)
            usleep(120_000)  // under the chat limit of 10 a second
        }
        try host.wait(for: "chat") { $0.text("text") == "line 39" }

        let redis = RedisConnection(endpoint: RedisEndpoint(host: cluster.redis.host, port: cluster.redis.port))
        let meta = "cr:{stage}:meta"
        // Sealed under the cluster's secret (here the token secret): opened with it.
        let seal = ClusterSeal(secret: try SecretFile.load(at: cluster.secretFile).bytes)
        guard let at = try redis.command("HGET", meta, "checkpointAt").string, let entryID = EntryID(at),
            case .bulk(let sealed) = try redis.command("HGET", meta, "checkpoint"),
            !String(decoding: sealed, as: UTF8.self).contains("line 0"),
            let body = seal.openCheckpoint(sealed, room: "stage", at: entryID),
            case .object(let stored) = try StrictJSONParser(maxBytes: 1 << 20).parse(body),
            case .object(let checkpoint)? = stored["room"], case .array(let chat)? = checkpoint["chat"]
        else {
            Issue.record("no checkpoint of the room in Redis")
            return
        }
        // The checkpoint is the room after its 32nd entry (the join and 31 chats), at an entry of the stream.
        #expect(chat.count == 31)
        let entries = try redis.command("XRANGE", "cr:{stage}:events", at, at).requireArray("entries")
        #expect(entries.count == 1)

        // A node that never served the room starts from the checkpoint and applies the 8 entries after it.
        let eli = try cluster.bot("eli", role: "audience", node: 1)
        let joined = try eli.wait(for: "joined")
        guard case .array(let seen)? = joined["chat"] else {
            Issue.record("no chat in \(joined)")
            return
        }
        let texts = seen.compactMap { value -> String? in
            guard case .object(let message) = value else { return nil }
            return message.text("text")
        }
        #expect(texts.suffix(3) == ["line 37", "line 38", "line 39"])
        #expect(texts.count == 40)
    }
}
