extension RoomDatabase {
    /// Whether the room shows in the lobby: every room does until its host unlists it.
    public func isListed(_ room: String) throws(DatabaseError) -> Bool {
        try withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare("SELECT 1 FROM unlisted_rooms WHERE room = ?1")
            try statement.bind(.text(room))
            defer { statement.reset() }
            return try !statement.step()
        }
    }

    /// Lists the room in the lobby, or takes it out; kept across restarts.
    public func setListed(_ room: String, listed: Bool, at now: Int64) throws(DatabaseError) {
        try withConnection { connection throws(DatabaseError) in
            if listed {
                try connection.prepare("DELETE FROM unlisted_rooms WHERE room = ?1").bind(.text(room)).run()
            } else {
                try connection.prepare(
                    "INSERT INTO unlisted_rooms (room, unlisted_at) VALUES (?1, ?2) ON CONFLICT (room) DO NOTHING"
                ).bind(.text(room), .integer(now)).run()
            }
        }
    }
}
