import Foundation
import Testing

@testable import RoomPersistence

/// Whether a room shows in the lobby is kept like every other change: committed to the journal, applied to the
/// database, read back with the room.
@Suite struct ListingStoreTests {
    /// An unlisting committed while another program holds the database's lock is safe in the journal, and the
    /// next start applies it: the room loads unlisted.
    @Test func anUnlistingInTheJournalIsAppliedAtTheNextStart() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let probe = StoreProbe()
        let store = try SavedRooms(directory: folder.path, busyTimeoutMilliseconds: 50, now: 1, report: probe.report)
        let other = try SQLiteConnection(path: folder.databasePath)
        try other.execute("BEGIN IMMEDIATE")
        probe.commit(store, [.openRoom(room: "secret", at: 1), .setListed(room: "secret", listed: false, at: 2)])
        #expect(probe.wait { $0.results == [.committed] })
        store.close(timeout: .milliseconds(200))
        #expect(probe.events.last == .closed(unapplied: 1, unsaved: 0))
        try other.execute("ROLLBACK")
        other.close()
        #expect(try RoomDatabase(path: folder.databasePath).isListed("secret"))

        let reopened = try SavedRooms(directory: folder.path, now: 3, report: { _ in })
        defer { reopened.close() }
        #expect(reopened.recovered.entries == 1)
        #expect(try reopened.database.load(room: "secret", rolesSince: 0).listed == false)
        #expect(try reopened.database.isListed("secret") == false)
        #expect(try reopened.database.load(room: "open", rolesSince: 0).listed)
    }

    /// Unlisting twice keeps the first time; listing again removes the mark; other rooms are untouched.
    @Test func listingAndUnlisting() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        #expect(try database.isListed("secret"))
        try database.setListed("secret", listed: false, at: 5)
        try database.setListed("secret", listed: false, at: 9)
        try database.setListed("secret", listed: true, at: 10)
        try database.setListed("secret", listed: true, at: 11)
        #expect(try database.isListed("secret"))
        try database.setListed("secret", listed: false, at: 12)
        #expect(try database.isListed("secret") == false)
        #expect(try database.isListed("jazz"))
        database.close()
        let again = try RoomDatabase(path: folder.databasePath)
        #expect(try again.isListed("secret") == false)
    }

    /// A database from before rooms could be unlisted (schema version 2) is brought up to date, its rooms
    /// listed.
    @Test func aVersionTwoDatabaseGainsTheListing() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            try database.setTopic("jazz", topic: "Late night", at: 1)
            database.close()
            let connection = try SQLiteConnection(path: folder.databasePath)
            try connection.execute("DROP TABLE unlisted_rooms; DROP TABLE demotions; PRAGMA user_version = 2")
            connection.close()
        }
        let database = try RoomDatabase(path: folder.databasePath)
        #expect(try database.room("jazz")?.topic == "Late night")
        #expect(try database.isListed("jazz"))
        try database.setListed("jazz", listed: false, at: 2)
        #expect(try database.isListed("jazz") == false)
    }
}
