/// The database schema, as an ordered list of migrations. `PRAGMA user_version` holds how many have run.
///
/// Append new migrations at the end; never edit one that has shipped.
enum Schema {
    static let migrations: [String] = [
        """
        CREATE TABLE rooms (
            id TEXT PRIMARY KEY NOT NULL,
            topic TEXT NOT NULL DEFAULT '',
            ended_at INTEGER,
            ended_reason TEXT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            room TEXT NOT NULL,
            at INTEGER NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT,
            detail TEXT
        ) STRICT;
        CREATE INDEX audit_log_by_room ON audit_log (room, id);
        CREATE TABLE chat_messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            room TEXT NOT NULL,
            at INTEGER NOT NULL,
            from_identity TEXT NOT NULL,
            from_name TEXT NOT NULL,
            audience_kind TEXT NOT NULL CHECK (audience_kind IN ('everyone', 'peer', 'role')),
            audience_value TEXT,
            text TEXT NOT NULL
        ) STRICT;
        CREATE INDEX chat_messages_by_room ON chat_messages (room, id);
        CREATE TABLE recent_roles (
            room TEXT NOT NULL,
            identity TEXT NOT NULL,
            role TEXT NOT NULL,
            left_at INTEGER NOT NULL,
            PRIMARY KEY (room, identity)
        ) STRICT;
        CREATE INDEX recent_roles_by_time ON recent_roles (left_at);
        """,
        // Roles of peers in the room now (present = 1), so that a crash does not lose them, and how far the
        // change journal has been applied to this file.
        """
        ALTER TABLE recent_roles ADD COLUMN present INTEGER NOT NULL DEFAULT 0 CHECK (present IN (0, 1));
        CREATE TABLE journal_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            applied_seq INTEGER NOT NULL
        ) STRICT;
        INSERT INTO journal_state (id, applied_seq) VALUES (1, 0);
        """,
        // Rooms their hosts took out of the lobby; every other room is listed.
        """
        CREATE TABLE unlisted_rooms (
            room TEXT PRIMARY KEY NOT NULL,
            unlisted_at INTEGER NOT NULL
        ) STRICT;
        """,
        // Pending invitations to speak, so that a restart of the server does not lose them. Some files at
        // version 3 were written by a build whose third migration made the invitations table instead of
        // unlisted_rooms, so this one makes whichever of the two is missing.
        """
        CREATE TABLE IF NOT EXISTS invitations (
            room TEXT NOT NULL,
            invitee TEXT NOT NULL,
            inviter TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (room, invitee)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS unlisted_rooms (
            room TEXT PRIMARY KEY NOT NULL,
            unlisted_at INTEGER NOT NULL
        ) STRICT;
        """,
        // Demotions by someone else, which last as long as the room (until someone raises the peer again).
        """
        CREATE TABLE demotions (
            room TEXT NOT NULL,
            identity TEXT NOT NULL,
            role TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (room, identity)
        ) STRICT;
        """,
        // Raised hands, with when each went up, so that a restart keeps the queue and its order.
        """
        CREATE TABLE IF NOT EXISTS raised_hands (
            room TEXT NOT NULL,
            identity TEXT NOT NULL,
            raised_at INTEGER NOT NULL,
            PRIMARY KEY (room, identity)
        ) STRICT;
        """,
        // Rooms where a host or moderator turned raising hands off; every other room has it on.
        """
        CREATE TABLE IF NOT EXISTS hands_off_rooms (
            room TEXT PRIMARY KEY,
            off_at INTEGER NOT NULL
        ) STRICT;
        """,
        // Rooms with people in them, with since when (the age the lobby shows); a restart keeps it.
        """
        CREATE TABLE IF NOT EXISTS live_rooms (
            room TEXT PRIMARY KEY,
            since INTEGER NOT NULL
        ) STRICT;
        """,
        // A room's timed decision about its host (a handover due, or its end), and the last host who left, so
        // that a restart acts on it when it is due.
        """
        CREATE TABLE IF NOT EXISTS room_deadlines (
            room TEXT PRIMARY KEY,
            handover_due INTEGER,
            ends_at INTEGER,
            last_host TEXT,
            last_host_name TEXT,
            CHECK (handover_due IS NOT NULL OR ends_at IS NOT NULL)
        ) STRICT;
        """,
    ]

    /// The schema version this program writes.
    static var currentVersion: Int64 { Int64(migrations.count) }

    /// Runs the migrations the database has not seen, each in its own transaction with its version bump.
    static func migrate(_ connection: SQLiteConnection) throws(DatabaseError) {
        let version = try userVersion(connection)
        if version > currentVersion {
            throw DatabaseError(
                path: connection.path, code: nil,
                message: "schema version \(version) is newer than this program's \(currentVersion); "
                    + "use a newer clubroom or another data folder",
                sql: nil)
        }
        for index in Int(version)..<migrations.count {
            try connection.transaction { () throws(DatabaseError) in
                try connection.execute(migrations[index])
                try connection.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }

    static func userVersion(_ connection: SQLiteConnection) throws(DatabaseError) -> Int64 {
        let statement = try connection.prepare("PRAGMA user_version")
        defer { statement.reset() }
        guard try statement.step() else {
            return 0
        }
        return statement.int64(at: 0)
    }
}
