import CSQLite
import Dispatch
import Glibc
import Synchronization

/// What became of a commit.
public enum CommitStatus: Sendable, Equatable {
    /// The change journal holds it: it survives a crash of the process from now on.
    case committed
    /// The journal could not take it (a full disk, a read-only folder, …). The store keeps it in memory and
    /// writes it, in order, once the journal takes writes again, but it is lost if the server stops first.
    case notSaved(StoreProblem)
}

/// Why the store could not write, in words for the person whose change it was and for the operator.
public struct StoreProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case diskFull, readOnly, locked, diskError, damaged, stopping, other
    }

    public var kind: Kind
    /// What is wrong, for a sentence: "the server's disk is full".
    public var summary: String
    /// The failure itself, for the log.
    public var detail: String

    public var description: String { "\(summary) (\(detail))" }

    /// The problem behind a database failure.
    public init(_ error: DatabaseError) {
        detail = error.description
        switch (error.code ?? 0) & 0xFF {
        case SQLITE_FULL: (kind, summary) = (.diskFull, "the server's disk is full")
        case SQLITE_READONLY: (kind, summary) = (.readOnly, "the server's data folder cannot be written")
        case SQLITE_BUSY, SQLITE_LOCKED:
            (kind, summary) = (.locked, "another program holds the server's database locked")
        case SQLITE_IOERR, SQLITE_CANTOPEN: (kind, summary) = (.diskError, "the server's disk failed")
        case SQLITE_CORRUPT, SQLITE_NOTADB: (kind, summary) = (.damaged, "the server's database is damaged")
        case SQLITE_INTERRUPT: (kind, summary) = (.stopping, "the server is stopping")
        default: (kind, summary) = (.other, "the server's database failed")
        }
    }

    /// The store is closing and takes no more commits.
    static let stopping = StoreProblem(
        kind: .stopping, summary: "the server is stopping", detail: "the store is closed")

    init(kind: Kind, summary: String, detail: String) {
        self.kind = kind
        self.summary = summary
        self.detail = detail
    }
}

/// Something the operator should know about the store, reported once per episode (the server logs each as one
/// line).
public enum StoreEvent: Sendable, Equatable {
    /// The journal refuses writes; commits are held in memory until it takes them again.
    case commitsFailing(StoreProblem)
    /// The journal takes writes again; `saved` held commits were written.
    case commitsRecovered(saved: Int)
    /// A read-only start (`SavedRooms.startProblem`) is over, the data folder taking writes again: what the start
    /// could not write then is written now (`entries` journal entries applied to the database, `releasedRoles`
    /// roles released as of the start).
    case startFinished(entries: Int, releasedRoles: Int)
    /// More commits are held than the store keeps in memory; these were dropped.
    case heldCommitsDropped(Int)
    /// The database refuses the journal's changes (locked, full, …); they wait in the journal.
    case applyFailing(StoreProblem)
    /// The database took the waiting changes.
    case applyRecovered
    /// The database refused one journal entry for what it holds (not for a passing condition); it was skipped.
    case entryRejected(seq: Int64, problem: String)
    /// The store closed: `unapplied` changes stay in the journal for the next start, `unsaved` held commits
    /// were never written.
    case closed(unapplied: Int, unsaved: Int)
}

/// The server's store: changes are committed to the change journal (the commit point: once there, a change is
/// durable and may be acknowledged), then applied to the database, in order, on a thread of their own, and
/// trimmed from the journal.
///
/// So a commit never waits for the database: another program holding the database's write lock (a backup, the
/// `sqlite3` shell) only delays the apply, and commits go on. At start, whatever the journal holds that the
/// database lacks is applied first (after a crash, say), and the roles still held in rooms are released as of
/// that moment.
///
/// Two serial queues do the work, so callers on the network loop never block: `commit` only hands over.
public final class SavedRooms: @unchecked Sendable {
    // Safe to share: `shared` is behind a mutex; `held`, `nextSeq`, `commitsFailing`, `retryScheduled`,
    // `droppedReported` and the journal are touched only on `commitQueue`; `applyFailing` and `applyDelay`
    // only on `applyQueue`.

    /// The data folder.
    public let directory: String
    public let database: RoomDatabase
    /// What the start found: journal entries applied to the database, and roles released.
    public let recovered: (entries: Int, releasedRoles: Int)

    /// Why the start could not write (a full disk): the store then serves read-only until the journal and the
    /// database take writes again. It holds the commits in memory meanwhile, and tries every second to finish the
    /// start (apply what the journal holds, release the roles held in rooms as of the start) and then to write
    /// them. `nil` when the start wrote what it had to.
    public let startProblem: StoreProblem?

    /// The journal's file name inside the data folder.
    public static let journalFileName = ChangeJournal.fileName
    /// How many refused commits are kept in memory, waiting for the journal.
    public static let maxHeldCommits = 100_000
    /// Journal entries applied to the database in one transaction, at most.
    static let applyBatch = 1000

    private let journal: ChangeJournal
    private let report: @Sendable (StoreEvent) -> Void
    private let commitQueue = DispatchQueue(label: "clubroom.store.commit")
    private let applyQueue = DispatchQueue(label: "clubroom.store.apply")

    private struct Commit {
        var changes: [DatabaseChange]
        var completion: @Sendable (CommitStatus) -> Void
    }

    private struct Shared {
        var incoming: [Commit] = []
        var drainScheduled = false
        var unapplied: [(seq: Int64, changes: [DatabaseChange])] = []
        var applyScheduled = false
        var applying = false
        var closing = false
        var closed = false
        /// The start's time, while the start's own writes wait for the disk (see `startProblem`).
        var unfinishedStart: Int64?
    }

    private let shared = Mutex(Shared())
    private var held: [[DatabaseChange]] = []
    private var nextSeq: Int64
    private var commitsFailing = false
    private var retryScheduled = false
    private var droppedReported = false
    /// While a read-only start (`startProblem`) has not written yet: what its own writes did, once done.
    private var readOnlyStart: (entries: Int, releasedRoles: Int)?
    private var applyFailing = false
    private var applyDelay = 0.05

    /// Opens the journal (taking it for this process) and the database in `directory`, applies what the journal
    /// holds that the database lacks, and releases the roles still held in rooms as of `now`.
    ///
    /// With `diskFull` (the data folder took not one more byte), the store starts read-only even when the start
    /// itself had nothing to write, and tries every second whether the journal takes writes again.
    ///
    /// Fails with the `DatabaseError` of the file at fault; a journal another process holds fails with
    /// SQLITE_BUSY (see `DatabaseError.isBusy`).
    public init(
        directory: String, busyTimeoutMilliseconds: Int32 = SQLiteConnection.busyTimeoutMilliseconds, now: Int64,
        chatRetention: Int = RoomDatabase.defaultChatRetention, diskFull: Bool = false,
        report: @escaping @Sendable (StoreEvent) -> Void
    ) throws(DatabaseError) {
        self.directory = directory
        self.report = report
        let journal = try ChangeJournal(path: directory + "/" + ChangeJournal.fileName)
        let database: RoomDatabase
        do {
            database = try RoomDatabase(
                path: directory + "/" + RoomDatabase.fileName, chatRetention: chatRetention,
                busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        } catch {
            journal.close()
            throw error
        }
        var problem: StoreProblem?
        do throws(DatabaseError) {
            do throws(DatabaseError) {
                recovered = try Self.finishStart(journal: journal, database: database, at: now)
            } catch {
                // A disk that has no room for the start's writes does not stop the start: the server serves,
                // read-only, and finishes the start once there is room.
                guard Self.isPassing(error) else { throw error }
                problem = StoreProblem(error)
                recovered = (0, 0)
            }
            nextSeq = max(try database.appliedJournalSeq(), try journal.lastSeq()) + 1
        } catch {
            database.close()
            journal.close()
            throw error
        }
        self.journal = journal
        self.database = database
        if problem != nil {
            shared.withLock { $0.unfinishedStart = now }
        } else if diskFull {
            problem = StoreProblem(
                kind: .diskFull, summary: "the server's disk is full",
                detail: "\(directory) takes no more bytes")
        }
        startProblem = problem
        if problem != nil {
            commitsFailing = true
            readOnlyStart = (0, 0)
            commitQueue.async { self.scheduleRetry() }
        }
    }

    /// What a start writes: the journal's entries the database lacks are applied, the roles still held in rooms
    /// are released as of `now`, and the journal is trimmed. Safe to repeat after a failure part of the way.
    private static func finishStart(
        journal: ChangeJournal, database: RoomDatabase, at now: Int64
    ) throws(DatabaseError) -> (entries: Int, releasedRoles: Int) {
        let applied = try database.appliedJournalSeq()
        let pending = try journal.entries(after: applied)
        var start = 0
        while start < pending.count {
            let chunk = pending[start..<min(start + applyBatch, pending.count)]
            try database.apply(chunk.flatMap(\.changes), throughJournalSeq: chunk.last!.seq)
            start += chunk.count
        }
        let released = try database.releaseHeldRoles(at: now)
        try journal.trim(through: max(applied, pending.last?.seq ?? 0))
        return (pending.count, released)
    }

    /// The time of a start whose own writes still wait for the disk (`startProblem`): the roles held in rooms
    /// count as released then. `nil` once the start is finished.
    public var unfinishedStart: Int64? { shared.withLock { $0.unfinishedStart } }

    /// A failure of the disk rather than of the files: it passes when the disk has room (or works) again.
    static func isPassing(_ error: DatabaseError) -> Bool {
        switch (error.code ?? 0) & 0xFF {
        case SQLITE_FULL, SQLITE_IOERR: true
        default: false
        }
    }

    /// Commits `changes` (one outcome's, in order) after everything committed before, and calls `completion`
    /// on the store's commit thread once the journal holds them, or once it has refused them. Completions come in
    /// the order of the commits. Never blocks.
    public func commit(_ changes: [DatabaseChange], completion: @escaping @Sendable (CommitStatus) -> Void) {
        let (accepted, schedule) = shared.withLock { state -> (Bool, Bool) in
            guard !state.closing else { return (false, false) }
            state.incoming.append(Commit(changes: changes, completion: completion))
            defer { state.drainScheduled = true }
            return (true, !state.drainScheduled)
        }
        guard accepted else {
            completion(.notSaved(.stopping))
            return
        }
        if schedule { commitQueue.async { self.drainCommits() } }
    }

    /// Waits until every commit made so far is in the journal (or held) and everything journaled is applied to
    /// the database, or `timeout` has passed; returns whether the database is up to date.
    public func flush(timeout: Duration = .seconds(10)) -> Bool {
        commitQueue.sync {}
        let deadline = ContinuousClock.now + timeout
        while true {
            let idle = shared.withLock { $0.incoming.isEmpty && $0.unapplied.isEmpty && !$0.applying }
            if idle { return true }
            if ContinuousClock.now >= deadline { return false }
            usleep(2000)
        }
    }

    /// Stops taking commits, writes what it can (waiting up to `timeout` for the database), and closes both
    /// files. What the database could not take stays in the journal and is applied at the next start.
    public func close(timeout: Duration = .seconds(10)) {
        let first = shared.withLock { state -> Bool in
            defer { state.closing = true }
            return !state.closing
        }
        guard first else { return }
        if !flush(timeout: timeout) {
            // The apply is stuck (another program's lock): stop it; its changes stay in the journal.
            shared.withLock { $0.closed = true }
            database.interruptWrite()
        }
        shared.withLock { $0.closed = true }
        applyQueue.sync {}
        let unsaved = commitQueue.sync { () -> Int in
            write([])
            return held.count
        }
        let unapplied = shared.withLock { $0.unapplied.count }
        if unapplied > 0 || unsaved > 0 { report(.closed(unapplied: unapplied, unsaved: unsaved)) }
        commitQueue.sync { journal.close() }
        database.close()
    }

    /// Limits the journal's size in pages, so that a test can make it refuse writes as a full disk would.
    func limitJournal(toPages pages: Int) throws(DatabaseError) {
        let result = commitQueue.sync { () -> Result<Void, DatabaseError> in
            do throws(DatabaseError) {
                return .success(try journal.limitPages(to: pages))
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    // MARK: Commit queue

    private func drainCommits() {
        let batch = shared.withLock { state -> [Commit] in
            defer {
                state.incoming = []
                state.drainScheduled = false
            }
            return state.incoming
        }
        write(batch)
    }

    /// Writes the held commits and then `new` to the journal in one transaction, or holds `new` too.
    private func write(_ new: [Commit]) {
        let commits = held + new.map(\.changes)
        let startAt = shared.withLock { $0.unfinishedStart }
        guard !commits.isEmpty || startAt != nil || commitsFailing else { return }
        do {
            if let startAt {
                readOnlyStart = try Self.finishStart(journal: journal, database: database, at: startAt)
                shared.withLock { $0.unfinishedStart = nil }
            }
            if !commits.isEmpty {
                try journal.append(commits, firstSeq: nextSeq)
            } else if commitsFailing {
                // Nothing waits (a start on a full disk that had nothing to write): whether the disk takes writes
                // again is learned by writing.
                try journal.probeWrite()
            }
        } catch {
            let problem = StoreProblem(error)
            var dropped = 0
            for commit in new {
                if held.count < Self.maxHeldCommits {
                    held.append(commit.changes)
                } else {
                    dropped += 1
                }
            }
            if !commitsFailing {
                commitsFailing = true
                report(.commitsFailing(problem))
            }
            if dropped > 0, !droppedReported {
                droppedReported = true
                report(.heldCommitsDropped(dropped))
            }
            for commit in new { commit.completion(.notSaved(problem)) }
            scheduleRetry()
            return
        }
        let first = nextSeq
        nextSeq += Int64(commits.count)
        let saved = held.count
        held = []
        if let done = readOnlyStart {
            readOnlyStart = nil
            report(.startFinished(entries: done.entries, releasedRoles: done.releasedRoles))
        }
        if commitsFailing {
            commitsFailing = false
            droppedReported = false
            report(.commitsRecovered(saved: saved))
        }
        for commit in new { commit.completion(.committed) }
        enqueueApply(commits.enumerated().map { (first + Int64($0.offset), $0.element) })
    }

    /// Tries the held commits again in a second, and every second after while the journal refuses them.
    private func scheduleRetry() {
        guard !retryScheduled else { return }
        retryScheduled = true
        commitQueue.asyncAfter(deadline: .now() + 1) { [self] in
            retryScheduled = false
            guard !shared.withLock({ $0.closed }) else { return }
            write([])
        }
    }

    private func trimJournal(through seq: Int64) {
        commitQueue.async { [self] in
            guard !shared.withLock({ $0.closed }) else { return }
            // A trim that fails (a full disk) is left for the next one, which covers it.
            try? journal.trim(through: seq)
        }
    }

    // MARK: Apply queue

    private func enqueueApply(_ entries: [(seq: Int64, changes: [DatabaseChange])]) {
        let schedule = shared.withLock { state -> Bool in
            state.unapplied.append(contentsOf: entries)
            defer { state.applyScheduled = true }
            return !state.applyScheduled
        }
        if schedule { applyQueue.async { self.drainApplies() } }
    }

    private func drainApplies() {
        while true {
            let batch = shared.withLock { state -> [(seq: Int64, changes: [DatabaseChange])]? in
                guard !state.closed, !state.unapplied.isEmpty else {
                    state.applyScheduled = false
                    return nil
                }
                state.applying = true
                return Array(state.unapplied.prefix(Self.applyBatch))
            }
            guard let batch else { return }
            let (applied, retry) = apply(batch)
            shared.withLock { state in
                state.unapplied.removeFirst(applied)
                state.applying = false
            }
            if applied > 0 { trimJournal(through: batch[applied - 1].seq) }
            if retry {
                applyQueue.asyncAfter(deadline: .now() + applyDelay) { self.drainApplies() }
                applyDelay = min(applyDelay * 2, 2)
                return
            }
        }
    }

    /// Applies `batch` to the database; returns how many entries were applied (or skipped as refused by the
    /// database) and whether to try the rest again later.
    private func apply(_ batch: [(seq: Int64, changes: [DatabaseChange])]) -> (applied: Int, retry: Bool) {
        do {
            try database.apply(batch.flatMap(\.changes), throughJournalSeq: batch.last!.seq)
            applyWorked()
            return (batch.count, false)
        } catch {
            guard Self.isRefusal(error) else { return (0, failed(error)) }
        }
        // Something in the batch is refused for what it is: apply one entry at a time, and skip the one refused.
        for (index, entry) in batch.enumerated() {
            do {
                try database.apply(entry.changes, throughJournalSeq: entry.seq)
            } catch {
                guard Self.isRefusal(error) else { return (index, failed(error)) }
                report(.entryRejected(seq: entry.seq, problem: error.description))
                do {
                    try database.apply([], throughJournalSeq: entry.seq)
                } catch {
                    return (index, failed(error))
                }
            }
        }
        applyWorked()
        return (batch.count, false)
    }

    private func applyWorked() {
        applyDelay = 0.05
        if applyFailing {
            applyFailing = false
            report(.applyRecovered)
        }
    }

    /// Reports the first failure of an episode; returns whether to try again.
    private func failed(_ error: DatabaseError) -> Bool {
        // Interrupted by close: what is left stays in the journal, and there is nothing to report.
        guard !shared.withLock({ $0.closed }) else { return false }
        if !applyFailing {
            applyFailing = true
            report(.applyFailing(StoreProblem(error)))
        }
        return true
    }

    /// A failure caused by the change itself (a constraint, a type, a size), which no retry can fix.
    static func isRefusal(_ error: DatabaseError) -> Bool {
        switch (error.code ?? 0) & 0xFF {
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG, SQLITE_RANGE: true
        default: false
        }
    }
}

extension DatabaseError {
    /// Whether another connection held the file (SQLITE_BUSY or SQLITE_LOCKED).
    public var isBusy: Bool {
        let primary = (code ?? 0) & 0xFF
        return primary == SQLITE_BUSY || primary == SQLITE_LOCKED
    }

    /// Whether the file is damaged or is not a database at all.
    public var isDamaged: Bool {
        let primary = (code ?? 0) & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }
}
