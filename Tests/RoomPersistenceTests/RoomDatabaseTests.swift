import Foundation
import Testing

@testable import RoomPersistence

/// A fresh folder under the system's temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("clubroom-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var databasePath: String { path + "/" + RoomDatabase.fileName }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

@Suite struct RoomDatabaseTests {
    @Test func roomLifecycle() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        #expect(try database.room("lobby") == nil)
        let opened = try database.openRoom("lobby", at: 1000)
        #expect(
            opened
                == RoomRecord(id: "lobby", topic: "", endedAt: nil, endedReason: nil, createdAt: 1000, updatedAt: 1000))
        #expect(try database.openRoom("lobby", at: 5000) == opened)
        #expect(try database.setTopic("lobby", topic: "Friday terminal hour", at: 2000).topic == "Friday terminal hour")
        let ended = try database.endRoom("lobby", reason: "see you next week", at: 3000)
        #expect(ended.isEnded)
        #expect(ended.endedAt == 3000)
        #expect(ended.endedReason == "see you next week")
        #expect(try database.openRoom("lobby", at: 3500).isEnded)
        let reopened = try database.reopenRoom("lobby", at: 4000)
        #expect(
            reopened
                == RoomRecord(
                    id: "lobby", topic: "Friday terminal hour", endedAt: nil, endedReason: nil, createdAt: 1000,
                    updatedAt: 4000))
        #expect(try database.rooms().map(\.id) == ["lobby"])
    }

    @Test func pendingInvitationsAreKeptUntilTheyEndOrTheRoomDoes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            try database.openRoom("lobby", at: 1)
            try database.apply(.invite(room: "lobby", invitee: "eli", inviter: "ana", at: 20))
            try database.apply(.invite(room: "lobby", invitee: "bo", inviter: "ana", at: 10))
            try database.apply(.invite(room: "stage", invitee: "cy", inviter: "ana", at: 5))
            try database.apply(.invite(room: "lobby", invitee: "eli", inviter: "dara", at: 30))
            try database.apply(.endInvitation(room: "lobby", invitee: "bo"))
        }
        let reopened = try RoomDatabase(path: folder.databasePath)
        #expect(try reopened.invitations(room: "lobby") == [InvitationRecord(invitee: "eli", inviter: "dara", at: 30)])
        #expect(
            try reopened.load(room: "lobby", rolesSince: 0).invitations == [
                InvitationRecord(invitee: "eli", inviter: "dara", at: 30)
            ])
        try reopened.apply(.endRoom(room: "stage", reason: "", at: 40))
        #expect(try reopened.invitations(room: "stage") == [])
    }

    /// A demotion by someone else is kept, across a restart, until it is lifted or the room ends.
    @Test func demotionsAreKeptUntilTheyAreLiftedOrTheRoomEnds() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            try database.openRoom("lobby", at: 1)
            try database.apply(.demote(room: "lobby", identity: "chen", role: "speaker", at: 10))
            try database.apply(.demote(room: "lobby", identity: "chen", role: "audience", at: 20))
            try database.apply(.demote(room: "lobby", identity: "bo", role: "audience", at: 30))
            try database.apply(.demote(room: "stage", identity: "cy", role: "audience", at: 5))
            try database.apply(.endDemotion(room: "lobby", identity: "bo"))
        }
        let reopened = try RoomDatabase(path: folder.databasePath)
        let kept = [RoleRecord(identity: "chen", role: "audience", at: 20)]
        #expect(try reopened.demotions(room: "lobby") == kept)
        #expect(try reopened.load(room: "lobby", rolesSince: 0).demotions == kept)
        try reopened.apply(.endRoom(room: "stage", reason: "", at: 40))
        #expect(try reopened.demotions(room: "stage") == [])
        #expect(try reopened.demotions(room: "lobby") == kept)
    }

    /// A room's deadline (a handover due, or its end) is kept across a reopening, replaced by the next, and gone
    /// when cleared or when the room ends.
    @Test func deadlinesAreKeptUntilClearedOrTheRoomEnds() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let handover = DeadlineRecord(handoverDue: 70, endsAt: nil, lastHost: "ana", lastHostName: "Ana")
        let ending = DeadlineRecord(handoverDue: nil, endsAt: 190, lastHost: "ana", lastHostName: "Ana")
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            try database.openRoom("lobby", at: 1)
            try database.apply(.setDeadline(room: "lobby", deadline: handover))
            try database.apply(.setDeadline(room: "lobby", deadline: ending))
            try database.apply(.setDeadline(room: "stage", deadline: handover))
            try database.apply(.setDeadline(room: "porch", deadline: handover))
            try database.apply(.setDeadline(room: "porch", deadline: nil))
            database.close()
        }
        let reopened = try RoomDatabase(path: folder.databasePath)
        #expect(try reopened.load(room: "lobby", rolesSince: 0).deadline == ending)
        #expect(try reopened.load(room: "porch", rolesSince: 0).deadline == nil)
        #expect(try reopened.roomsWithDeadlines() == ["lobby", "stage"])
        try reopened.apply(.endRoom(room: "stage", reason: "", at: 40))
        #expect(try reopened.roomsWithDeadlines() == ["lobby"])
        // Neither time: nothing waits, and nothing is kept.
        try reopened.apply(
            .setDeadline(
                room: "lobby", deadline: DeadlineRecord(handoverDue: nil, endsAt: nil, lastHost: "a", lastHostName: "A")
            ))
        #expect(try reopened.roomsWithDeadlines() == [])
    }

    @Test func restartKeepsEverything() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            try database.openRoom("lobby", at: 1)
            try database.setTopic("lobby", topic: "Rust vs Swift", at: 2)
            try database.endRoom("stage", reason: "done", at: 3)
            try database.appendAudit(
                room: "lobby", at: 4, actor: "ana", action: "set_role", target: "bo", detail: "speaker")
            try database.appendAudit(room: "lobby", at: 5, actor: "ana", action: "set_topic", detail: "Rust vs Swift")
            try database.appendChat(
                room: "lobby", at: 6, fromIdentity: "bo", fromName: "Bo", audience: .everyone, text: "hi")
            try database.appendChat(
                room: "lobby", at: 7, fromIdentity: "bo", fromName: "Bo", audience: .peer("ana"), text: "psst")
            try database.appendChat(
                room: "lobby", at: 8, fromIdentity: "ana", fromName: "Ana", audience: .role("moderator"), text: "mods")
            try database.rememberRole(room: "lobby", identity: "bo", role: "speaker", leftAt: 9)
        }
        let reopened = try RoomDatabase(path: folder.databasePath)
        #expect(try reopened.room("lobby")?.topic == "Rust vs Swift")
        #expect(try reopened.room("stage")?.endedReason == "done")
        #expect(
            try reopened.auditLog(room: "lobby") == [
                AuditRecord(
                    id: 1, room: "lobby", at: 4, actor: "ana", action: "set_role", target: "bo", detail: "speaker"),
                AuditRecord(
                    id: 2, room: "lobby", at: 5, actor: "ana", action: "set_topic", target: nil, detail: "Rust vs Swift"
                ),
            ])
        #expect(
            try reopened.recentChat(room: "lobby") == [
                ChatRecord(
                    id: 1, room: "lobby", at: 6, fromIdentity: "bo", fromName: "Bo", audience: .everyone, text: "hi"),
                ChatRecord(
                    id: 2, room: "lobby", at: 7, fromIdentity: "bo", fromName: "Bo", audience: .peer("ana"),
                    text: "psst"),
                ChatRecord(
                    id: 3, room: "lobby", at: 8, fromIdentity: "ana", fromName: "Ana", audience: .role("moderator"),
                    text: "mods"),
            ])
        #expect(try reopened.recentRole(room: "lobby", identity: "bo", now: 10) == "speaker")
    }

    @Test func chatKeepsOnlyTheLatest200PerRoom() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        for index in 1...250 {
            try database.appendChat(
                room: "lobby", at: Int64(index), fromIdentity: "bo", fromName: "Bo", audience: .everyone,
                text: "message \(index)")
        }
        try database.appendChat(
            room: "stage", at: 1, fromIdentity: "cy", fromName: "Cy", audience: .everyone, text: "other room")
        let kept = try database.recentChat(room: "lobby")
        #expect(kept.count == 200)
        #expect(kept.first?.text == "message 51")
        #expect(kept.last?.text == "message 250")
        #expect(try database.recentChat(room: "lobby", limit: 1000).count == 200)
        #expect(
            try database.recentChat(room: "lobby", limit: 3).map(\.text) == [
                "message 248", "message 249", "message 250",
            ])
        #expect(try database.recentChat(room: "stage").map(\.text) == ["other room"])
    }

    @Test func smallerRetentionTrimsToIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath, chatRetention: 2)
        for text in ["a", "b", "c"] {
            try database.appendChat(room: "r", at: 1, fromIdentity: "x", fromName: "X", audience: .everyone, text: text)
        }
        #expect(try database.recentChat(room: "r").map(\.text) == ["b", "c"])
    }

    @Test func roleComesBackWithinExactly60Seconds() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        try database.rememberRole(room: "lobby", identity: "bo", role: "moderator", leftAt: 1_000_000)
        #expect(try database.recentRole(room: "lobby", identity: "bo", now: 1_000_000) == "moderator")
        #expect(try database.recentRole(room: "lobby", identity: "bo", now: 1_060_000) == "moderator")
        #expect(try database.recentRole(room: "lobby", identity: "bo", now: 1_060_001) == nil)
        #expect(try database.recentRole(room: "stage", identity: "bo", now: 1_000_001) == nil)
        #expect(try database.recentRole(room: "lobby", identity: "cy", now: 1_000_001) == nil)
        #expect(try database.recentRole(room: "lobby", identity: "bo", within: 5000, now: 1_005_001) == nil)
    }

    @Test func laterDepartureReplacesTheRememberedRole() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        try database.rememberRole(room: "lobby", identity: "bo", role: "speaker", leftAt: 1000)
        try database.rememberRole(room: "lobby", identity: "bo", role: "audience", leftAt: 2000)
        #expect(try database.recentRole(room: "lobby", identity: "bo", now: 2500) == "audience")
        try database.forgetRole(room: "lobby", identity: "bo")
        #expect(try database.recentRole(room: "lobby", identity: "bo", now: 2500) == nil)
    }

    @Test func oldDeparturesArePruned() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        try database.rememberRole(room: "lobby", identity: "old", role: "speaker", leftAt: 0)
        try database.rememberRole(
            room: "stage", identity: "new", role: "host", leftAt: RoomDatabase.recentRoleRetention + 1)
        #expect(try database.recentRole(room: "lobby", identity: "old", within: .max / 2, now: 1) == nil)
        // Extreme times are held at the bounds rather than overflowing.
        #expect(try database.recentRole(room: "stage", identity: "new", within: .max, now: .min) == "host")
        try database.rememberRole(room: "stage", identity: "early", role: "speaker", leftAt: .min)
        #expect(
            try database.recentRole(room: "stage", identity: "new", now: RoomDatabase.recentRoleRetention + 1) == "host"
        )
    }

    @Test func auditLogLimitKeepsTheLatest() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        for index in 1...5 {
            try database.appendAudit(
                room: "lobby", at: Int64(index), actor: "ana", action: "mute_peer", target: "p\(index)")
        }
        try database.appendAudit(room: "stage", at: 9, actor: "cy", action: "end_room", detail: "bye")
        #expect(try database.auditLog(room: "lobby", limit: 2).map(\.target) == ["p4", "p5"])
        #expect(try database.auditLog(room: "lobby").count == 5)
        #expect(try database.auditLog(room: "stage").map(\.detail) == ["bye"])
    }

    @Test func corruptFileIsAClearErrorNamingTheFile() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.databasePath
        _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5A, count: 8192))
        do {
            _ = try RoomDatabase(path: path)
            Issue.record("a corrupt database opened")
        } catch {
            #expect(error.path == path)
            #expect(error.message == "file is not a database")
            #expect(error.description.hasPrefix("database \(path): file is not a database (SQLite code 26)"))
        }
    }

    @Test func missingFolderIsAClearError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/missing/" + RoomDatabase.fileName
        #expect(
            throws: DatabaseError(
                path: path, code: 14, message: "unable to open database file: No such file or directory", sql: nil)
        ) {
            try RoomDatabase(path: path)
        }
    }

    @Test func aDamagedPageIsFoundWhenTheFileIsOpened() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            _ = try database.openRoom("stage", at: 0)
            for index in 0..<300 {
                _ = try database.appendAudit(
                    room: "stage", at: Int64(index), actor: "ana", action: "set_role", target: "eli",
                    detail: String(repeating: "x", count: 100))
            }
            database.close()
        }
        let file = try #require(FileHandle(forUpdatingAtPath: folder.databasePath))
        try file.seek(toOffset: 3 * 4096)
        try file.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        try file.close()
        do {
            _ = try RoomDatabase(path: folder.databasePath)
            Issue.record("a damaged database opened")
        } catch {
            #expect(error.code == 11)
            #expect(error.isDamaged)
            #expect(error.message.hasPrefix("the file is damaged; SQLite's integrity_check says: "), "\(error.message)")
        }
    }

    @Test func aNewDatabaseIsTheOwnersOnly() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let previous = umask(0o022)
        defer { umask(previous) }
        let database = try RoomDatabase(path: folder.databasePath)
        _ = try database.openRoom("stage", at: 0)
        _ = try database.setTopic("stage", topic: "hello", at: 1)
        for name in [RoomDatabase.fileName, RoomDatabase.fileName + "-wal", RoomDatabase.fileName + "-shm"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.path + "/" + name)[.posixPermissions]
            #expect(mode as? Int == 0o600, "\(name)")
        }
        database.close()
    }

    @Test func newerSchemaIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let connection = try SQLiteConnection(path: folder.databasePath)
            try connection.execute("PRAGMA user_version = 99")
        }
        #expect(
            throws: DatabaseError(
                path: folder.databasePath, code: nil,
                message:
                    "schema version 99 is newer than this program's 9; use a newer clubroom or another data folder",
                sql: nil)
        ) {
            try RoomDatabase(path: folder.databasePath)
        }
    }

    /// Each connection's page cache stays within its bound however much is written: a server that runs for days
    /// does not keep every page it wrote.
    @Test func thePageCacheStaysWithinItsBound() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let connection = try SQLiteConnection(path: folder.databasePath)
        try connection.execute("CREATE TABLE t (x INTEGER NOT NULL, text TEXT NOT NULL)")
        let text = String(repeating: "a", count: 1000)
        for batch in 0..<8 {
            try connection.transaction { () throws(DatabaseError) in
                for row in 0..<500 {
                    try connection.prepare("INSERT INTO t (x, text) VALUES (?1, ?2)")
                        .bind(.integer(Int64(batch * 500 + row)), .text(text)).run()
                }
            }
        }
        let count = try connection.prepare("SELECT count(*), sum(length(text)) FROM t")
        #expect(try count.step())
        #expect(count.int64(at: 0) == 4000 && count.int64(at: 1) == 4_000_000)
        let bound = SQLiteConnection.pageCacheKibibytes * 1024
        #expect(connection.pageCacheBytes > bound / 2)
        // SQLite's count includes each page's header, a few percent beyond the pages themselves.
        #expect(connection.pageCacheBytes <= bound * 11 / 10, "\(connection.pageCacheBytes) bytes cached")
    }

    @Test func sqlErrorsCarryTheStatement() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let connection = try SQLiteConnection(path: folder.databasePath)
        #expect(
            throws: DatabaseError(
                path: folder.databasePath, code: 1, message: "no such table: nowhere", sql: "SELECT * FROM nowhere")
        ) {
            try connection.prepare("SELECT * FROM nowhere")
        }
    }

    @Test func failedTransactionRollsBack() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let connection = try SQLiteConnection(path: folder.databasePath)
        try connection.execute("CREATE TABLE t (x INTEGER NOT NULL)")
        #expect(throws: DatabaseError.self) {
            try connection.transaction { () throws(DatabaseError) in
                try connection.prepare("INSERT INTO t (x) VALUES (?1)").bind(.integer(1)).run()
                try connection.prepare("INSERT INTO t (x) VALUES (?1)").bind(.null).run()
            }
        }
        let count = try connection.prepare("SELECT count(*) FROM t")
        #expect(try count.step())
        #expect(count.int64(at: 0) == 0)
    }

    @Test func usesWALJournal() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let database = try RoomDatabase(path: folder.databasePath)
        try database.openRoom("lobby", at: 1)
        #expect(FileManager.default.fileExists(atPath: folder.databasePath + "-wal"))
    }
}
