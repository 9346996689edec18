import Foundation
import Testing

@testable import RoomPersistence

/// One migration chain for every older file: version 2, version 3 with `unlisted_rooms`, version 3 files whose
/// third migration made `invitations` instead, and version 4, all reach the current version with every table
/// (`demotions` since version 5, `raised_hands` since version 6, `hands_off_rooms` since version 7, `live_rooms` since
/// version 8, `room_deadlines` since version 9).
@Suite struct SchemaMigrationTests {
    /// Makes a current database with one room, then takes it back to `version` without `dropped`.
    private func olderDatabase(version: Int, dropping dropped: [String]) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        let database = try RoomDatabase(path: folder.databasePath)
        try database.setTopic("jazz", topic: "Late night", at: 1)
        database.close()
        let connection = try SQLiteConnection(path: folder.databasePath)
        // Every file before version 5 lacks the demotions.
        for table in dropped + (version < 5 ? ["demotions"] : []) { try connection.execute("DROP TABLE \(table)") }
        try connection.execute("PRAGMA user_version = \(version)")
        connection.close()
        return folder
    }

    @Test(arguments: [
        (2, ["invitations", "unlisted_rooms", "raised_hands", "hands_off_rooms", "live_rooms", "room_deadlines"]),
        (3, ["invitations", "raised_hands", "hands_off_rooms", "live_rooms", "room_deadlines"]),
        (3, ["unlisted_rooms", "raised_hands", "hands_off_rooms", "live_rooms", "room_deadlines"]),
        (4, ["raised_hands", "hands_off_rooms", "live_rooms", "room_deadlines"]),
        (5, ["raised_hands", "hands_off_rooms", "live_rooms", "room_deadlines"]),
        (6, ["hands_off_rooms", "live_rooms", "room_deadlines"]), (7, ["live_rooms", "room_deadlines"]),
        (8, ["room_deadlines"]),
    ])
    func anOlderDatabaseGainsTheInvitationsAndTheListing(version: Int, dropped: [String]) throws {
        let folder = try olderDatabase(version: version, dropping: dropped)
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        #expect(try database.room("jazz")?.topic == "Late night")
        #expect(try database.isListed("jazz"))
        try database.setListed("jazz", listed: false, at: 2)
        try database.apply(.invite(room: "jazz", invitee: "eli", inviter: "ana", at: 3))
        #expect(try database.isListed("jazz") == false)
        #expect(try database.invitations(room: "jazz") == [InvitationRecord(invitee: "eli", inviter: "ana", at: 3)])
        try database.apply(.demote(room: "jazz", identity: "chen", role: "audience", at: 4))
        #expect(try database.demotions(room: "jazz") == [RoleRecord(identity: "chen", role: "audience", at: 4)])
        try database.apply(.releaseRole(room: "jazz", identity: "fay", role: "audience", at: 4))
        try database.apply(.setHand(room: "jazz", identity: "fay", raisedAt: 4))
        #expect(try database.load(room: "jazz", rolesSince: 0).hands == [HandRecord(identity: "fay", raisedAt: 4)])
        #expect(try database.load(room: "jazz", rolesSince: 0).handsAllowed)
        try database.apply(.setHandsAllowed(room: "jazz", allowed: false, at: 5))
        #expect(try database.load(room: "jazz", rolesSince: 0).handsAllowed == false)
        try database.apply(.setLive(room: "jazz", since: 6))
        #expect(try database.load(room: "jazz", rolesSince: 0).liveSince == 6)
        try database.apply(.setLive(room: "jazz", since: nil))
        #expect(try database.load(room: "jazz", rolesSince: 0).liveSince == nil)
        let ending = DeadlineRecord(handoverDue: nil, endsAt: 7, lastHost: "ana", lastHostName: "Ana")
        try database.apply(.setDeadline(room: "jazz", deadline: ending))
        #expect(try database.load(room: "jazz", rolesSince: 0).deadline == ending)
        #expect(try database.roomsWithDeadlines() == ["jazz"])
        database.close()
        let connection = try SQLiteConnection(path: folder.databasePath)
        defer { connection.close() }
        #expect(try Schema.userVersion(connection) == 9)
        #expect(Schema.currentVersion == 9)
    }
}
