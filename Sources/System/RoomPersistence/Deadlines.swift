/// A room's timed decision about its host, as stored (`room_deadlines`): the handover due when its last host
/// dropped, or its end when no moderator could take over, and that last host, so that a restart of the server
/// acts on it when it is due.
public struct DeadlineRecord: Sendable, Equatable {
    /// When the host role passes to a moderator unless a host is back.
    public var handoverDue: Int64?
    /// When the room ends unless a host (or a moderator, who then becomes host) arrives.
    public var endsAt: Int64?
    /// The last host who left: identity and display name.
    public var lastHost: String?
    public var lastHostName: String?

    public init(handoverDue: Int64?, endsAt: Int64?, lastHost: String?, lastHostName: String?) {
        self.handoverDue = handoverDue
        self.endsAt = endsAt
        self.lastHost = lastHost
        self.lastHostName = lastHostName
    }
}

extension RoomDatabase {
    /// The rooms with a deadline waiting, by name: the server loads them at start, so that each is acted on when
    /// it is due whether or not anyone comes back.
    public func roomsWithDeadlines() throws(DatabaseError) -> [String] {
        try withReader { connection throws(DatabaseError) in
            try connection.prepare("SELECT room FROM room_deadlines ORDER BY room").rows { $0.text(at: 0) }
        }
    }

    /// The room's deadline, if one waits.
    static func deadline(_ room: String, in connection: SQLiteConnection) throws(DatabaseError) -> DeadlineRecord? {
        let statement = try connection.prepare(
            "SELECT handover_due, ends_at, last_host, last_host_name FROM room_deadlines WHERE room = ?1")
        try statement.bind(.text(room))
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return DeadlineRecord(
            handoverDue: statement.optionalInt64(at: 0), endsAt: statement.optionalInt64(at: 1),
            lastHost: statement.optionalText(at: 2), lastHostName: statement.optionalText(at: 3))
    }

    /// Writes the room's deadline, or (nil, or neither time) deletes it.
    static func setDeadline(
        _ room: String, _ deadline: DeadlineRecord?, on connection: SQLiteConnection
    ) throws(DatabaseError) {
        guard let deadline, deadline.handoverDue != nil || deadline.endsAt != nil else {
            try connection.prepare("DELETE FROM room_deadlines WHERE room = ?1").bind(.text(room)).run()
            return
        }
        func optional(_ value: Int64?) -> SQLiteValue { value.map { .integer($0) } ?? .null }
        func optional(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
        try connection.prepare(
            "INSERT INTO room_deadlines (room, handover_due, ends_at, last_host, last_host_name) "
                + "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (room) DO UPDATE SET handover_due = ?2, ends_at = ?3, "
                + "last_host = ?4, last_host_name = ?5"
        ).bind(
            .text(room), optional(deadline.handoverDue), optional(deadline.endsAt), optional(deadline.lastHost),
            optional(deadline.lastHostName)
        ).run()
    }
}
