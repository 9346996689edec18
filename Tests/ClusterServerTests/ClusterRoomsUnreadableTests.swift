import ClusterState
import Foundation
import RedisClient
import RoomCore
import RoomPersistence
import Testing

@testable import ClusterServer
@testable import RoomServer

/// An entry of a room's stream that this node cannot read (sealed by the owner, but in another format version)
/// is never skipped in silence: one log line names the room and the entry, and the copy is read again from the
/// room's checkpoint.
@Suite struct ClusterRoomsUnreadableTests {
    @Test func anUnreadableEntryIsLoggedByRoomAndIdAndTheCopyIsReadAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unreadable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let log = ServerLog(minimum: .info, descriptor: ends[1])
        let store = try SavedRooms(directory: folder.path, now: 1, report: { _ in })
        defer { store.close(timeout: .seconds(1)) }
        let seal = ClusterSeal(secret: Array("the cluster's secret".utf8))
        let rooms = unstartedClusterRooms(store: store, log: log, seal: seal)
        // An input entry, and a reset entry (a whole copy of the room), each in a format this node does not read.
        let newer = #"{"v":2,"kind":"levels","node":"a/1","connection":0,"now":1}"#
        var entries: [RoomEntry] = []
        for (name, kind) in [("jazz", EntryKind.outcome), ("blues", .reset)] {
            let room = ClusterRooms.Room()
            room.phase = .replica
            room.ready = true
            room.copy = ReplicatedRoom(authority: RoomAuthority(name: name, roles: defaultRoles))
            rooms.rooms[name] = room
            let generation = room.generation
            var entry = RoomEntry(id: EntryID(seq: 12), prev: .zero, epoch: 1, kind: kind, body: [])
            entry.body = try seal.sealEntry(Array(newer.utf8), room: name, entry: entry)
            entries.append(entry)
            #expect(!rooms.apply([entry], in: name, generation: generation))
            #expect(room.position == .zero)
            #expect(!room.ready && room.generation == generation + 1, "the copy of \(name) is read again")
        }

        close(ends[1])
        let text = String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n").filter { $0.contains("cannot be read") }
        #expect(lines.count == 2, "\(text)")
        for (line, name) in zip(lines, ["jazz", "blues"]) {
            #expect(
                line.hasSuffix(
                    "room \(name): entry \(entries[0].id) cannot be read (written in format version 2; this node reads "
                        + "version 1 only); reading the room again from its checkpoint"), "\(text)")
        }
    }
}
