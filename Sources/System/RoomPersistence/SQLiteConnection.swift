import CSQLite
import Glibc
import Synchronization

/// A failure from the database: which file, what SQLite said, and the statement that was running.
public struct DatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database file.
    public var path: String
    /// SQLite's extended result code, or `nil` for a problem found by this program (such as a newer schema).
    public var code: Int32?
    /// SQLite's message, or this program's.
    public var message: String
    /// The statement that failed, when one was running.
    public var sql: String?

    public var description: String {
        var text = "database \(path): \(message)"
        if let code {
            text += " (SQLite code \(code))"
        }
        if let sql {
            text += " while running: \(sql)"
        }
        return text
    }
}

/// A value bound to a statement parameter.
public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null
}

/// One SQLite connection: WAL journal, a busy timeout, and prepared statements kept for reuse.
///
/// Not thread-safe on its own: one thread or serial queue uses it at a time (`RoomDatabase` guards it with a lock).
public final class SQLiteConnection {
    /// The database file.
    public let path: String
    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    /// Stops this connection's running statement; the one part of it that other threads may use.
    public let interrupter: SQLiteInterrupter

    /// Milliseconds a statement waits for another connection's lock before failing with SQLITE_BUSY, by default.
    public static let busyTimeoutMilliseconds: Int32 = 5000

    /// The most memory, in KiB, each connection's page cache keeps (SQLite's default is 2,000). A server writes
    /// at the end of its tables and reads little back, and the system's file cache holds the file anyway; with
    /// SQLite's default every page a long-running server ever wrote stayed in each of its three connections'
    /// caches until they reached 2 MB, so its memory kept growing long after it had warmed up.
    public static let pageCacheKibibytes = 256

    /// The most a shared database's `-wal` file keeps of its size once checkpointed (it stays when the database
    /// closes).
    public static let keptWALBytes = 1024 * 1024

    /// Opens (creating when missing) the database at `path`, switches it to WAL and sets the busy timeout.
    ///
    /// With `exclusive`, the connection takes the file for itself at once and keeps it until closed: no other
    /// connection, in this process or another, can read or write it meanwhile (SQLite's `EXCLUSIVE` locking mode,
    /// where WAL needs no shared-memory file). A file another connection holds that way fails with SQLITE_BUSY.
    ///
    /// A missing file is created readable and writable by its owner only (0600); SQLite gives its `-wal` and
    /// `-shm` files the same mode. A file that is not an SQLite database fails here, with SQLite's message and the
    /// path; so does one that cannot be opened (with the system's reason) or can only be read.
    public init(
        path: String, busyTimeoutMilliseconds: Int32 = SQLiteConnection.busyTimeoutMilliseconds,
        exclusive: Bool = false
    ) throws(DatabaseError) {
        self.path = path
        var opened: OpaquePointer? = nil
        Self.createPrivately(path)
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            var message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            if let opened, sqlite3_system_errno(opened) != 0 {
                message += ": " + String(cString: strerror(sqlite3_system_errno(opened)))
            }
            sqlite3_close_v2(opened)
            throw DatabaseError(path: path, code: status, message: message, sql: nil)
        }
        if sqlite3_db_readonly(opened, "main") == 1 {
            sqlite3_close_v2(opened)
            throw DatabaseError(
                path: path, code: SQLITE_READONLY, message: "the file can be read but not written", sql: nil)
        }
        handle = opened
        interrupter = SQLiteInterrupter(opened)
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_busy_timeout(opened, busyTimeoutMilliseconds)
        do throws(DatabaseError) {
            if exclusive {
                // Before the first access, so that WAL runs without shared memory; the write lock taken by
                // BEGIN EXCLUSIVE below is then held for the connection's life.
                try execute("PRAGMA locking_mode = EXCLUSIVE")
            } else {
                // The `-wal` and `-shm` files stay when the last connection closes (the WAL checkpointed and cut to
                // nothing; while running, cut to 1 MiB after each checkpoint), so that the next start on a disk that
                // has filled up meanwhile can still open the file: making a new `-shm` needs room, reading with one
                // already there needs none.
                var persist: Int32 = 1
                sqlite3_file_control(opened, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
                try execute("PRAGMA journal_size_limit = \(Self.keptWALBytes)")
            }
            let mode = try prepare("PRAGMA journal_mode = WAL")
            guard try mode.step(), mode.text(at: 0).lowercased() == "wal" else {
                throw DatabaseError(
                    path: path, code: nil, message: "could not switch to WAL journal mode",
                    sql: "PRAGMA journal_mode = WAL")
            }
            mode.reset()
            // NORMAL is durable across application crashes in WAL mode; only a power loss can drop the last commits.
            try execute("PRAGMA synchronous = NORMAL")
            try execute("PRAGMA cache_size = -\(Self.pageCacheKibibytes)")
            if exclusive {
                try execute("BEGIN EXCLUSIVE")
                try execute("COMMIT")
            }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Creates `path` empty with mode 0600 when it does not exist (an empty file is an empty database), so the
    /// database and the files SQLite makes beside it are private to their owner whatever the umask.
    private static func createPrivately(_ path: String) {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    /// Runs SQLite's own check of the file: the full `integrity_check` when the file is at most
    /// `fullCheckBytes`, else `quick_check` (which skips comparing indexes with their tables, and is several times
    /// faster). Throws a `DatabaseError` with SQLITE_CORRUPT listing the first problems when the file is damaged.
    public func checkIntegrity(fullCheckBytes: Int64) throws(DatabaseError) {
        let pages = try prepare("PRAGMA page_count")
        let pageCount = try pages.step() ? pages.int64(at: 0) : 0
        pages.reset()
        let size = try prepare("PRAGMA page_size")
        let pageSize = try size.step() ? size.int64(at: 0) : 0
        size.reset()
        let check = pageCount * pageSize <= fullCheckBytes ? "integrity_check" : "quick_check"
        let sql = "PRAGMA \(check)(5)"
        let statement = try prepare(sql)
        let problems = try statement.rows { row in
            row.text(at: 0).split(whereSeparator: \.isNewline).joined(separator: " ")
        }
        guard problems != ["ok"] else { return }
        throw DatabaseError(
            path: path, code: SQLITE_CORRUPT,
            message: "the file is damaged; SQLite's \(check) says: " + problems.joined(separator: "; "), sql: nil)
    }

    /// Finalizes the statements and closes the connection (releasing its locks); later calls fail with
    /// SQLITE_MISUSE. Safe to call twice.
    public func close() {
        statements.removeAll()
        interrupter.forget()
        if let handle {
            sqlite3_close_v2(handle)
        }
        handle = nil
    }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(DatabaseError) {
        guard let handle else { throw closedFailure(sql: sql) }
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else {
            throw failure(status, sql: sql)
        }
    }

    /// The bytes this connection's page cache holds now (SQLite's `SQLITE_DBSTATUS_CACHE_USED`).
    public var pageCacheBytes: Int {
        guard let handle else { return 0 }
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return Int(current)
    }

    /// A prepared statement for `sql`, reset and with its bindings cleared; prepared once and then reused.
    ///
    /// Because the same object comes back for the same SQL, finish with a statement before preparing its SQL again.
    public func prepare(_ sql: String) throws(DatabaseError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        guard let handle else { throw closedFailure(sql: sql) }
        var prepared: OpaquePointer? = nil
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard status == SQLITE_OK, let prepared else {
            throw failure(status, sql: sql)
        }
        let statement = SQLiteStatement(connection: self, handle: prepared, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs `body` inside `BEGIN` … `COMMIT`: its reads see one consistent state of the file (WAL readers never
    /// wait for a writer).
    public func readTransaction<Result>(_ body: () throws(DatabaseError) -> Result) throws(DatabaseError) -> Result {
        try inTransaction(begin: "BEGIN", body)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back if it throws.
    public func transaction<Result>(_ body: () throws(DatabaseError) -> Result) throws(DatabaseError) -> Result {
        try inTransaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` between `begin` and `COMMIT`, rolling back if it throws.
    private func inTransaction<Result>(
        begin: String, _ body: () throws(DatabaseError) -> Result
    ) throws(DatabaseError) -> Result {
        try execute(begin)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The row id of the last successful insert on this connection.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the last statement.
    public var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    func failure(_ status: Int32, sql: String?) -> DatabaseError {
        guard let handle else { return closedFailure(sql: sql) }
        return DatabaseError(path: path, code: status, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    private func closedFailure(sql: String?) -> DatabaseError {
        DatabaseError(path: path, code: SQLITE_MISUSE, message: "the connection is closed", sql: sql)
    }
}

/// Makes a connection's running statement stop as soon as it can, failing with SQLITE_INTERRUPT (including one
/// waiting for another connection's lock), from any thread; does nothing once the connection is closed.
public final class SQLiteInterrupter: @unchecked Sendable {
    // Safe to share: the handle is only passed to sqlite3_interrupt, which SQLite allows from any thread, and the
    // lock keeps that from racing with the connection's close.
    // The handle's address, 0 once the connection closed.
    private let state: Mutex<Int>

    init(_ handle: OpaquePointer) {
        state = Mutex(Int(bitPattern: handle))
    }

    /// Interrupts the statement running now, if any.
    public func interrupt() {
        state.withLock { address in
            if let handle = OpaquePointer(bitPattern: address) { sqlite3_interrupt(handle) }
        }
    }

    func forget() {
        state.withLock { $0 = 0 }
    }
}

/// A prepared statement: bind parameters, step through rows, read columns.
public final class SQLiteStatement {
    private unowned let connection: SQLiteConnection
    private let handle: OpaquePointer
    /// The statement's SQL, for error messages.
    public let sql: String

    init(connection: SQLiteConnection, handle: OpaquePointer, sql: String) {
        self.connection = connection
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1, 2, … in order.
    @discardableResult
    public func bind(_ values: SQLiteValue...) throws(DatabaseError) -> SQLiteStatement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let number):
                status = sqlite3_bind_int64(handle, index, number)
            case .text(let text):
                status = sqlite3_bind_text(handle, index, text, -1, clubroom_sqlite_transient())
            case .null:
                status = sqlite3_bind_null(handle, index)
            }
            guard status == SQLITE_OK else {
                throw connection.failure(status, sql: sql)
            }
        }
        return self
    }

    /// Advances to the next row: `true` when a row is available, `false` when the statement is done.
    public func step() throws(DatabaseError) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            return false
        default:
            let error = connection.failure(status, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows, then resets it.
    public func run() throws(DatabaseError) {
        while try step() {}
        reset()
    }

    /// Every row the statement yields, each made by `row` from the current row's columns; then resets the
    /// statement (also when a step or `row` fails).
    public func rows<Row>(_ row: (SQLiteStatement) throws(DatabaseError) -> Row) throws(DatabaseError) -> [Row] {
        defer { reset() }
        var rows: [Row] = []
        while try step() { rows.append(try row(self)) }
        return rows
    }

    /// Resets the statement and clears its bindings so it can run again.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Column `index` of the current row as an integer (0 for NULL).
    public func int64(at index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` as an integer, or `nil` for NULL.
    public func optionalInt64(at index: Int32) -> Int64? {
        sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
    }

    /// Column `index` as text ("" for NULL).
    public func text(at index: Int32) -> String {
        optionalText(at: index) ?? ""
    }

    /// Column `index` as text, or `nil` for NULL.
    public func optionalText(at index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, index) else {
            return nil
        }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
