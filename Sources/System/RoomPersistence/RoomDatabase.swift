import Synchronization

/// The server's durable state in one SQLite file: rooms and topics, the moderation audit log, the last chat
/// messages of each room, and the roles of the peers in each room and of those who just left (so a reconnect, or
/// a return after a crash, gets its role back).
///
/// Every method is synchronous and short (one small transaction, a few milliseconds on a local disk). Writes go
/// through one connection and reads through another: in WAL mode a reader never waits for a writer, so a read
/// (loading a room) is not held up by a write waiting for another program's lock. The server calls it through
/// `SavedRooms`, never from the network loop. Calls from several threads are safe: a lock serialises each
/// connection.
///
/// Times are milliseconds since the Unix epoch (`Timestamp`); identities and roles are plain strings.
public final class RoomDatabase: Sendable {
    /// The database file.
    public let path: String
    /// How many chat messages each room keeps; older ones are deleted as new ones arrive.
    public let chatRetention: Int
    private let writer: Mutex<SQLiteConnection>
    private let reader: Mutex<SQLiteConnection>
    private let writerInterrupter: SQLiteInterrupter

    /// The name of the database file inside a data folder.
    public static let fileName = "clubroom.sqlite3"

    /// Messages kept per room by default.
    public static let defaultChatRetention = 200

    /// How long a departed peer's role is kept by default before it is pruned (10 minutes, well past any
    /// reconnect window, so a window of 60 s can be checked exactly).
    public static let recentRoleRetention: Int64 = 600_000

    /// Files up to this size get SQLite's full `integrity_check` when opened; larger ones the `quick_check`.
    /// Measured here on a 125 MB file (1,000,000 audit rows, 2,000 rooms of 200 chats), on a busy machine: the
    /// full check took 20.6 s and the quick one 3.6 s; a 16 MiB file's full check takes about 2.5 s at that rate.
    public static let fullIntegrityCheckBytes: Int64 = 16 * 1024 * 1024

    /// Opens the database at `path`, checks it (see `fullIntegrityCheckBytes`), creating it and bringing its
    /// schema up to date.
    ///
    /// `busyTimeoutMilliseconds` is how long a statement waits for another program's lock before failing with
    /// SQLITE_BUSY. Fails with a `DatabaseError` naming the file when it is not a database, is damaged (SQLITE_CORRUPT),
    /// cannot be created or written, or was written by a newer version of this program.
    public init(
        path: String, chatRetention: Int = defaultChatRetention,
        busyTimeoutMilliseconds: Int32 = SQLiteConnection.busyTimeoutMilliseconds
    ) throws(DatabaseError) {
        precondition(chatRetention > 0, "a room keeps at least one chat message")
        self.path = path
        self.chatRetention = chatRetention
        let opened = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try opened.checkIntegrity(fullCheckBytes: Self.fullIntegrityCheckBytes)
        try Schema.migrate(opened)
        let reading = try SQLiteConnection(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try reading.execute("PRAGMA query_only = 1")
        writerInterrupter = opened.interrupter
        writer = Mutex(opened)
        reader = Mutex(reading)
    }

    private func withWriter<Result: Sendable>(
        _ body: (SQLiteConnection) throws(DatabaseError) -> Result
    ) throws(DatabaseError) -> Result {
        try Self.locked(writer, body)
    }

    func withReader<Result: Sendable>(
        _ body: (SQLiteConnection) throws(DatabaseError) -> Result
    ) throws(DatabaseError) -> Result {
        try Self.locked(reader, body)
    }

    /// Runs `body` on `connection` under its lock, passing its typed error on (the database's connections and
    /// the link registry's).
    static func locked<Result: Sendable>(
        _ connection: borrowing Mutex<SQLiteConnection>, _ body: (SQLiteConnection) throws(DatabaseError) -> Result
    ) throws(DatabaseError) -> Result {
        let outcome: Swift.Result<Result, DatabaseError> = connection.withLock { connection in
            do throws(DatabaseError) {
                return .success(try body(connection))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// Makes a write that is running now (typically one waiting for another program's lock) fail at once with
    /// SQLITE_INTERRUPT; for a shutdown that cannot wait. Any thread.
    public func interruptWrite() {
        writerInterrupter.interrupt()
    }

    /// Closes both connections; every later call fails. For a shutdown: the file is left consistent.
    public func close() {
        writer.withLock { $0.close() }
        reader.withLock { $0.close() }
    }

    // MARK: Applying changes

    /// Applies `changes` in order in one transaction, and records that the journal has been applied through
    /// `journalSeq`. All or nothing: on failure nothing is applied.
    public func apply(_ changes: [DatabaseChange], throughJournalSeq journalSeq: Int64) throws(DatabaseError) {
        let retention = Int64(chatRetention)
        try withWriter { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                for change in changes {
                    try Self.perform(change, on: connection, chatRetention: retention)
                }
                try connection.prepare("UPDATE journal_state SET applied_seq = ?1 WHERE id = 1 AND applied_seq < ?1")
                    .bind(.integer(journalSeq)).run()
            }
        }
    }

    /// Applies one change in its own transaction.
    public func apply(_ change: DatabaseChange) throws(DatabaseError) {
        let retention = Int64(chatRetention)
        try withWriter { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try Self.perform(change, on: connection, chatRetention: retention)
            }
        }
    }

    /// The journal sequence number this file has been brought up to (0 when none).
    public func appliedJournalSeq() throws(DatabaseError) -> Int64 {
        try withReader { connection throws(DatabaseError) in
            let statement = try connection.prepare("SELECT applied_seq FROM journal_state WHERE id = 1")
            defer { statement.reset() }
            return try statement.step() ? statement.int64(at: 0) : 0
        }
    }

    /// Marks every role still held in a room as released at `now`: the peers who were in the rooms when the
    /// server last stopped (or crashed) get the reconnect window from this moment. Returns how many there were.
    @discardableResult
    public func releaseHeldRoles(at now: Int64) throws(DatabaseError) -> Int {
        // Looked at first, so that a start with nothing to release needs no write lock.
        let held = try withReader { connection throws(DatabaseError) in
            let statement = try connection.prepare("SELECT count(*) FROM recent_roles WHERE present = 1")
            defer { statement.reset() }
            return try statement.step() ? statement.int64(at: 0) : 0
        }
        guard held > 0 else { return 0 }
        return try withWriter { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try connection.prepare("UPDATE recent_roles SET present = 0, left_at = ?1 WHERE present = 1")
                    .bind(.integer(now)).run()
                return connection.changes
            }
        }
    }

    private static func perform(
        _ change: DatabaseChange, on connection: SQLiteConnection, chatRetention: Int64
    ) throws(DatabaseError) {
        switch change {
        case .openRoom(let room, let at):
            try connection.prepare(
                "INSERT INTO rooms (id, topic, created_at, updated_at) VALUES (?1, '', ?2, ?2) "
                    + "ON CONFLICT (id) DO NOTHING"
            ).bind(.text(room), .integer(at)).run()
        case .setTopic(let room, let topic, let at):
            try connection.prepare(
                "INSERT INTO rooms (id, topic, created_at, updated_at) VALUES (?1, ?3, ?2, ?2) "
                    + "ON CONFLICT (id) DO UPDATE SET topic = ?3, updated_at = ?2"
            ).bind(.text(room), .integer(at), .text(topic)).run()
        case .endRoom(let room, let reason, let at):
            try connection.prepare(
                "INSERT INTO rooms (id, topic, ended_at, ended_reason, created_at, updated_at) "
                    + "VALUES (?1, '', ?2, ?3, ?2, ?2) "
                    + "ON CONFLICT (id) DO UPDATE SET ended_at = ?2, ended_reason = ?3, updated_at = ?2"
            ).bind(.text(room), .integer(at), .text(reason)).run()
            // Ending a room sends everyone away: nobody comes back to a role in it, nor to an invitation.
            try connection.prepare("DELETE FROM recent_roles WHERE room = ?1").bind(.text(room)).run()
            try connection.prepare("DELETE FROM invitations WHERE room = ?1").bind(.text(room)).run()
            try connection.prepare("DELETE FROM demotions WHERE room = ?1").bind(.text(room)).run()
            try connection.prepare("DELETE FROM raised_hands WHERE room = ?1").bind(.text(room)).run()
            try connection.prepare("DELETE FROM room_deadlines WHERE room = ?1").bind(.text(room)).run()
        case .reopenRoom(let room, let at):
            try connection.prepare(
                "INSERT INTO rooms (id, topic, created_at, updated_at) VALUES (?1, '', ?2, ?2) "
                    + "ON CONFLICT (id) DO UPDATE SET ended_at = NULL, ended_reason = NULL, updated_at = ?2"
            ).bind(.text(room), .integer(at)).run()
        case .appendChat(let room, let at, let fromIdentity, let fromName, let audience, let text):
            let (kind, value): (String, SQLiteValue) =
                switch audience {
                case .everyone: ("everyone", .null)
                case .peer(let identity): ("peer", .text(identity))
                case .role(let role): ("role", .text(role))
                }
            try connection.prepare(
                "INSERT INTO chat_messages (room, at, from_identity, from_name, audience_kind, audience_value, "
                    + "text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            ).bind(.text(room), .integer(at), .text(fromIdentity), .text(fromName), .text(kind), value, .text(text))
                .run()
            try connection.prepare(
                "DELETE FROM chat_messages WHERE room = ?1 AND id <= "
                    + "(SELECT id FROM chat_messages WHERE room = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)"
            ).bind(.text(room), .integer(chatRetention)).run()
        case .appendAudit(let room, let at, let actor, let action, let target, let detail):
            try connection.prepare(
                "INSERT INTO audit_log (room, at, actor, action, target, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            ).bind(
                .text(room), .integer(at), .text(actor), .text(action), target.map { .text($0) } ?? .null,
                detail.map { .text($0) } ?? .null
            ).run()
        case .holdRole(let room, let identity, let role, let at):
            try connection.prepare(
                "INSERT INTO recent_roles (room, identity, role, left_at, present) VALUES (?1, ?2, ?3, ?4, 1) "
                    + "ON CONFLICT (room, identity) DO UPDATE SET role = ?3, left_at = ?4, present = 1"
            ).bind(.text(room), .text(identity), .text(role), .integer(at)).run()
        case .releaseRole(let room, let identity, let role, let at):
            try connection.prepare(
                "INSERT INTO recent_roles (room, identity, role, left_at, present) VALUES (?1, ?2, ?3, ?4, 0) "
                    + "ON CONFLICT (room, identity) DO UPDATE SET role = ?3, left_at = ?4, present = 0"
            ).bind(.text(room), .text(identity), .text(role), .integer(at)).run()
            try connection.prepare("DELETE FROM recent_roles WHERE present = 0 AND left_at < ?1")
                .bind(.integer(at.subtractingClamped(Self.recentRoleRetention))).run()
            // A hand is kept only with its owner's place.
            try connection.prepare(
                "DELETE FROM raised_hands WHERE NOT EXISTS (SELECT 1 FROM recent_roles r "
                    + "WHERE r.room = raised_hands.room AND r.identity = raised_hands.identity)"
            ).run()
        case .forgetRole(let room, let identity):
            try connection.prepare("DELETE FROM recent_roles WHERE room = ?1 AND identity = ?2")
                .bind(.text(room), .text(identity)).run()
        case .invite(let room, let invitee, let inviter, let at):
            try connection.prepare(
                "INSERT INTO invitations (room, invitee, inviter, at) VALUES (?1, ?2, ?3, ?4) "
                    + "ON CONFLICT (room, invitee) DO UPDATE SET inviter = ?3, at = ?4"
            ).bind(.text(room), .text(invitee), .text(inviter), .integer(at)).run()
        case .endInvitation(let room, let invitee):
            try connection.prepare("DELETE FROM invitations WHERE room = ?1 AND invitee = ?2")
                .bind(.text(room), .text(invitee)).run()
        case .setHand(let room, let identity, let raisedAt?):
            try connection.prepare(
                "INSERT INTO raised_hands (room, identity, raised_at) VALUES (?1, ?2, ?3) "
                    + "ON CONFLICT (room, identity) DO UPDATE SET raised_at = ?3"
            ).bind(.text(room), .text(identity), .integer(raisedAt)).run()
        case .setHand(let room, let identity, nil):
            try connection.prepare("DELETE FROM raised_hands WHERE room = ?1 AND identity = ?2")
                .bind(.text(room), .text(identity)).run()
        case .setLive(let room, let since?):
            try connection.prepare(
                "INSERT INTO live_rooms (room, since) VALUES (?1, ?2) ON CONFLICT (room) DO UPDATE SET since = ?2"
            ).bind(.text(room), .integer(since)).run()
        case .setLive(let room, nil):
            try connection.prepare("DELETE FROM live_rooms WHERE room = ?1").bind(.text(room)).run()
        case .setDeadline(let room, let deadline):
            try setDeadline(room, deadline, on: connection)
        case .setHandsAllowed(let room, true, _):
            try connection.prepare("DELETE FROM hands_off_rooms WHERE room = ?1").bind(.text(room)).run()
        case .setHandsAllowed(let room, false, let at):
            try connection.prepare(
                "INSERT INTO hands_off_rooms (room, off_at) VALUES (?1, ?2) ON CONFLICT (room) DO NOTHING"
            ).bind(.text(room), .integer(at)).run()
        case .setListed(let room, true, _):
            try connection.prepare("DELETE FROM unlisted_rooms WHERE room = ?1").bind(.text(room)).run()
        case .setListed(let room, false, let at):
            try connection.prepare(
                "INSERT INTO unlisted_rooms (room, unlisted_at) VALUES (?1, ?2) ON CONFLICT (room) DO NOTHING"
            ).bind(.text(room), .integer(at)).run()
        case .demote(let room, let identity, let role, let at):
            try connection.prepare(
                "INSERT INTO demotions (room, identity, role, at) VALUES (?1, ?2, ?3, ?4) "
                    + "ON CONFLICT (room, identity) DO UPDATE SET role = ?3, at = ?4"
            ).bind(.text(room), .text(identity), .text(role), .integer(at)).run()
        case .endDemotion(let room, let identity):
            try connection.prepare("DELETE FROM demotions WHERE room = ?1 AND identity = ?2")
                .bind(.text(room), .text(identity)).run()
        }
    }

    // MARK: Rooms

    /// Makes sure the room exists, creating it open and without a topic; returns it as stored (possibly ended).
    @discardableResult
    public func openRoom(_ room: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try applyReturningRoom(.openRoom(room: room, at: now))
    }

    /// The stored room, or `nil` if it was never opened.
    public func room(_ room: String) throws(DatabaseError) -> RoomRecord? {
        try withReader { connection throws(DatabaseError) in try Self.room(room, in: connection) }
    }

    /// Every stored room, by name.
    public func rooms() throws(DatabaseError) -> [RoomRecord] {
        try withReader { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT id, topic, ended_at, ended_reason, created_at, updated_at FROM rooms ORDER BY id")
            return try statement.rows(Self.roomRecord)
        }
    }

    /// Sets the topic (creating the room if needed) and returns the room.
    @discardableResult
    public func setTopic(_ room: String, topic: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try applyReturningRoom(.setTopic(room: room, topic: topic, at: now))
    }

    /// Marks the room ended with `reason`; it stays ended, across restarts, until `reopenRoom`. The roles held in
    /// it are forgotten.
    @discardableResult
    public func endRoom(_ room: String, reason: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try applyReturningRoom(.endRoom(room: room, reason: reason, at: now))
    }

    /// Opens an ended room again (creating it if needed); its topic, audit log and chat are kept.
    @discardableResult
    public func reopenRoom(_ room: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try applyReturningRoom(.reopenRoom(room: room, at: now))
    }

    /// Everything a server needs to bring a room back, read in one consistent look: the room (`nil` when it was
    /// never opened), its latest `chatLimit` messages, and the roles of the peers who left it at or after
    /// `rolesSince`.
    ///
    /// With `heldRolesReleasedAt`, the roles still held (a start that could not release them yet: a full disk)
    /// are read as released at that time.
    public func load(
        room: String, chatLimit: Int = defaultChatRetention, rolesSince: Int64, heldRolesReleasedAt: Int64? = nil
    ) throws(DatabaseError) -> StoredRoom {
        try withReader { connection throws(DatabaseError) in
            try connection.readTransaction { () throws(DatabaseError) in
                StoredRoom(
                    record: try Self.room(room, in: connection),
                    chat: try Self.recentChat(room: room, limit: chatLimit, in: connection),
                    roles: try Self.releasedRoles(
                        room: room, since: rolesSince, heldReleasedAt: heldRolesReleasedAt, in: connection),
                    invitations: try Self.invitations(room: room, in: connection),
                    listed: try Self.isListed(room, in: connection),
                    handsAllowed: try Self.handsAllowed(room, in: connection),
                    demotions: try Self.demotions(room: room, in: connection),
                    hands: try Self.raisedHands(room: room, in: connection),
                    liveSince: try Self.liveSince(room, in: connection),
                    deadline: try Self.deadline(room, in: connection))
            }
        }
    }

    private func applyReturningRoom(_ change: DatabaseChange) throws(DatabaseError) -> RoomRecord {
        let retention = Int64(chatRetention)
        return try withWriter { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try Self.perform(change, on: connection, chatRetention: retention)
                return try Self.room(change.room, in: connection)!
            }
        }
    }

    private static func room(_ room: String, in connection: SQLiteConnection) throws(DatabaseError) -> RoomRecord? {
        let statement = try connection.prepare(
            "SELECT id, topic, ended_at, ended_reason, created_at, updated_at FROM rooms WHERE id = ?1")
        try statement.bind(.text(room))
        defer { statement.reset() }
        return try statement.step() ? roomRecord(statement) : nil
    }

    private static func roomRecord(_ statement: SQLiteStatement) -> RoomRecord {
        RoomRecord(
            id: statement.text(at: 0), topic: statement.text(at: 1), endedAt: statement.optionalInt64(at: 2),
            endedReason: statement.optionalText(at: 3), createdAt: statement.int64(at: 4),
            updatedAt: statement.int64(at: 5))
    }

    // MARK: Audit log

    /// Appends one moderation action to the audit log and returns it with its id.
    @discardableResult
    public func appendAudit(
        room: String, at now: Int64, actor: String, action: String, target: String? = nil, detail: String? = nil
    ) throws(DatabaseError) -> AuditRecord {
        let retention = Int64(chatRetention)
        return try withWriter { connection throws(DatabaseError) in
            try Self.perform(
                .appendAudit(room: room, at: now, actor: actor, action: action, target: target, detail: detail),
                on: connection, chatRetention: retention)
            return AuditRecord(
                id: connection.lastInsertRowID, room: room, at: now, actor: actor, action: action, target: target,
                detail: detail)
        }
    }

    /// The room's audit log, oldest first; with `limit`, only the latest `limit` entries.
    public func auditLog(room: String, limit: Int? = nil) throws(DatabaseError) -> [AuditRecord] {
        try withReader { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT id, room, at, actor, action, target, detail FROM "
                    + "(SELECT * FROM audit_log WHERE room = ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id")
            try statement.bind(.text(room), .integer(Int64(limit ?? -1)))
            return try statement.rows { row in
                AuditRecord(
                    id: row.int64(at: 0), room: row.text(at: 1), at: row.int64(at: 2), actor: row.text(at: 3),
                    action: row.text(at: 4), target: row.optionalText(at: 5), detail: row.optionalText(at: 6))
            }
        }
    }

    // MARK: Chat

    /// Stores a chat message and deletes the room's messages beyond the newest `chatRetention`.
    @discardableResult
    public func appendChat(
        room: String, at now: Int64, fromIdentity: String, fromName: String, audience: ChatAudienceRecord,
        text: String
    ) throws(DatabaseError) -> ChatRecord {
        let retention = Int64(chatRetention)
        return try withWriter { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try Self.perform(
                    .appendChat(
                        room: room, at: now, fromIdentity: fromIdentity, fromName: fromName, audience: audience,
                        text: text),
                    on: connection, chatRetention: retention)
                // The trim that follows the insert is a DELETE, which leaves the last inserted row id alone.
                return ChatRecord(
                    id: connection.lastInsertRowID, room: room, at: now, fromIdentity: fromIdentity, fromName: fromName,
                    audience: audience, text: text)
            }
        }
    }

    /// The room's latest `limit` chat messages, oldest first, for every audience (the caller filters).
    public func recentChat(room: String, limit: Int = defaultChatRetention) throws(DatabaseError) -> [ChatRecord] {
        try withReader { connection throws(DatabaseError) in
            try Self.recentChat(room: room, limit: limit, in: connection)
        }
    }

    private static func recentChat(
        room: String, limit: Int, in connection: SQLiteConnection
    ) throws(DatabaseError) -> [ChatRecord] {
        let statement = try connection.prepare(
            "SELECT id, room, at, from_identity, from_name, audience_kind, audience_value, text FROM "
                + "(SELECT * FROM chat_messages WHERE room = ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id")
        try statement.bind(.text(room), .integer(Int64(max(limit, 0))))
        return try statement.rows { row in
            let value = row.text(at: 6)
            let audience: ChatAudienceRecord =
                switch row.text(at: 5) {
                case "peer": .peer(value)
                case "role": .role(value)
                default: .everyone
                }
            return ChatRecord(
                id: row.int64(at: 0), room: row.text(at: 1), at: row.int64(at: 2), fromIdentity: row.text(at: 3),
                fromName: row.text(at: 4), audience: audience, text: row.text(at: 7))
        }
    }

    // MARK: Roles

    /// Records that `identity` left `room` holding `role` at `leftAt`, replacing any earlier record, and prunes
    /// records of departures older than `recentRoleRetention`.
    public func rememberRole(room: String, identity: String, role: String, leftAt: Int64) throws(DatabaseError) {
        try apply(.releaseRole(room: room, identity: identity, role: role, at: leftAt))
    }

    /// The role `identity` held when it left `room`, if it left at most `within` milliseconds before `now`
    /// (inclusive: a peer back exactly 60,000 ms after leaving still gets its role). A peer still in the room
    /// has no such role.
    public func recentRole(
        room: String, identity: String, within: Int64 = 60_000, now: Int64
    ) throws(DatabaseError)
        -> String?
    {
        try withReader { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT role FROM recent_roles WHERE room = ?1 AND identity = ?2 AND present = 0 AND left_at >= ?3")
            try statement.bind(.text(room), .text(identity), .integer(now.subtractingClamped(within)))
            defer { statement.reset() }
            return try statement.step() ? statement.text(at: 0) : nil
        }
    }

    /// The roles held in `room` by the peers in it now (as far as this file knows).
    public func heldRoles(room: String) throws(DatabaseError) -> [RoleRecord] {
        try withReader { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT identity, role, left_at FROM recent_roles WHERE room = ?1 AND present = 1 ORDER BY identity")
            try statement.bind(.text(room))
            return try statement.rows(RoleRecord.init(row:))
        }
    }

    private static func raisedHands(room: String, in connection: SQLiteConnection) throws(DatabaseError) -> [HandRecord]
    {
        let statement = try connection.prepare(
            "SELECT identity, raised_at FROM raised_hands WHERE room = ?1 ORDER BY raised_at, identity")
        try statement.bind(.text(room))
        return try statement.rows { row in HandRecord(identity: row.text(at: 0), raisedAt: row.int64(at: 1)) }
    }

    private static func releasedRoles(
        room: String, since: Int64, heldReleasedAt: Int64? = nil, in connection: SQLiteConnection
    ) throws(DatabaseError) -> [RoleRecord] {
        let statement = try connection.prepare(
            "SELECT identity, role, CASE WHEN present = 1 THEN ?3 ELSE left_at END FROM recent_roles "
                + "WHERE room = ?1 AND ((present = 0 AND left_at >= ?2) OR (present = 1 AND ?3 IS NOT NULL)) "
                + "ORDER BY identity")
        try statement.bind(.text(room), .integer(since), heldReleasedAt.map { .integer($0) } ?? .null)
        return try statement.rows(RoleRecord.init(row:))
    }

    /// The peers someone else moved down in `room`, with the role each was moved to and when, by identity.
    public func demotions(room: String) throws(DatabaseError) -> [RoleRecord] {
        try withReader { connection throws(DatabaseError) in try Self.demotions(room: room, in: connection) }
    }

    private static func demotions(room: String, in connection: SQLiteConnection) throws(DatabaseError) -> [RoleRecord] {
        let statement = try connection.prepare(
            "SELECT identity, role, at FROM demotions WHERE room = ?1 ORDER BY identity")
        try statement.bind(.text(room))
        return try statement.rows(RoleRecord.init(row:))
    }

    /// The invitations to speak pending in `room`, oldest first.
    public func invitations(room: String) throws(DatabaseError) -> [InvitationRecord] {
        try withReader { connection throws(DatabaseError) in try Self.invitations(room: room, in: connection) }
    }

    private static func invitations(
        room: String, in connection: SQLiteConnection
    ) throws(DatabaseError) -> [InvitationRecord] {
        let statement = try connection.prepare(
            "SELECT invitee, inviter, at FROM invitations WHERE room = ?1 ORDER BY at, invitee")
        try statement.bind(.text(room))
        return try statement.rows { row in
            InvitationRecord(invitee: row.text(at: 0), inviter: row.text(at: 1), at: row.int64(at: 2))
        }
    }

    /// Forgets the role `identity` held when it left `room` (once it has been given back, for instance).
    public func forgetRole(room: String, identity: String) throws(DatabaseError) {
        try apply(.forgetRole(room: room, identity: identity))
    }
}

extension Int64 {
    /// `self - other`, held at the bounds instead of trapping, so an absurd time from a caller cannot crash.
    fileprivate func subtractingClamped(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        if overflow {
            return other > 0 ? .min : .max
        }
        return difference
    }
}

extension RoleRecord {
    /// The record in a row of (identity, role, at).
    fileprivate init(row: SQLiteStatement) {
        self.init(identity: row.text(at: 0), role: row.text(at: 1), at: row.int64(at: 2))
    }
}
