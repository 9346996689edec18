import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import ClusterState
@testable import RoomServer

/// What a node's lobby takes from the other nodes' lobby records (`ClusterRooms.lobbyEntries`).
@Suite struct ClusterLobbyEntriesTests {
    func room(_ name: String, topic: String = "", listeners: Int = 0) -> RoomListing {
        RoomListing(
            room: name, topic: topic, stage: [.init(name: "Ana", role: .host)], onStage: 1, listeners: listeners,
            raisedHands: 0, startedAt: 1_764_412_800_000)
    }

    @Test func twoNodesNamingOneRoomAreReadAsTheOneUnderTheHigherEpochAndUnreadableEntriesAreSkipped() {
        func bytes(_ change: ListingChange, epoch: UInt64) -> [UInt8] {
            DirectoryCodec.encode(DirectoryCodec.ClusterEntry(change: change, epoch: epoch, at: 0))
        }
        let records = [
            LobbyRecords(
                node: "a", incarnation: 1,
                entries: [
                    "jazz": bytes(.added(room("jazz", topic: "Old owner"), .started), epoch: 3),
                    "rust": bytes(.added(room("rust"), .started), epoch: 1),
                    "folk": Array("not json".utf8),
                    "blues": bytes(.added(room("jazz"), .started), epoch: 9),
                ]),
            LobbyRecords(
                node: "b", incarnation: 2,
                entries: ["jazz": bytes(.removed(room: "jazz", .unlisted), epoch: 4)]),
        ]
        #expect(
            ClusterRooms.lobbyEntries(records, log: ServerLog(minimum: .error)) == [
                "jazz": .removed(room: "jazz", .unlisted), "rust": .added(room("rust"), .started),
            ])
    }
}
