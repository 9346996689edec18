import Foundation
import Synchronization
import Testing

@testable import RoomPersistence

/// What a store reported and what its commits became, for waiting on.
final class StoreProbe: Sendable {
    private let state = Mutex<(events: [StoreEvent], results: [CommitStatus])>(([], []))

    var events: [StoreEvent] { state.withLock { $0.events } }
    var results: [CommitStatus] { state.withLock { $0.results } }

    func report(_ event: StoreEvent) { state.withLock { $0.events.append(event) } }

    /// Commits and records the status the store answers with.
    func commit(_ store: SavedRooms, _ changes: [DatabaseChange]) {
        store.commit(changes) { status in self.state.withLock { $0.results.append(status) } }
    }

    /// Waits up to `timeout` seconds for `condition`.
    func wait(timeout: Double = 10, _ condition: (SavedRoomsProbeView) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(SavedRoomsProbeView(events: events, results: results)) { return true }
            usleep(5_000)
        }
        return false
    }
}

struct SavedRoomsProbeView {
    var events: [StoreEvent]
    var results: [CommitStatus]
}

func chat(_ text: String, at: Int64 = 1) -> DatabaseChange {
    .appendChat(room: "lobby", at: at, fromIdentity: "ana", fromName: "Ana", audience: .everyone, text: text)
}

@Suite struct SavedRoomsTests {
    @Test func aCommitIsDurableBeforeTheDatabaseHasIt() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let probe = StoreProbe()
        let store = try SavedRooms(directory: folder.path, busyTimeoutMilliseconds: 50, now: 1, report: probe.report)
        // Another connection holds the database's write lock, as a backup or the sqlite3 shell would.
        let other = try SQLiteConnection(path: folder.databasePath)
        try other.execute("BEGIN IMMEDIATE")
        probe.commit(store, [chat("while locked")])
        #expect(probe.wait { $0.results == [.committed] })
        #expect(
            probe.wait { $0.events.contains { if case .applyFailing(let p) = $0 { p.kind == .locked } else { false } } }
        )
        // The server stops while the lock is still held: the change stays in the journal.
        store.close(timeout: .milliseconds(200))
        #expect(probe.events.last == .closed(unapplied: 1, unsaved: 0))
        try other.execute("ROLLBACK")
        other.close()
        #expect(try RoomDatabase(path: folder.databasePath).recentChat(room: "lobby").isEmpty)

        let reopened = try SavedRooms(directory: folder.path, now: 2, report: { _ in })
        defer { reopened.close() }
        #expect(reopened.recovered.entries == 1)
        #expect(try reopened.database.recentChat(room: "lobby").map(\.text) == ["while locked"])
        #expect(try reopened.database.appliedJournalSeq() == 1)
    }

    @Test func aLockedDatabaseCatchesUpWhenTheLockGoes() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let probe = StoreProbe()
        let store = try SavedRooms(directory: folder.path, busyTimeoutMilliseconds: 50, now: 1, report: probe.report)
        defer { store.close() }
        let other = try SQLiteConnection(path: folder.databasePath)
        try other.execute("BEGIN IMMEDIATE")
        for index in 0..<5 { probe.commit(store, [chat("message \(index)", at: Int64(index))]) }
        #expect(probe.wait { $0.results.count == 5 })
        #expect(probe.results.allSatisfy { $0 == .committed })
        #expect(probe.wait { !$0.events.isEmpty })
        try other.execute("ROLLBACK")
        #expect(store.flush(timeout: .seconds(10)))
        #expect(try store.database.recentChat(room: "lobby").map(\.text) == (0..<5).map { "message \($0)" })
        // One line when the database stopped taking changes, one when it took them again.
        #expect(probe.events.count == 2)
        #expect(probe.events.last == .applyRecovered)
    }

    @Test func aFullJournalHoldsCommitsInOrderAndSavesThemWhenItCanAgain() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let probe = StoreProbe()
        let store = try SavedRooms(directory: folder.path, now: 1, report: probe.report)
        defer { store.close() }
        probe.commit(store, [.setTopic(room: "lobby", topic: "first", at: 1)])
        #expect(store.flush())
        // The journal may not grow: as a full disk, for it.
        try store.limitJournal(toPages: 1)
        let big = String(repeating: "x", count: 8000)
        probe.commit(store, [chat(big + "1")])
        probe.commit(store, [.setTopic(room: "lobby", topic: "second", at: 2)])
        #expect(probe.wait { $0.results.count == 3 })
        guard case .notSaved(let problem) = probe.results[1] else {
            Issue.record("saved: \(probe.results)")
            return
        }
        #expect(problem.kind == .diskFull)
        #expect(problem.summary == "the server's disk is full")
        #expect(probe.results[2] == probe.results[1])
        #expect(probe.events == [.commitsFailing(problem)])
        try store.limitJournal(toPages: 100_000)
        #expect(probe.wait { $0.events.last == .commitsRecovered(saved: 2) })
        #expect(store.flush())
        #expect(try store.database.room("lobby")?.topic == "second")
        #expect(try store.database.recentChat(room: "lobby").map(\.text) == [big + "1"])
    }

    @Test func commitsTheJournalCannotTakeAreLostOnlyIfTheServerStopsFirst() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let probe = StoreProbe()
        let store = try SavedRooms(directory: folder.path, now: 1, report: probe.report)
        try store.limitJournal(toPages: 1)
        probe.commit(store, [chat(String(repeating: "y", count: 8000))])
        #expect(probe.wait { $0.results.count == 1 })
        store.close(timeout: .milliseconds(100))
        #expect(probe.events.last == .closed(unapplied: 0, unsaved: 1))
        probe.commit(store, [chat("after")])
        #expect(probe.wait { $0.results.count == 2 })
        #expect(probe.results[1] == .notSaved(.stopping))
    }

    @Test func rolesHeldWhenTheServerStoppedAreReleasedAtTheNextStart() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let store = try SavedRooms(directory: folder.path, now: 1, report: { _ in })
            let probe = StoreProbe()
            probe.commit(store, [.holdRole(room: "lobby", identity: "eli", role: "speaker", at: 5)])
            probe.commit(store, [.holdRole(room: "lobby", identity: "fay", role: "moderator", at: 6)])
            probe.commit(store, [.releaseRole(room: "lobby", identity: "fay", role: "moderator", at: 7)])
            #expect(store.flush())
            #expect(try store.database.heldRoles(room: "lobby").map(\.identity) == ["eli"])
            store.close()
        }
        let store = try SavedRooms(directory: folder.path, now: 500_000, report: { _ in })
        defer { store.close() }
        #expect(store.recovered.releasedRoles == 1)
        #expect(try store.database.heldRoles(room: "lobby").isEmpty)
        // eli's window counts from the restart; fay's from when she left.
        #expect(try store.database.recentRole(room: "lobby", identity: "eli", now: 560_000) == "speaker")
        #expect(try store.database.recentRole(room: "lobby", identity: "fay", now: 560_000) == nil)
        let loaded = try store.database.load(room: "lobby", rolesSince: 440_000)
        #expect(loaded.roles == [RoleRecord(identity: "eli", role: "speaker", at: 500_000)])
    }

    @Test func aSecondServerOnTheSameFolderIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let first = try SavedRooms(directory: folder.path, now: 1, report: { _ in })
        do {
            _ = try SavedRooms(directory: folder.path, now: 1, report: { _ in })
            Issue.record("opened twice")
        } catch {
            #expect(error.isBusy)
            #expect(error.path == folder.path + "/" + SavedRooms.journalFileName)
        }
        first.close()
        let second = try SavedRooms(directory: folder.path, now: 1, report: { _ in })
        second.close()
    }

    @Test func anEntryTheDatabaseRefusesIsSkippedAndTheRestApplied() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        do {
            let database = try RoomDatabase(path: folder.databasePath)
            try database.apply(.openRoom(room: "lobby", at: 1))
        }
        // A rule of the operator's that refuses one kind of row.
        let other = try SQLiteConnection(path: folder.databasePath)
        try other.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON audit_log WHEN NEW.action = 'poison' "
                + "BEGIN SELECT RAISE(ABORT, 'refused by the operator'); END")
        other.close()
        let probe = StoreProbe()
        let store = try SavedRooms(directory: folder.path, now: 1, report: probe.report)
        defer { store.close() }
        probe.commit(store, [chat("before")])
        probe.commit(
            store, [.appendAudit(room: "lobby", at: 2, actor: "ana", action: "poison", target: nil, detail: nil)])
        probe.commit(store, [chat("after")])
        #expect(probe.wait { $0.results.count == 3 })
        #expect(store.flush())
        #expect(try store.database.recentChat(room: "lobby").map(\.text) == ["before", "after"])
        #expect(probe.events.count == 1)
        guard case .entryRejected(let seq, let problem)? = probe.events.first else {
            Issue.record("\(probe.events)")
            return
        }
        #expect(seq == 2)
        #expect(problem.contains("refused by the operator"))
    }

    @Test func everyChangeSurvivesTheJournal() throws {
        let changes: [DatabaseChange] = [
            .openRoom(room: "r", at: 1), .setTopic(room: "r", topic: "t \"q\" 名前", at: 2),
            .endRoom(room: "r", reason: "bye", at: 3), .reopenRoom(room: "r", at: 4),
            .appendChat(room: "r", at: 5, fromIdentity: "a", fromName: "A", audience: .everyone, text: "hi"),
            .appendChat(room: "r", at: 6, fromIdentity: "a", fromName: "A", audience: .peer("b"), text: "psst"),
            .appendChat(room: "r", at: 7, fromIdentity: "a", fromName: "A", audience: .role("speaker"), text: "s"),
            .appendAudit(room: "r", at: 8, actor: "a", action: "remove", target: "b", detail: "spam"),
            .appendAudit(room: "r", at: 9, actor: "a", action: "set_topic", target: nil, detail: nil),
            .holdRole(room: "r", identity: "a", role: "host", at: 10),
            .releaseRole(room: "r", identity: "a", role: "host", at: 11), .forgetRole(room: "r", identity: "a"),
            .invite(room: "r", invitee: "b", inviter: "a", at: 12), .endInvitation(room: "r", invitee: "b"),
            .setListed(room: "r", listed: false, at: 12), .setListed(room: "r", listed: true, at: 13),
            .demote(room: "r", identity: "b", role: "audience", at: 14), .endDemotion(room: "r", identity: "b"),
            .setHand(room: "r", identity: "b", raisedAt: 14), .setHand(room: "r", identity: "b", raisedAt: nil),
            .setLive(room: "r", since: 15), .setLive(room: "r", since: nil),
            .setDeadline(
                room: "r", deadline: DeadlineRecord(handoverDue: 16, endsAt: nil, lastHost: "a", lastHostName: "A 名前")),
            .setDeadline(
                room: "r", deadline: DeadlineRecord(handoverDue: nil, endsAt: 17, lastHost: nil, lastHostName: nil)),
            .setDeadline(room: "r", deadline: nil),
        ]
        #expect(try DatabaseChange.decode(DatabaseChange.encode(changes), seq: 1) == changes)
    }

    @Test func aJournalEntryThatCannotBeReadIsAnErrorNamingIt() {
        let cases: [(String, String)] = [
            ("{}", "journal entry 4: not a JSON array"),
            ("[1]", "journal entry 4: [0] is not an object"),
            (
                #"[{"kind":"nap","room":"r"}]"#,
                #"journal entry 4: [0]: unknown kind "nap" (written by a newer clubroom?)"#
            ),
            (
                #"[{"kind":"set_topic","room":"r","at":1}]"#,
                #"journal entry 4: [0]: "topic" is missing or not a string"#
            ),
            (
                #"[{"kind":"set_listed","room":"r","at":1,"listed":"no"}]"#,
                #"journal entry 4: [0]: "listed" is missing or not true or false"#
            ),
            (
                #"[{"kind":"chat","room":"r","at":1,"from":"a","name":"A","audience":"peer","to":null,"text":"x"}]"#,
                #"journal entry 4: [0]: audience "peer" does not fit "to""#
            ),
        ]
        for (text, message) in cases {
            #expect(throws: JournalEntryError.self) { try DatabaseChange.decode(text, seq: 4) }
            do {
                _ = try DatabaseChange.decode(text, seq: 4)
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test func aJournalFromANewerProgramIsRefused() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/" + SavedRooms.journalFileName
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA user_version = 7")
        }
        #expect(
            throws: DatabaseError(
                path: path, code: nil,
                message:
                    "journal version 7 is newer than this program's 1; use a newer clubroom or another data folder",
                sql: nil)
        ) {
            try SavedRooms(directory: folder.path, now: 1, report: { _ in })
        }
    }
}
