import Foundation
import RedisClient
import RoomServer
import RoomTesting
import StrictJSON
import Testing

/// Redis orders and stores the cluster's requests and entries, but cannot author one: what someone with access
/// to Redis alone writes into a room's streams is refused (and logged) by every node, and what the room says in
/// private is not in Redis in clear.
@Suite(.ownThread, .serialized) struct ClusterTrustTests {
    /// Every value Redis holds, as bytes: strings, hashes, lists and streams, field names included.
    static func everything(in redis: RedisConnection) throws -> [[UInt8]] {
        var values: [[UInt8]] = []
        func collect(_ reply: RedisReply) {
            switch reply {
            case .bulk(let bytes): values.append(bytes)
            case .array(let items): items.forEach(collect)
            default: break
            }
        }
        for key in try redis.command("KEYS", "*").requireArray("keys").compactMap(\.string) {
            switch try redis.command("TYPE", key).string {
            case "string": collect(try redis.command("GET", key))
            case "hash": collect(try redis.command("HGETALL", key))
            case "list": collect(try redis.command("LRANGE", key, "0", "-1"))
            case "set": collect(try redis.command("SMEMBERS", key))
            case "stream": collect(try redis.command("XRANGE", key, "-", "+"))
            default: break
            }
        }
        return values
    }

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func forgedRequestsInRedisTakeNoEffectAndPrivateChatIsNotInRedisInClear() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let ana = try cluster.bot("ana", role: "audience", node: 1)
        try ana.wait(for: "joined")
        try host.wait(for: "peer_joined") { $0.text("peer") == "ana" }

        // Private words, to one peer and to a role (the hosts, from a listener: a role-only message needs someone
        // else in the role), and a public line.
        host.send(#"{"cmd":"chat","text":"psst-direct-words","to":"ana"}"#)
        ana.send(#"{"cmd":"chat","text":"hush-role-words","role":"host"}"#)
        ana.send(#"{"cmd":"chat","text":"public words"}"#)
        try ana.wait(for: "chat") { $0.text("text") == "psst-direct-words" }
        try host.wait(for: "chat") { $0.text("text") == "hush-role-words" }
        try host.wait(for: "chat") { $0.text("text") == "public words" }

        let redis = RedisConnection(endpoint: RedisEndpoint(host: cluster.redis.host, port: cluster.redis.port))
        let stored = try Self.everything(in: redis)
        for words in ["psst-direct-words", "hush-role-words", "public words"] {
            #expect(!stored.contains { String(decoding: $0, as: UTF8.self).contains(words) }, "\(words) is in Redis")
        }

        // With Redis alone: the nodes' names and incarnations are in their registrations.
        func identity(_ node: String) throws -> String {
            let record = try redis.command("GET", "cr:node:\(node)").string ?? ""
            return "\(node)/\(record.split(separator: "|").first ?? "")"
        }
        let (first, second) = (try identity("n1"), try identity("n2"))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let forged = [
            (
                "n1",
                #"{"kind":"join","node":"\#(first)","connection":77,"peer":"mallory","name":"Mallory","role":"host","now":\#(now)}"#
            ),
            (
                "n2",
                #"{"kind":"leave","node":"\#(second)","connection":0,"departures":[{"peer":"ana","reason":"left","connection":1}],"now":\#(now)}"#
            ),
            (
                "n1",
                #"{"kind":"request","node":"\#(first)","connection":0,"peer":"hana","request":{"endRoom":{"reason":"forged"}},"now":\#(now)}"#
            ),
        ]
        for (node, body) in forged {
            _ = try redis.command("XADD", "cr:{stage}:requests", "*", "node", node, "body", body)
        }
        let owner = cluster.nodes[0]
        #expect(owner.log.wait(timeout: 10) { $0.contains("refused request") && $0.contains("n1") } != nil)
        let deadline = Date().addingTimeInterval(10)
        func refusals() -> [String] { owner.log.all.filter { $0.contains("room stage: refused request") } }
        while refusals().count < 3, Date() < deadline { usleep(20_000) }
        #expect(refusals().count == 3, "\(owner.log.all.suffix(10))")

        // The room goes on as it was: nobody joined, nobody left, it did not end.
        host.send(#"{"cmd":"chat","text":"still here"}"#)
        try ana.wait(for: "chat") { $0.text("text") == "still here" }
        try host.wait(for: "chat") { $0.text("text") == "still here" }
        for bot in [host, ana] {
            #expect(!bot.events.contains { $0.text("peer") == "mallory" })
            #expect(!bot.events.contains { $0["event"] == .string("room_ended") })
            #expect(!bot.events.contains { $0["event"] == .string("peer_left") })
        }
    }
}
