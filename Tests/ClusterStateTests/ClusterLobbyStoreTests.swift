import ClusterState
import Foundation
import RedisClient
import RoomTesting
import Testing

/// Each node's lobby hash in Redis: replaced whole, versioned on every write, expiring with the node.
@Suite(.ownThread, .serialized) struct ClusterLobbyStoreTests {
    @Test func aNodesLobbyIsReplacedWholeWithANewVersionAndExpiresUnlessRefreshed() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let redis = try store(server)
        #expect(try redis.lobbyVersions(of: ["a", "b"]) == [:])
        try redis.replaceLobby(
            node: "a", entries: ["jazz": bytes("one"), "rust": bytes("two")], version: "v1", ttlMilliseconds: 60_000)
        #expect(try redis.lobby(of: "a") == ["jazz": bytes("one"), "rust": bytes("two")])
        #expect(try redis.lobbyVersions(of: ["a", "b"]) == ["a": "v1"])
        // Replaced whole: a room left out is gone.
        try redis.replaceLobby(node: "a", entries: ["rust": bytes("three")], version: "v2", ttlMilliseconds: 300)
        #expect(try redis.lobby(of: "a") == ["rust": bytes("three")])
        #expect(try redis.lobbyVersions(of: ["a"]) == ["a": "v2"])
        // An empty lobby still has its version, so readers see that it changed.
        try redis.replaceLobby(node: "b", entries: [:], version: "v9", ttlMilliseconds: 60_000)
        #expect(try redis.lobbyVersions(of: ["a", "b"]) == ["a": "v2", "b": "v9"])
        #expect(try redis.lobby(of: "b") == [:])
        // Refreshed, it lives on; left alone, it expires.
        try redis.refreshLobby(node: "b", ttlMilliseconds: 300)
        let pttl = try redis.connection.command(RedisCommand("PTTL", ClusterKeys.lobby("b"))).integer ?? -1
        #expect((1...300).contains(pttl))
        usleep(600_000)
        #expect(try redis.lobbyVersions(of: ["a", "b"]) == [:])
        try redis.replaceLobby(node: "a", entries: ["jazz": bytes("x")], version: "v3", ttlMilliseconds: 60_000)
        try redis.clearLobby(node: "a")
        #expect(try redis.lobby(of: "a") == [:])
    }

    @Test func aRoomNameThatCouldBreakTheKeyLayoutIsRefused() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let redis = try store(server)
        #expect(throws: ClusterError.self) {
            try redis.replaceLobby(node: "a", entries: ["~v": bytes("x")], version: "v1", ttlMilliseconds: 1000)
        }
        #expect(try redis.lobbyVersions(of: ["a"]) == [:])
    }
}
