import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// The lobby's list is fed from published outcomes: a room's change reaches it only once the change is
/// committed, like every other announcement, and a room's saved listing comes back with the room.
@Suite struct DirectoryPipelineTests {
    struct Setup {
        let committer = ManualCommitter()
        let loader = ManualLoader()
        let directory = RoomDirectory(maxWatchers: 10, log: ServerLog(minimum: .error))
        let rooms: LocalRooms

        init() {
            rooms = LocalRooms(
                roles: defaultRoles, maxPeers: 100, committer: committer, loader: loader, consumers: [directory],
                log: ServerLog(minimum: .error))
        }

        func join(_ id: PeerID, role: RoleName = .audience, room: String = "lobby") {
            rooms.join(JoinProbe().ticket(id, role: role), room: room)
        }
    }

    @Test func aChangeReachesTheListOnlyOnceItIsCommitted() {
        let test = Setup()
        test.join("ana", role: .host)
        // A join with nothing to save is carried out at once.
        #expect(test.directory.listings["lobby"]?.onStage == 1)
        #expect(test.rooms.handle(.setTopic("Friday"), from: "ana", id: nil, in: "lobby", now: 2) == nil)
        #expect(test.committer.pending.count == 1)
        #expect(test.directory.listings["lobby"]?.topic == "")
        test.committer.complete(0)
        #expect(test.directory.listings["lobby"]?.topic == "Friday")

        #expect(test.rooms.handle(.setListed(false), from: "ana", id: nil, in: "lobby", now: 3) == nil)
        #expect(test.committer.pending.last?.outcome.changes.contains(.listed(false)) == true)
        // Decided, not yet committed: the lobby still shows the room, and a join behind it waits too.
        test.join("eli")
        #expect(test.directory.listings["lobby"] != nil)
        test.committer.complete(1)
        #expect(test.directory.listings["lobby"] == nil)
    }

    @Test func aRoomLoadedUnlistedStaysOutOfTheList() {
        let test = Setup()
        var hidden = SavedRoom()
        hidden.listed = false
        test.loader.saved["hidden"] = hidden
        test.join("ana", role: .host, room: "hidden")
        test.join("bo", role: .host, room: "open")
        #expect(test.rooms.rooms["hidden"]?.listed == false)
        #expect(test.directory.listings.keys.sorted() == ["open"])
    }
}
