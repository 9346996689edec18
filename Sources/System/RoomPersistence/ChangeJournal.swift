import CSQLite

/// The change journal: a small SQLite file of its own beside the database, holding the changes committed but
/// not yet applied to the database. A change is durable (acknowledged) once it is here; `SavedRooms` applies it to
/// the database afterwards and then trims it from here.
///
/// The server holds the file for itself (SQLite's exclusive locking mode) for as long as it runs, so no other
/// program can lock it and delay a commit, and a second server on the same data folder is refused at start.
/// One thread uses it at a time.
final class ChangeJournal {
    /// The journal's name inside a data folder.
    static let fileName = "clubroom-journal.sqlite3"
    /// The layout this program writes (`PRAGMA user_version`).
    static let version: Int64 = 1

    let path: String
    private let connection: SQLiteConnection

    /// Opens (or creates) the journal and takes it for this process.
    ///
    /// Fails with SQLITE_BUSY at once when another process holds it, and with a `DatabaseError` naming the file
    /// when it is not a journal this program can read.
    init(path: String) throws(DatabaseError) {
        self.path = path
        connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 0, exclusive: true)
        try connection.checkIntegrity(fullCheckBytes: RoomDatabase.fullIntegrityCheckBytes)
        let statement = try connection.prepare("PRAGMA user_version")
        let found = try statement.step() ? statement.int64(at: 0) : 0
        statement.reset()
        if found > Self.version {
            throw DatabaseError(
                path: path, code: nil,
                message: "journal version \(found) is newer than this program's \(Self.version); "
                    + "use a newer clubroom or another data folder",
                sql: nil)
        }
        if found < Self.version {
            try connection.transaction { () throws(DatabaseError) in
                try connection.execute(
                    "CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY, changes TEXT NOT NULL) STRICT")
                try connection.execute("PRAGMA user_version = \(Self.version)")
            }
        }
    }

    /// Limits the journal to `pages` pages of the file (SQLite's `max_page_count`), so a test can make it full.
    func limitPages(to pages: Int) throws(DatabaseError) {
        try connection.execute("PRAGMA max_page_count = \(pages)")
    }

    /// Writes to the file without changing what it holds (its version again), to learn whether the disk takes
    /// writes.
    func probeWrite() throws(DatabaseError) {
        try connection.execute("PRAGMA user_version = \(Self.version)")
    }

    /// Stores the changes of several commits, numbered from `firstSeq`, in one transaction: all or none.
    func append(_ commits: [[DatabaseChange]], firstSeq: Int64) throws(DatabaseError) {
        try connection.transaction { () throws(DatabaseError) in
            let insert = try connection.prepare("INSERT INTO entries (seq, changes) VALUES (?1, ?2)")
            for (offset, changes) in commits.enumerated() {
                try insert.bind(.integer(firstSeq + Int64(offset)), .text(DatabaseChange.encode(changes))).run()
            }
        }
    }

    /// The commits after `seq`, in order. An entry that cannot be read is an error naming it.
    func entries(after seq: Int64) throws(DatabaseError) -> [(seq: Int64, changes: [DatabaseChange])] {
        let statement = try connection.prepare("SELECT seq, changes FROM entries WHERE seq > ?1 ORDER BY seq")
        try statement.bind(.integer(seq))
        return try statement.rows { row throws(DatabaseError) in
            let number = row.int64(at: 0)
            do throws(JournalEntryError) {
                return (seq: number, changes: try DatabaseChange.decode(row.text(at: 1), seq: number))
            } catch {
                throw DatabaseError(path: path, code: nil, message: error.description, sql: nil)
            }
        }
    }

    /// The highest sequence number stored (0 when empty).
    func lastSeq() throws(DatabaseError) -> Int64 {
        let statement = try connection.prepare("SELECT coalesce(max(seq), 0) FROM entries")
        defer { statement.reset() }
        return try statement.step() ? statement.int64(at: 0) : 0
    }

    /// Forgets the commits up to and including `seq` (the database holds them now).
    func trim(through seq: Int64) throws(DatabaseError) {
        try connection.prepare("DELETE FROM entries WHERE seq <= ?1").bind(.integer(seq)).run()
    }

    /// Closes the file, releasing it for another process.
    func close() {
        connection.close()
    }
}
