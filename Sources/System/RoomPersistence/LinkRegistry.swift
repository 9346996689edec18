import Synchronization

/// One invite link the server made, as its registry keeps it. See `docs/tokens.md`, "The registry of links".
public struct LinkRecord: Sendable, Equatable {
    /// The invite's `jti`.
    public var id: String
    /// The room a room link opens; nil for a server link (the lobby).
    public var room: String?
    public var role: String
    /// Who made it: an identity in the room (`/link`), or `operator` (`clubroom invite`).
    public var creator: String
    /// Unix seconds.
    public var createdAt: Int64
    public var expiresAt: Int64
    /// How many identities it may admit for the first time; nil for no limit.
    public var maxUses: Int64?
    /// How many identities it admitted for the first time.
    public var uses: Int64
    /// When it was withdrawn, and by whom; nil while it works.
    public var revokedAt: Int64?
    public var revokedBy: String?

    public init(
        id: String, room: String?, role: String, creator: String, createdAt: Int64, expiresAt: Int64,
        maxUses: Int64? = nil, uses: Int64 = 0, revokedAt: Int64? = nil, revokedBy: String? = nil
    ) {
        self.id = id
        self.room = room
        self.role = role
        self.creator = creator
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.maxUses = maxUses
        self.uses = uses
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
    }
}

/// What the registry says about a link presented at the door.
public enum LinkVerdict: Sendable, Equatable {
    /// It may admit this identity.
    case admitted
    /// It was withdrawn (on its own, with every link of its room, or with every link of the server).
    case revoked
    /// It admitted as many identities as it may.
    case usedUp
}

/// The server's registry of invite links, the links withdrawn, and the people removed from rooms, in
/// `links.db` in the data folder, with the identities banned from every room of the server (`bans`): a file of its own, which `clubroom links` opens beside a running server
/// (SQLite's WAL and busy timeout let them share it).
///
/// Every invite is signed with the server's secret, so the registry does not decide whether a link is genuine:
/// it decides whether a genuine link was withdrawn. A link is recorded when the server makes it (`/link`) or
/// the first time it is presented (one `clubroom invite` made); its role, room, creator and use limit come from
/// its signed claims. It is refused when it was withdrawn on its own (`revoke`), with every link of its room or
/// of the server made up to a moment (`withdrawAll`), or with the links its creator made before being lowered
/// below its role or removed (`revoke(madeBy:)`), also when this registry sees it for the first time after that.
public final class LinkRegistry: Sendable {
    /// The registry's file in the data folder.
    public static let fileName = "links.db"

    public let path: String
    private let connection: Mutex<SQLiteConnection>

    static let schema = """
        CREATE TABLE IF NOT EXISTS links (
            id TEXT PRIMARY KEY NOT NULL,
            room TEXT,
            role TEXT NOT NULL,
            creator TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            max_uses INTEGER,
            uses INTEGER NOT NULL DEFAULT 0,
            revoked_at INTEGER,
            revoked_by TEXT
        ) STRICT;
        CREATE INDEX IF NOT EXISTS links_by_room ON links (room, created_at);
        CREATE INDEX IF NOT EXISTS links_by_creator ON links (room, creator);
        CREATE TABLE IF NOT EXISTS link_identities (
            link TEXT NOT NULL,
            identity TEXT NOT NULL,
            PRIMARY KEY (link, identity)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS link_cutoffs (
            room TEXT PRIMARY KEY NOT NULL,
            before INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE IF NOT EXISTS creator_cuts (
            room TEXT NOT NULL,
            creator TEXT NOT NULL,
            role TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (room, creator, role)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS locked_rooms (
            room TEXT PRIMARY KEY NOT NULL,
            at INTEGER NOT NULL
        ) STRICT;
        CREATE TABLE IF NOT EXISTS room_guests (
            room TEXT NOT NULL,
            identity TEXT NOT NULL,
            PRIMARY KEY (room, identity)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS removals (
            room TEXT NOT NULL,
            identity TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (room, identity)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS bans (
            identity TEXT PRIMARY KEY NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            by TEXT NOT NULL,
            room TEXT,
            at INTEGER NOT NULL,
            reason TEXT NOT NULL DEFAULT ''
        ) STRICT;
        """

    /// The cutoff key that stands for every room of the server.
    static let everyRoom = "*"

    /// Opens (creating) the registry at `path`.
    public init(path: String) throws(DatabaseError) {
        self.path = path
        let opened = try SQLiteConnection(path: path)
        try opened.transaction { () throws(DatabaseError) in try opened.execute(Self.schema) }
        connection = Mutex(opened)
    }

    func with<Result: Sendable>(
        _ body: (SQLiteConnection) throws(DatabaseError) -> Result
    ) throws(DatabaseError) -> Result {
        try RoomDatabase.locked(connection, body)
    }

    /// Closes the file (SQLite checkpoints its WAL into it); every later call fails. For a shutdown.
    public func close() {
        connection.withLock { $0.close() }
    }

    /// Records a link the server just made.
    public func register(_ link: LinkRecord) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in try Self.insert(link, on: connection) }
    }

    /// Records `link` unless it is known already (a link is recorded when made, or when first seen).
    private static func insert(_ link: LinkRecord, on connection: SQLiteConnection) throws(DatabaseError) {
        try connection.prepare(
            """
            INSERT OR IGNORE INTO links (id, room, role, creator, created_at, expires_at, max_uses, uses)
            VALUES (?, ?, ?, ?, ?, ?, ?, 0)
            """
        ).bind(
            .text(link.id), link.room.map { .text($0) } ?? .null, .text(link.role), .text(link.creator),
            .integer(link.createdAt), .integer(link.expiresAt), link.maxUses.map { .integer($0) } ?? .null
        ).run()
    }

    /// Whether `link` (as its signed claims describe it) may admit `identity` now; an admission counts as a use
    /// the first time the link admits that identity. A link seen for the first time is recorded.
    public func admit(_ link: LinkRecord, identity: String) throws(DatabaseError) -> LinkVerdict {
        try with { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) -> LinkVerdict in
                let cutoff = try connection.prepare(
                    "SELECT MAX(before) FROM link_cutoffs WHERE room = ? OR room = ?"
                ).bind(.text(link.room ?? Self.everyRoom), .text(Self.everyRoom))
                defer { cutoff.reset() }
                // Made before the second of the withdrawal (links registered then were withdrawn one by one, so
                // one made in that second after it, as a host's next /link usually is, works).
                if try cutoff.step(), let before = cutoff.optionalInt64(at: 0), link.createdAt < before {
                    return .revoked
                }
                if let room = link.room, !link.creator.isEmpty {
                    let cut = try connection.prepare(
                        "SELECT 1 FROM creator_cuts WHERE room = ? AND creator = ? AND role = ? AND at >= ?"
                    ).bind(.text(room), .text(link.creator), .text(link.role), .integer(link.createdAt))
                    defer { cut.reset() }
                    if try cut.step() { return .revoked }
                }
                try Self.insert(link, on: connection)
                let found = try connection.prepare("SELECT revoked_at, max_uses, uses FROM links WHERE id = ?")
                    .bind(.text(link.id))
                defer { found.reset() }
                guard try found.step() else { return .revoked }
                if found.optionalInt64(at: 0) != nil { return .revoked }
                let maxUses = found.optionalInt64(at: 1)
                let uses = found.int64(at: 2)
                let known = try connection.prepare("SELECT 1 FROM link_identities WHERE link = ? AND identity = ?")
                    .bind(.text(link.id), .text(identity))
                defer { known.reset() }
                if try known.step() { return .admitted }
                if let maxUses, uses >= maxUses { return .usedUp }
                try connection.prepare("INSERT INTO link_identities (link, identity) VALUES (?, ?)")
                    .bind(.text(link.id), .text(identity)).run()
                try connection.prepare("UPDATE links SET uses = uses + 1 WHERE id = ?").bind(.text(link.id)).run()
                return .admitted
            }
        }
    }

    /// Withdraws the link `id` (in `room`, when given: a host may withdraw only their room's links). Returns
    /// whether a working link was withdrawn. Without a room (the operator), a link not seen yet is recorded as
    /// withdrawn, so it never gets in.
    @discardableResult
    public func revoke(_ id: String, room: String? = nil, by who: String, at now: Int64) throws(DatabaseError) -> Bool {
        try with { connection throws(DatabaseError) in
            if room == nil {
                try connection.prepare(
                    "INSERT OR IGNORE INTO links (id, role, creator, created_at, expires_at) VALUES (?, '', '', 0, 0)"
                ).bind(.text(id)).run()
            }
            let statement = try connection.prepare(
                "UPDATE links SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL"
                    + (room == nil ? "" : " AND room = ?"))
            if let room {
                try statement.bind(.integer(now), .text(who), .text(id), .text(room)).run()
            } else {
                try statement.bind(.integer(now), .text(who), .text(id)).run()
            }
            return connection.changes > 0
        }
    }

    /// Withdraws every working link of `room` that let `identity` in. Returns the ids withdrawn.
    public func revoke(
        usedBy identity: String, in room: String, by who: String, at now: Int64
    ) throws(DatabaseError)
        -> [String]
    {
        try with { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) -> [String] in
                let found = try connection.prepare(
                    "SELECT id FROM links WHERE room = ? AND revoked_at IS NULL "
                        + "AND id IN (SELECT link FROM link_identities WHERE identity = ?) ORDER BY id"
                ).bind(.text(room), .text(identity))
                let ids = try found.rows { row in row.text(at: 0) }
                for id in ids {
                    try connection.prepare("UPDATE links SET revoked_at = ?, revoked_by = ? WHERE id = ?")
                        .bind(.integer(now), .text(who), .text(id)).run()
                }
                return ids
            }
        }
    }

    /// Withdraws every link made by `creator` in `room` whose role is in `roles` (those above what the creator
    /// now holds, or all when they were removed). Returns the ids withdrawn.
    public func revoke(
        madeBy creator: String, in room: String, roles: Set<String>, by who: String, at now: Int64
    ) throws(DatabaseError) -> [String] {
        try with { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) -> [String] in
                let cut = try connection.prepare(
                    "INSERT INTO creator_cuts (room, creator, role, at) VALUES (?, ?, ?, ?) "
                        + "ON CONFLICT (room, creator, role) DO UPDATE SET at = MAX(at, excluded.at)")
                for role in roles.sorted() {
                    try cut.bind(.text(room), .text(creator), .text(role), .integer(now)).run()
                }
                let found = try connection.prepare(
                    "SELECT id, role FROM links WHERE creator = ? AND room = ? AND revoked_at IS NULL ORDER BY id"
                ).bind(.text(creator), .text(room))
                let ids = try found.rows { row in (id: row.text(at: 0), role: row.text(at: 1)) }
                    .filter { roles.contains($0.role) }.map(\.id)
                let update = try connection.prepare("UPDATE links SET revoked_at = ?, revoked_by = ? WHERE id = ?")
                for id in ids { try update.bind(.integer(now), .text(who), .text(id)).run() }
                return ids
            }
        }
    }

    /// Withdraws every link to `room` (nil: every link of the server, room and server links alike) made up to
    /// `now`, registered or not; links made afterwards work. Returns how many registered links it withdrew.
    @discardableResult
    public func withdrawAll(room: String?, by who: String, at now: Int64) throws(DatabaseError) -> Int {
        try with { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) -> Int in
                try connection.prepare(
                    "INSERT INTO link_cutoffs (room, before) VALUES (?, ?) "
                        + "ON CONFLICT (room) DO UPDATE SET before = MAX(before, excluded.before)"
                ).bind(.text(room ?? Self.everyRoom), .integer(now)).run()
                let update = try connection.prepare(
                    "UPDATE links SET revoked_at = ?, revoked_by = ? WHERE revoked_at IS NULL"
                        + (room == nil ? "" : " AND room = ?"))
                if let room {
                    try update.bind(.integer(now), .text(who), .text(room)).run()
                } else {
                    try update.bind(.integer(now), .text(who)).run()
                }
                return connection.changes
            }
        }
    }

    /// The links of `room` (nil: every link), newest first.
    public func links(room: String? = nil) throws(DatabaseError) -> [LinkRecord] {
        try with { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT id, room, role, creator, created_at, expires_at, max_uses, uses, revoked_at, revoked_by "
                    + "FROM links" + (room == nil ? "" : " WHERE room = ?") + " ORDER BY created_at DESC, id")
            if let room { try statement.bind(.text(room)) }
            return try statement.rows { row in
                LinkRecord(
                    id: row.text(at: 0), room: row.optionalText(at: 1), role: row.text(at: 2),
                    creator: row.text(at: 3), createdAt: row.int64(at: 4), expiresAt: row.int64(at: 5),
                    maxUses: row.optionalInt64(at: 6), uses: row.int64(at: 7), revokedAt: row.optionalInt64(at: 8),
                    revokedBy: row.optionalText(at: 9))
            }
        }
    }

    // MARK: Locked rooms

    /// Locks `room` to newcomers with links, or opens it again.
    public func setLocked(_ locked: Bool, room: String, at now: Int64) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in
            if locked {
                try connection.prepare("INSERT OR IGNORE INTO locked_rooms (room, at) VALUES (?, ?)")
                    .bind(.text(room), .integer(now)).run()
            } else {
                try connection.prepare("DELETE FROM locked_rooms WHERE room = ?").bind(.text(room)).run()
            }
        }
    }

    /// Whether `room` is locked to newcomers with links.
    public func isLocked(_ room: String) throws(DatabaseError) -> Bool {
        try with { connection throws(DatabaseError) in
            let statement = try connection.prepare("SELECT 1 FROM locked_rooms WHERE room = ?").bind(.text(room))
            defer { statement.reset() }
            return try statement.step()
        }
    }

    /// Whether `room` is locked and `identity` never came into it with a link: a newcomer it keeps out.
    public func isLocked(_ room: String, against identity: String) throws(DatabaseError) -> Bool {
        try with { connection throws(DatabaseError) in
            let locked = try connection.prepare("SELECT 1 FROM locked_rooms WHERE room = ?").bind(.text(room))
            defer { locked.reset() }
            guard try locked.step() else { return false }
            let known = try connection.prepare("SELECT 1 FROM room_guests WHERE room = ? AND identity = ?")
                .bind(.text(room), .text(identity))
            defer { known.reset() }
            return try !known.step()
        }
    }

    /// Remembers that `identity` came into `room` with a link: a lock later lets it back in.
    public func rememberGuest(_ identity: String, in room: String) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in
            try connection.prepare("INSERT OR IGNORE INTO room_guests (room, identity) VALUES (?, ?)")
                .bind(.text(room), .text(identity)).run()
        }
    }

    // MARK: Removals

    /// Records that `identity` was removed from `room`: it stays out across restarts until the room ends.
    public func remember(removal identity: String, from room: String, at now: Int64) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in
            try connection.prepare("INSERT OR REPLACE INTO removals (room, identity, at) VALUES (?, ?, ?)")
                .bind(.text(room), .text(identity), .integer(now)).run()
        }
    }

    /// Whether `identity` was removed from `room` (and the room has not ended since).
    public func isRemoved(_ identity: String, from room: String) throws(DatabaseError) -> Bool {
        try with { connection throws(DatabaseError) in
            let statement = try connection.prepare("SELECT 1 FROM removals WHERE room = ? AND identity = ?")
                .bind(.text(room), .text(identity))
            defer { statement.reset() }
            return try statement.step()
        }
    }

    /// Forgets the removals from `room`: it ended, and a reopened room starts afresh.
    public func forgetRemovals(from room: String) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in
            try connection.prepare("DELETE FROM removals WHERE room = ?").bind(.text(room)).run()
        }
    }
}
