import Foundation
import RoomTesting
import Testing

let partitionTestsEnabled = clusterTestsEnabled && NetworkNamespace.unavailableReason == nil
let partitionSkipReason =
    clusterTestsEnabled
    ? "partition tests skipped: \(NetworkNamespace.unavailableReason ?? "")" : "needs redis-server and 127.0.0.2-4"

/// Partitions between serving nodes: three nodes (n1 on 127.0.0.2, n2 on .3, n3 on .4), Redis on 127.0.0.5 and
/// every bot in a network namespace of the test's own, where nftables input-hook rules drop packets silently.
@Suite(.ownThread, .serialized, .enabled(if: partitionTestsEnabled, "\(partitionSkipReason)"))
struct ClusterPartitionTests {
    /// Cuts `node` off from each of `others`, both ways.
    func cut(_ node: String, from others: [String], in namespace: NetworkNamespace) throws {
        for other in others {
            try namespace.partition(from: other, to: node)
            try namespace.partition(from: node, to: other)
        }
    }

    /// Waits for the next `audio_stats` of `bot` and returns how many packets of `speaker` it had then.
    func receivedAtNextReport(_ bot: NodeBot, from speaker: String) throws -> Int {
        _ = try bot.wait(for: "audio_stats", count: bot.sequence(of: ["audio_stats"]).count + 1)
        return bot.received(from: speaker)
    }

    @Test func aNodeCutFromTheOthersMediaSendsItsClientsToReconnectOnceWhileTheOthersKeepTheirs() throws {
        let namespace = try NetworkNamespace()
        let cluster = try TestCluster(nodes: 3, namespace: namespace)
        let host = try cluster.bot("hana", role: "host", node: 0, tone: 440)
        try host.wait(for: "joined")
        let ana = try cluster.bot("ana", role: "audience", node: 1)
        try ana.wait(for: "joined")
        let ben = try cluster.bot("ben", role: "audience", node: 2)
        try ben.wait(for: "joined")
        host.send(#"{"cmd":"mute","on":false}"#)
        #expect(ana.waitForAudio(from: "hana", atLeast: 50))
        #expect(ben.waitForAudio(from: "hana", atLeast: 50))

        // n2 loses the media of n1 and n3 (both ways); Redis still reaches every node.
        try cut("127.0.0.3", from: ["127.0.0.2", "127.0.0.4"], in: namespace)
        let cutAt = Date()
        let warning = cluster.nodes[1].log.wait(timeout: 10) { $0.contains("room stage: nothing from nodes") }
        let noticedAfter = Date().timeIntervalSince(cutAt)
        #expect(warning != nil)
        // 3 s of silence from the last packet before the cut, seen by a check that runs every second.
        #expect(noticedAfter >= 2.5 && noticedAfter <= 6, "noticed \(noticedAfter) s after the cut")
        if let warning {
            #expect(
                cluster.nodes[1].log.all[warning].contains(
                    "room stage: nothing from nodes n1, n3 for 3 s though n1, n3 are alive in Redis: the media "
                        + "between the nodes is cut; its 1 client here is sent to reconnect"))
        }
        // Ana's client was closed with 1001 and came back (through the same node: it knows only that one).
        try ana.wait(for: "reconnecting", timeout: 5)
        try ana.wait(for: "reconnected", timeout: 10)
        // n1 and n3 still hear each other: they keep their clients.
        for index in [0, 2] {
            #expect(!cluster.nodes[index].log.all.contains { $0.contains("nothing from node") })
        }
        #expect(host.sequence(of: ["reconnecting"]).isEmpty)
        #expect(ben.sequence(of: ["reconnecting"]).isEmpty)

        // While cut: Ben (n3) hears Hana (n1); Ana (n2) does not. Requests still cross Redis.
        let benBefore = try receivedAtNextReport(ben, from: "hana")
        host.send(#"{"cmd":"topic","text":"still one room"}"#)
        try ana.wait(for: "topic_changed")
        // 75 more packets (1.5 s of Hana's audio) while the cut lasts, however slowly a loaded machine reports them.
        #expect(ben.waitForAudio(from: "hana", atLeast: benBefore + 75), "Ben had \(ben.received(from: "hana"))")
        // Her new connection has received nothing of Hana.
        #expect(try receivedAtNextReport(ana, from: "hana") == 0)
        // Sent away once per silence: Ana stays on n2 while it is still cut off.
        #expect(ana.connectionsLost == 1)

        try namespace.heal()
        #expect(ana.waitForAudio(from: "hana", atLeast: 50))
        #expect(ana.connectionsLost == 1)
        #expect(cluster.nodes[1].log.all.filter { $0.contains("nothing from node") }.count == 1)
        // One room throughout: every client saw the topic once.
        for bot in [host, ana, ben] {
            #expect(bot.sequence(of: ["topic_changed"]).count == 1)
        }
    }

    @Test func aNodeCutFromRedisStopsOwningWithin4sAndNeverCallsItsUnwrittenRequestRefused() throws {
        let namespace = try NetworkNamespace()
        let cluster = try TestCluster(nodes: 3, namespace: namespace)
        // Hana joins first, through n2: n2 owns the room.
        let host = try cluster.bot("hana", role: "host", node: 1, tone: 440)
        try host.wait(for: "joined")
        #expect(cluster.nodes[1].log.wait(timeout: 5) { $0.contains("room stage: this node owns it now") } != nil)
        let ana = try cluster.bot("ana", role: "audience", node: 0)
        try ana.wait(for: "joined")
        let ben = try cluster.bot("ben", role: "audience", node: 2)
        try ben.wait(for: "joined")
        host.send(#"{"cmd":"mute","on":false}"#)
        host.send(#"{"cmd":"chat","text":"before"}"#)
        #expect(ana.waitForAudio(from: "hana", atLeast: 50))
        #expect(ben.waitForAudio(from: "hana", atLeast: 50))
        try ana.wait(for: "chat") { $0.text("text") == "before" }

        // n2 loses Redis (both ways); the nodes still reach each other.
        try cut("127.0.0.3", from: ["127.0.0.5"], in: namespace)
        let cutAt = Date()
        let anaBefore = ana.received(from: "hana")
        host.send(#"{"cmd":"chat","text":"during","id":5}"#)
        let fenced = cluster.nodes[1].log.wait(timeout: 8) {
            $0.contains("room stage: this node no longer owns it (")
        }
        let fencedAfter = Date().timeIntervalSince(cutAt)
        #expect(fenced != nil)
        // 4 s after the last acknowledged renewal, which was at most a tick (1 s, give or take its own latency)
        // before the cut.
        #expect(fencedAfter >= 2.5 && fencedAfter <= 4.6, "fenced \(fencedAfter) s after the cut")
        // The chat Hana sent as the cut came was being written by n2: whether it reached Redis is unknown to
        // n2, so it is never answered "changed nothing" (its bot sends it again under its id meanwhile).
        // Audio goes on meanwhile: media never touches Redis.
        #expect(ana.received(from: "hana") >= anaBefore + 100)
        // Another node takes the room over.
        let newOwner = [0, 2].first { index in
            cluster.nodes[index].log.wait(timeout: 10) { $0.contains("room stage: this node owns it now") } != nil
        }
        #expect(newOwner != nil)

        try namespace.heal()
        // The cluster took n2 for gone: back, it hands Hana back through reconnect, and she is heard again.
        try host.wait(for: "reconnected", timeout: 15)
        // Her new connection has a new SSRC: the packets of all of Hana's streams are counted.
        _ = try ana.wait(for: "audio_stats", count: ana.sequence(of: ["audio_stats"]).count + 1)
        let anaAfter = ana.receivedFromEveryStream(of: "hana")
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, ana.receivedFromEveryStream(of: "hana") < anaAfter + 50 { usleep(100_000) }
        #expect(ana.receivedFromEveryStream(of: "hana") >= anaAfter + 50)
        host.send(#"{"cmd":"chat","text":"after"}"#)
        for bot in [ana, ben] {
            do {
                try bot.wait(for: "chat") { $0.text("text") == "after" }
            } catch {
                // What Hana's side saw (her answers, reconnects and errors) says where the chat stopped.
                throw ClusterTestError(
                    description: "\(error); hana: \(host.output.all.suffix(12)) \(host.errors.all.suffix(4))")
            }
        }
        // Sent again under its id, the chat of the cut takes effect once, however many copies went before.
        host.send(#"{"cmd":"chat","text":"during","id":5}"#)
        for bot in [ana, ben] {
            try bot.wait(for: "chat", timeout: 15) { $0.text("text") == "during" }
        }
        usleep(1_000_000)
        #expect(!host.errors(for: 5).contains { $0.text("code") == "internal" }, "\(host.errors(for: 5))")
        // No event lost or repeated: Ana (n1) and Ben (n3) stayed connected and saw the same events in the same
        // order, each chat once.
        let names: Set = ["chat", "peer_left", "peers_left", "peer_joined", "role_changed", "mute_changed"]
        // Ana joined before Ben, so she alone saw him arrive.
        let seenByAna = ana.sequence(of: names).filter { !($0.contains("peer_joined") && $0.contains(#""ben""#)) }
        #expect(seenByAna == ben.sequence(of: names))
        let chats = ana.sequence(of: ["chat"])
        #expect(chats.count == 3)
        #expect(ana.chats(saying: "during") == 1 && ben.chats(saying: "during") == 1)
        #expect(ana.sequence(of: ["reconnecting"]).isEmpty)
        #expect(ben.sequence(of: ["reconnecting"]).isEmpty)
        // Handed back once; silence is not counted while n2 could not reach Redis, nor right after it could again.
        #expect(
            host.connectionsLost == 1,
            """
            Hana: \(host.sequence(of: ["reconnecting", "reconnected", "error"]).joined(separator: "\n"))
            n2: \(cluster.nodes[1].log.all.suffix(40).joined(separator: "\n"))
            """)
        #expect(!cluster.nodes[1].log.all.contains { $0.contains("nothing from node") })
    }
}

extension NodeBot {
    /// The packets received from every SSRC `speaker` had (one per connection of theirs), at the last report.
    func receivedFromEveryStream(of speaker: String) -> Int {
        for event in events.reversed() where event["event"] == .string("audio_stats") {
            guard case .array(let speakers)? = event["speakers"] else { return 0 }
            var total = 0
            for case .object(let entry) in speakers where entry.text("peer") == speaker {
                if case .integer(let count)? = entry["received"] { total += Int(count) }
            }
            return total
        }
        return 0
    }
}
