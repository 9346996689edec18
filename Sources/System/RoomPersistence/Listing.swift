extension RoomDatabase {
    /// Whether the room shows in the lobby: every room does until its host unlists it.
    public func isListed(_ room: String) throws(DatabaseError) -> Bool {
        try withReader { connection throws(DatabaseError) in try Self.isListed(room, in: connection) }
    }

    /// Lists the room in the lobby, or takes it out; kept across restarts. The server commits this as a
    /// `setListed` change through its store, like every other change.
    public func setListed(_ room: String, listed: Bool, at now: Int64) throws(DatabaseError) {
        try apply(.setListed(room: room, listed: listed, at: now))
    }

    static func isListed(_ room: String, in connection: SQLiteConnection) throws(DatabaseError) -> Bool {
        let statement = try connection.prepare("SELECT 1 FROM unlisted_rooms WHERE room = ?1")
        try statement.bind(.text(room))
        defer { statement.reset() }
        return try !statement.step()
    }

    /// Since when the room has had people in it (kept across restarts), or nil when it was empty.
    static func liveSince(_ room: String, in connection: SQLiteConnection) throws(DatabaseError) -> Int64? {
        let statement = try connection.prepare("SELECT since FROM live_rooms WHERE room = ?1")
        try statement.bind(.text(room))
        defer { statement.reset() }
        return try statement.step() ? statement.int64(at: 0) : nil
    }

    /// Whether people may raise hands in the room: on until a host or moderator turns it off.
    static func handsAllowed(_ room: String, in connection: SQLiteConnection) throws(DatabaseError) -> Bool {
        let statement = try connection.prepare("SELECT 1 FROM hands_off_rooms WHERE room = ?1")
        try statement.bind(.text(room))
        defer { statement.reset() }
        return try !statement.step()
    }
}
