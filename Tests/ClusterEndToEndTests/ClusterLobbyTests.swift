import Foundation
import RoomTesting
import StrictJSON
import Testing

/// The lobby of each node of a cluster: the rooms that node serves, with the changes their owner decides.
@Suite(.serialized) struct ClusterLobbyTests {
    /// The rooms node `index`'s lobby lists now, by name, as `clubroom rooms --json` prints them.
    func listed(on cluster: TestCluster, node index: Int) throws -> [String: JSONObject] {
        let node = cluster.nodes[index]
        let result = try runClubroom([
            "rooms", "ws://\(node.host):\(node.port)", "--secret-file", cluster.secretFile, "--json",
        ])
        guard result.status == 0, case .object(let list)? = try? StrictJSONParser().parse(result.standardOutput),
            case .array(let rooms)? = list["rooms"]
        else { throw ClusterTestError(description: "clubroom rooms on node \(index + 1): \(result)") }
        var byName: [String: JSONObject] = [:]
        for case .object(let room) in rooms { byName[room.text("name") ?? ""] = room }
        return byName
    }

    /// Waits until node `index`'s lobby satisfies `check`, and says what it listed last if it never does.
    func waitForLobby(
        of cluster: TestCluster, node index: Int, _ what: String, timeout: Double = 10,
        _ check: ([String: JSONObject]) -> Bool
    ) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String: JSONObject] = [:]
        while Date() < deadline {
            last = try listed(on: cluster, node: index)
            if check(last) { return }
            usleep(200_000)
        }
        throw ClusterTestError(description: "node \(index + 1)'s lobby never showed \(what): \(last)")
    }

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func everyNodeServingARoomListsItAndTheChangesItsOwnerDecides() throws {
        let cluster = try TestCluster(nodes: 2)
        let host = try cluster.bot("hana", role: "host", node: 0, room: "jazz")
        try host.wait(for: "joined")
        host.send(#"{"cmd":"topic","text":"Late night jazz"}"#)
        try host.wait(for: "topic_changed")
        try waitForLobby(of: cluster, node: 0, "jazz") { $0["jazz"]?.text("topic") == "Late night jazz" }
        // Nobody came through node 2 yet: its lobby does not list the room.
        #expect(try listed(on: cluster, node: 1).isEmpty)

        // Node 2 takes a copy of the room from the cluster when someone joins through it: its lobby lists the
        // room as it is, topic included.
        let eli = try cluster.bot("eli", role: "audience", node: 1, room: "jazz")
        try eli.wait(for: "joined")
        try waitForLobby(of: cluster, node: 1, "jazz with its topic") {
            $0["jazz"]?.text("topic") == "Late night jazz"
        }

        // A change the owner decides reaches both lobbies: node 2 replays it from Redis.
        host.send(#"{"cmd":"topic","text":"Jazz till dawn"}"#)
        try eli.wait(for: "topic_changed")
        for node in 0..<2 {
            try waitForLobby(of: cluster, node: node, "the new topic and one listener") {
                $0["jazz"]?.text("topic") == "Jazz till dawn" && $0["jazz"]?["listeners"] == .integer(1)
            }
        }

        // Unlisted by its host, through the other node's replay too; then listed again.
        host.send(#"{"cmd":"set_listed","listed":false}"#)
        try eli.wait(for: "listing_changed")
        for node in 0..<2 {
            try waitForLobby(of: cluster, node: node, "no rooms") { $0.isEmpty }
        }
        host.send(#"{"cmd":"set_listed","listed":true}"#)
        try eli.wait(for: "listing_changed", count: 2)
        for node in 0..<2 {
            try waitForLobby(of: cluster, node: node, "jazz again") { $0["jazz"]?.text("topic") == "Jazz till dawn" }
        }
    }
}
