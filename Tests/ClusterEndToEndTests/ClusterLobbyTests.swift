import Foundation
import RoomTesting
import StrictJSON
import Testing

/// The lobby of each node of a cluster: every live room of the cluster, the rooms that node serves with the changes
/// their owner decides as it applies them, the others as their owners write them to Redis (once a tick).
@Suite(.ownThread, .serialized) struct ClusterLobbyTests {
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
        // Nobody came through node 2 yet: its lobby lists the room as its owner wrote it.
        try waitForLobby(of: cluster, node: 1, "jazz from its owner", timeout: 5) {
            $0["jazz"]?.text("topic") == "Late night jazz" && $0["jazz"]?["on_stage"] == .integer(1)
        }

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

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"))
    func aRoomServedByOneNodeIsInEveryLobbyUntilItEndsOrItsNodeDies() throws {
        let cluster = try TestCluster(nodes: 3)
        let hana = try cluster.bot("hana", role: "host", node: 0, room: "jazz")
        try hana.wait(for: "joined")
        let ivo = try cluster.bot("ivo", role: "host", node: 0, room: "rust")
        try ivo.wait(for: "joined")
        let lea = try cluster.bot("lea", role: "audience", node: 0, room: "rust")
        try lea.wait(for: "joined")
        ivo.send(#"{"cmd":"topic","text":"Borrowing"}"#)
        try ivo.wait(for: "topic_changed")
        for node in 1..<3 {
            try waitForLobby(of: cluster, node: node, "both rooms of node 1", timeout: 5) {
                $0["jazz"] != nil && $0["rust"]?.text("topic") == "Borrowing" && $0["rust"]?["listeners"] == .integer(1)
            }
        }

        // Ended by its host: gone from every lobby.
        hana.send(#"{"cmd":"end_room"}"#)
        try hana.wait(for: "room_ended")
        for node in 0..<3 {
            try waitForLobby(of: cluster, node: node, "jazz gone", timeout: 5) {
                $0["jazz"] == nil && $0["rust"] != nil
            }
        }

        // The node that served the other room dies: the room leaves the other lobbies with it, within the
        // 10 s in which the cluster notices a dead node.
        cluster.nodes[0].kill9()
        let killed = Date()
        for node in 1..<3 {
            try waitForLobby(of: cluster, node: node, "no rooms after node 1 died", timeout: 12) { $0.isEmpty }
        }
        #expect(Date().timeIntervalSince(killed) < 10)
    }
}
