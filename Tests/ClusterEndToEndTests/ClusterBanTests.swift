import Foundation
import RoomTesting
import StrictJSON
import Testing

/// Lasting bans across a cluster (issue 27, "Lasting blocks"): a ban made through one node holds on every node,
/// a lift through any node lifts it everywhere, the list is the cluster's from any node, and a ban the cluster
/// could not record is refused, removing nobody (docs/tokens.md, "Bans").
@Suite(.ownThread, .serialized, .enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
struct ClusterBanTests {
    /// The identities of a `bans` answer.
    static func identities(_ answer: JSONObject) -> [String] {
        guard case .array(let bans)? = answer["bans"] else { return [] }
        return bans.compactMap { value in
            guard case .object(let ban) = value else { return nil }
            return ban.text("identity")
        }
    }

    /// Whether `bot` was refused at the door with close code `code`.
    static func refused(_ bot: NodeBot, _ code: Int) throws -> Bool {
        let error = try bot.wait(for: "error") { $0.text("code") == "refused" }
        return error.text("message")?.contains("(\(code))") == true
    }

    @Test func aBanThroughOneNodeHoldsOnEveryNodeAndALiftThroughAnotherLiftsItEverywhere() throws {
        let cluster = try TestCluster(nodes: 3)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        // Gus is in the room through the second node.
        let gus = try cluster.bot("gus", role: "audience", node: 1)
        try gus.wait(for: "joined")
        try host.wait(for: "peer_joined") { $0.text("peer") == "gus" }

        host.send(#"{"cmd":"ban","peer":"gus","reason":"spam","id":1}"#)
        try gus.wait(for: "removed") { $0.text("peer") == "gus" && $0.text("reason") == "spam" }
        try host.wait(for: "removed") { $0.text("peer") == "gus" }

        // The third node never served the room: it learns of the ban from the cluster, and refuses gus anywhere.
        #expect(cluster.nodes[2].log.wait(timeout: 10) { $0.contains("the cluster's bans: gus banned by hana") } != nil)
        let elsewhere = try cluster.bot("gus", role: "speaker", node: 2, room: "jazz")
        #expect(try Self.refused(elsewhere, 4025), "\(elsewhere.events)")
        let throughB = try cluster.bot("gus", role: "host", node: 1, room: "rock")
        #expect(try Self.refused(throughB, 4025), "\(throughB.events)")

        // A host in another room, through the second node, sees the cluster's bans and lifts gus's.
        let rocky = try cluster.bot("rocky", role: "host", node: 1, room: "rock")
        try rocky.wait(for: "joined")
        rocky.send(#"{"cmd":"list_bans","id":2}"#)
        let listed = try rocky.wait(for: "bans") { $0["id"] == .integer(2) }
        #expect(Self.identities(listed) == ["gus"], "\(listed)")
        rocky.send(#"{"cmd":"unban","who":"Gus","id":3}"#)
        let lifted = try rocky.wait(for: "bans") { $0["id"] == .integer(3) }
        #expect(Self.identities(lifted).isEmpty, "\(lifted)")
        #expect(lifted["lifted"] == .array([.string("gus")]), "\(lifted)")

        // The first node, which made the ban, admits gus again (in every room but the one he was removed from).
        #expect(cluster.nodes[0].log.wait(timeout: 10) { $0.contains("the cluster's bans: gus lifted") } != nil)
        let back = try cluster.bot("gus", role: "audience", node: 0, room: "folk")
        try back.wait(for: "joined")
        host.send(#"{"cmd":"list_bans","id":4}"#)
        #expect(Self.identities(try host.wait(for: "bans") { $0["id"] == .integer(4) }).isEmpty)
    }

    @Test func aBanTheClusterCannotRecordIsRefusedAndRemovesNobody() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let gus = try cluster.bot("gus", role: "audience", node: 1)
        try gus.wait(for: "joined")
        try host.wait(for: "peer_joined") { $0.text("peer") == "gus" }

        cluster.redis.pause()
        usleep(3_000_000)
        host.send(#"{"cmd":"ban","peer":"gus","reason":"spam","id":5}"#)
        let refusal = try host.wait(for: "error", timeout: 15) { $0["id"] == .integer(5) }
        #expect(refusal.text("code") == "internal")
        #expect(
            refusal.text("message")?.hasPrefix("the ban could not be recorded in the cluster") == true, "\(refusal)")
        #expect(refusal.text("message")?.hasSuffix("nobody was banned or removed; try again") == true)
        cluster.redis.resume()

        // Nothing happened: gus is still in the room, and no node holds a ban.
        #expect(ClusterRedisTests().chatGetsThrough("still here", from: gus, to: host, timeout: 15))
        #expect(!host.events.contains { $0["event"] == .string("removed") })
        #expect(!gus.events.contains { $0["event"] == .string("removed") })
        host.send(#"{"cmd":"list_bans","id":6}"#)
        #expect(Self.identities(try host.wait(for: "bans") { $0["id"] == .integer(6) }).isEmpty)
    }

    @Test func theOperatorListsAndLiftsTheClustersBansInRedis() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let gus = try cluster.bot("gus", role: "audience", node: 1)
        try gus.wait(for: "joined")
        host.send(#"{"cmd":"ban","peer":"gus","reason":"spam"}"#)
        try gus.wait(for: "removed") { $0.text("peer") == "gus" }

        let operatorCommand = ["bans", "--cluster", cluster.redis.url, "--secret-file", cluster.secretFile]
        let listed = try runClubroom(operatorCommand)
        #expect(listed.status == 0, "\(listed)")
        let lines = listed.standardOutput.split(separator: "\n")
        #expect(lines.count == 2, "\(listed.standardOutput)")
        #expect(lines.first?.hasPrefix("IDENTITY  NAME  BY    ROOM   WHEN (UTC)") == true, "\(listed.standardOutput)")
        #expect(lines.last?.hasPrefix("gus       Gus   hana  stage  ") == true, "\(listed.standardOutput)")
        #expect(lines.last?.hasSuffix("  spam") == true)

        // Under another cluster secret the ban does not open: it is not shown, and stderr says so.
        let other = cluster.secrets.file("not-the-cluster-secret")
        _ = FileManager.default.createFile(
            atPath: other, contents: Data((String(repeating: "ab", count: 32) + "\n").utf8),
            attributes: [.posixPermissions: 0o600])
        let stranger = try runClubroom(["bans", "--cluster", cluster.redis.url, "--cluster-secret-file", other])
        #expect(stranger.standardOutput == "No bans.\n")
        #expect(stranger.standardError.contains("1 of the cluster's bans are not sealed under this cluster secret"))

        let lifted = try runClubroom(operatorCommand + ["lift", "Gus"])
        #expect(lifted.status == 0, "\(lifted)")
        #expect(lifted.standardOutput == "Lifted the ban of gus: they may join the cluster's rooms again.\n")
        #expect(try runClubroom(operatorCommand + ["lift", "gus"]).status == 1)
        #expect(try runClubroom(operatorCommand).standardOutput == "No bans.\n")
        // Every node hears of it: gus comes back, through either node, to a room he was not removed from.
        for (index, node) in cluster.nodes.enumerated() {
            #expect(node.log.wait(timeout: 10) { $0.contains("the cluster's bans: gus lifted") } != nil)
            let back = try cluster.bot("gus", role: "audience", node: index, room: "folk\(index)")
            try back.wait(for: "joined")
        }
    }

    @Test func aNodesOwnBansComeIntoTheClusterUnlessTheClusterLiftedThemSince() throws {
        let cluster = try TestCluster(nodes: 1)
        // A server alone bans bo and cy.
        let alone = try ServeNode(host: NodeAddresses.all[1], arguments: ["--secret-file", cluster.secretFile])
        let solo = try NodeBot("hana", role: "host", room: "solo", through: alone, secretFile: cluster.secretFile)
        try solo.wait(for: "joined")
        for name in ["bo", "cy"] {
            let person = try NodeBot(
                name, role: "audience", room: "solo", through: alone, secretFile: cluster.secretFile)
            try person.wait(for: "joined")
            solo.send(#"{"cmd":"ban","peer":"\#(name)"}"#)
            try person.wait(for: "removed") { $0.text("peer") == name }
        }
        alone.stop()

        // Meanwhile the cluster banned cy too, and its operator lifted that ban.
        let host = try cluster.bot("ana", role: "host", node: 0)
        try host.wait(for: "joined")
        let cy = try cluster.bot("cy", role: "audience", node: 0)
        try cy.wait(for: "joined")
        host.send(#"{"cmd":"ban","peer":"cy"}"#)
        try cy.wait(for: "removed") { $0.text("peer") == "cy" }
        let operatorCommand = ["bans", "--cluster", cluster.redis.url, "--secret-file", cluster.secretFile]
        #expect(try runClubroom(operatorCommand + ["lift", "cy"]).status == 0)

        // The server joins the cluster on its data: bo's ban comes in, cy's stays lifted, on every node.
        try withExtendedLifetime(alone) {
            let joined = try ServeNode(
                host: NodeAddresses.all[1],
                arguments: ["--cluster", cluster.redis.url, "--node", "n2", "--secret-file", cluster.secretFile],
                data: alone.data)
            #expect(joined.log.wait(timeout: 10) { $0.contains("brought 1 of this node's own bans into the") } != nil)
            #expect(joined.log.wait(timeout: 10) { $0.contains("the cluster's bans: cy lifted") } != nil)
            #expect(
                cluster.nodes[0].log.wait(timeout: 10) { $0.contains("the cluster's bans: bo banned by hana in solo") }
                    != nil)
            let listed = try runClubroom(operatorCommand).standardOutput
            #expect(listed.split(separator: "\n").dropFirst().map { $0.prefix(4) } == ["bo  "], "\(listed)")
            for node in [cluster.nodes[0], joined] {
                let bo = try NodeBot(
                    "bo", role: "audience", room: "jazz", through: node, secretFile: cluster.secretFile)
                #expect(try Self.refused(bo, 4025), "\(bo.events)")
                let back = try NodeBot(
                    "cy", role: "audience", room: "jazz-\(node.host)", through: node, secretFile: cluster.secretFile)
                try back.wait(for: "joined")
            }
        }
    }

    @Test func theNodesBringTheirBansBackWhenRedisLosesItsData() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let gus = try cluster.bot("gus", role: "audience", node: 1)
        try gus.wait(for: "joined")
        host.send(#"{"cmd":"ban","peer":"gus","reason":"spam"}"#)
        try gus.wait(for: "removed") { $0.text("peer") == "gus" }

        cluster.redis.kill()
        try cluster.redis.start(keepingData: false)
        // Both nodes held the ban: whichever is first brings it back, and the other finds it there.
        func broughtBack() -> Bool {
            cluster.nodes.contains { node in
                node.log.all.contains { $0.contains("brought 1 of this node's own bans into the cluster's") }
            }
        }
        let deadline = Date().addingTimeInterval(15)
        while !broughtBack(), Date() < deadline { usleep(100_000) }
        #expect(broughtBack(), "\(cluster.nodes.map { $0.log.all.suffix(8) })")
        let listed = try runClubroom(["bans", "--cluster", cluster.redis.url, "--secret-file", cluster.secretFile])
        #expect(listed.standardOutput.split(separator: "\n").last?.hasPrefix("gus ") == true, "\(listed)")
        // A node started now learns it from Redis alone.
        cluster.nodes.append(
            try ServeNode(
                host: NodeAddresses.all[2],
                arguments: ["--cluster", cluster.redis.url, "--node", "n3", "--secret-file", cluster.secretFile]))
        #expect(cluster.nodes[2].log.wait(timeout: 10) { $0.contains("the cluster's bans: gus banned by hana") } != nil)
        let elsewhere = try cluster.bot("gus", role: "audience", node: 2, room: "jazz")
        #expect(try Self.refused(elsewhere, 4025), "\(elsewhere.events)")
    }
}
