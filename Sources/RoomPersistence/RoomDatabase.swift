import Synchronization

/// The server's durable state in one SQLite file: rooms and topics, the moderation audit log, the last chat
/// messages of each room, and the roles of peers who just left (so a quick reconnect gets its role back).
///
/// Every method is synchronous and short (one small transaction, a few milliseconds on a local disk; WAL mode
/// means a write never waits for readers). The server calls it from its own serial queue, never from the
/// network loop, so a slow disk delays persistence but not the room. Calls from several threads are still safe:
/// a lock serialises them on the one connection.
///
/// Times are milliseconds since the Unix epoch (`Timestamp`); identities and roles are plain strings.
public final class RoomDatabase: Sendable {
    /// The database file.
    public let path: String
    /// How many chat messages each room keeps; older ones are deleted as new ones arrive.
    public let chatRetention: Int
    private let connection: Mutex<SQLiteConnection>

    /// The name of the database file inside a data folder.
    public static let fileName = "clubroom.sqlite3"

    /// Messages kept per room by default.
    public static let defaultChatRetention = 200

    /// How long a departed peer's role is kept by default before it is pruned (10 minutes, well past any
    /// reconnect window, so a window of 60 s can be checked exactly).
    public static let recentRoleRetention: Int64 = 600_000

    /// Opens the database at `path`, creating it and bringing its schema up to date.
    ///
    /// Fails with a `DatabaseError` naming the file when it is not a database, is corrupt, cannot be created, or
    /// was written by a newer version of this program.
    public init(path: String, chatRetention: Int = defaultChatRetention) throws(DatabaseError) {
        precondition(chatRetention > 0, "a room keeps at least one chat message")
        self.path = path
        self.chatRetention = chatRetention
        let opened = try SQLiteConnection(path: path)
        try Schema.migrate(opened)
        connection = Mutex(opened)
    }

    func withConnection<Result: Sendable>(
        _ body: (SQLiteConnection) throws(DatabaseError) -> Result
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

    // MARK: Rooms

    /// Makes sure the room exists, creating it open and without a topic; returns it as stored (possibly ended).
    @discardableResult
    public func openRoom(_ room: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try withConnection { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try connection.prepare(
                    "INSERT INTO rooms (id, topic, created_at, updated_at) VALUES (?1, '', ?2, ?2) "
                        + "ON CONFLICT (id) DO NOTHING"
                ).bind(.text(room), .integer(now)).run()
                return try Self.room(room, in: connection)!
            }
        }
    }

    /// The stored room, or `nil` if it was never opened.
    public func room(_ room: String) throws(DatabaseError) -> RoomRecord? {
        try withConnection { connection throws(DatabaseError) in try Self.room(room, in: connection) }
    }

    /// Every stored room, by name.
    public func rooms() throws(DatabaseError) -> [RoomRecord] {
        try withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT id, topic, ended_at, ended_reason, created_at, updated_at FROM rooms ORDER BY id")
            var rooms: [RoomRecord] = []
            while try statement.step() {
                rooms.append(Self.roomRecord(statement))
            }
            statement.reset()
            return rooms
        }
    }

    /// Sets the topic (creating the room if needed) and returns the room.
    @discardableResult
    public func setTopic(_ room: String, topic: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try upsertRoom(
            room, now: now,
            sql: "INSERT INTO rooms (id, topic, created_at, updated_at) VALUES (?1, ?3, ?2, ?2) "
                + "ON CONFLICT (id) DO UPDATE SET topic = ?3, updated_at = ?2",
            extra: .text(topic))
    }

    /// Marks the room ended with `reason`; it stays ended, across restarts, until `reopenRoom`.
    @discardableResult
    public func endRoom(_ room: String, reason: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try upsertRoom(
            room, now: now,
            sql: "INSERT INTO rooms (id, topic, ended_at, ended_reason, created_at, updated_at) "
                + "VALUES (?1, '', ?2, ?3, ?2, ?2) "
                + "ON CONFLICT (id) DO UPDATE SET ended_at = ?2, ended_reason = ?3, updated_at = ?2",
            extra: .text(reason))
    }

    /// Opens an ended room again (creating it if needed); its topic, audit log and chat are kept.
    @discardableResult
    public func reopenRoom(_ room: String, at now: Int64) throws(DatabaseError) -> RoomRecord {
        try upsertRoom(
            room, now: now,
            sql: "INSERT INTO rooms (id, topic, created_at, updated_at) VALUES (?1, '', ?2, ?2) "
                + "ON CONFLICT (id) DO UPDATE SET ended_at = NULL, ended_reason = NULL, updated_at = ?2",
            extra: nil)
    }

    private func upsertRoom(
        _ room: String, now: Int64, sql: String, extra: SQLiteValue?
    ) throws(DatabaseError)
        -> RoomRecord
    {
        try withConnection { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                let statement = try connection.prepare(sql)
                if let extra {
                    try statement.bind(.text(room), .integer(now), extra)
                } else {
                    try statement.bind(.text(room), .integer(now))
                }
                try statement.run()
                return try Self.room(room, in: connection)!
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
        try withConnection { connection throws(DatabaseError) in
            try connection.prepare(
                "INSERT INTO audit_log (room, at, actor, action, target, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
            ).bind(
                .text(room), .integer(now), .text(actor), .text(action), target.map { .text($0) } ?? .null,
                detail.map { .text($0) } ?? .null
            ).run()
            return AuditRecord(
                id: connection.lastInsertRowID, room: room, at: now, actor: actor, action: action, target: target,
                detail: detail)
        }
    }

    /// The room's audit log, oldest first; with `limit`, only the latest `limit` entries.
    public func auditLog(room: String, limit: Int? = nil) throws(DatabaseError) -> [AuditRecord] {
        try withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT id, room, at, actor, action, target, detail FROM "
                    + "(SELECT * FROM audit_log WHERE room = ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id")
            try statement.bind(.text(room), .integer(Int64(limit ?? -1)))
            var entries: [AuditRecord] = []
            while try statement.step() {
                entries.append(
                    AuditRecord(
                        id: statement.int64(at: 0), room: statement.text(at: 1), at: statement.int64(at: 2),
                        actor: statement.text(at: 3), action: statement.text(at: 4),
                        target: statement.optionalText(at: 5), detail: statement.optionalText(at: 6)))
            }
            statement.reset()
            return entries
        }
    }

    // MARK: Chat

    /// Stores a chat message and deletes the room's messages beyond the newest `chatRetention`.
    @discardableResult
    public func appendChat(
        room: String, at now: Int64, fromIdentity: String, fromName: String, audience: ChatAudienceRecord,
        text: String
    ) throws(DatabaseError) -> ChatRecord {
        let (kind, value): (String, SQLiteValue) =
            switch audience {
            case .everyone: ("everyone", .null)
            case .peer(let identity): ("peer", .text(identity))
            case .role(let role): ("role", .text(role))
            }
        let retention = Int64(chatRetention)
        return try withConnection { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try connection.prepare(
                    "INSERT INTO chat_messages (room, at, from_identity, from_name, audience_kind, audience_value, "
                        + "text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                ).bind(
                    .text(room), .integer(now), .text(fromIdentity), .text(fromName), .text(kind), value, .text(text)
                ).run()
                let id = connection.lastInsertRowID
                try connection.prepare(
                    "DELETE FROM chat_messages WHERE room = ?1 AND id <= "
                        + "(SELECT id FROM chat_messages WHERE room = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)"
                ).bind(.text(room), .integer(retention)).run()
                return ChatRecord(
                    id: id, room: room, at: now, fromIdentity: fromIdentity, fromName: fromName, audience: audience,
                    text: text)
            }
        }
    }

    /// The room's latest `limit` chat messages, oldest first, for every audience (the caller filters).
    public func recentChat(room: String, limit: Int = defaultChatRetention) throws(DatabaseError) -> [ChatRecord] {
        try withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT id, room, at, from_identity, from_name, audience_kind, audience_value, text FROM "
                    + "(SELECT * FROM chat_messages WHERE room = ?1 ORDER BY id DESC LIMIT ?2) ORDER BY id")
            try statement.bind(.text(room), .integer(Int64(max(limit, 0))))
            var messages: [ChatRecord] = []
            while try statement.step() {
                let value = statement.text(at: 6)
                let audience: ChatAudienceRecord =
                    switch statement.text(at: 5) {
                    case "peer": .peer(value)
                    case "role": .role(value)
                    default: .everyone
                    }
                messages.append(
                    ChatRecord(
                        id: statement.int64(at: 0), room: statement.text(at: 1), at: statement.int64(at: 2),
                        fromIdentity: statement.text(at: 3), fromName: statement.text(at: 4), audience: audience,
                        text: statement.text(at: 7)))
            }
            statement.reset()
            return messages
        }
    }

    // MARK: Roles of peers who left

    /// Records that `identity` left `room` holding `role` at `leftAt`, replacing any earlier record, and prunes
    /// records older than `recentRoleRetention`.
    public func rememberRole(room: String, identity: String, role: String, leftAt: Int64) throws(DatabaseError) {
        try withConnection { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try connection.prepare(
                    "INSERT INTO recent_roles (room, identity, role, left_at) VALUES (?1, ?2, ?3, ?4) "
                        + "ON CONFLICT (room, identity) DO UPDATE SET role = ?3, left_at = ?4"
                ).bind(.text(room), .text(identity), .text(role), .integer(leftAt)).run()
                try connection.prepare("DELETE FROM recent_roles WHERE left_at < ?1")
                    .bind(.integer(leftAt.subtractingClamped(Self.recentRoleRetention))).run()
            }
        }
    }

    /// The role `identity` held when it left `room`, if it left at most `within` milliseconds before `now`
    /// (inclusive: a peer back exactly 60,000 ms after leaving still gets its role).
    public func recentRole(
        room: String, identity: String, within: Int64 = 60_000, now: Int64
    ) throws(DatabaseError)
        -> String?
    {
        try withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT role FROM recent_roles WHERE room = ?1 AND identity = ?2 AND left_at >= ?3")
            try statement.bind(.text(room), .text(identity), .integer(now.subtractingClamped(within)))
            defer { statement.reset() }
            return try statement.step() ? statement.text(at: 0) : nil
        }
    }

    /// Forgets the role `identity` held when it left `room` (once it has been given back, for instance).
    public func forgetRole(room: String, identity: String) throws(DatabaseError) {
        try withConnection { connection throws(DatabaseError) in
            try connection.prepare("DELETE FROM recent_roles WHERE room = ?1 AND identity = ?2")
                .bind(.text(room), .text(identity)).run()
        }
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
