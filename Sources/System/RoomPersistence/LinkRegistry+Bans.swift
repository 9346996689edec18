/// An identity banned from every room of the server, as the registry keeps it. See `docs/tokens.md`, "Bans".
public struct BanRecord: Sendable, Equatable {
    /// The banned identity (a token's `sub`, or the guest identity an invite link's holder has).
    public var identity: String
    /// The name they had in the room when banned; empty when unknown.
    public var name: String
    /// Who banned them: an identity in a room (`/ban`), or `operator`.
    public var by: String
    /// The room they were banned from; nil when the operator banned them.
    public var room: String?
    /// Unix seconds.
    public var at: Int64
    /// Why, as the host wrote it; empty when they wrote nothing.
    public var reason: String

    public init(identity: String, name: String = "", by: String, room: String?, at: Int64, reason: String = "") {
        self.identity = identity
        self.name = name
        self.by = by
        self.room = room
        self.at = at
        self.reason = reason
    }
}

extension LinkRegistry {
    /// Bans `ban.identity` from every room of the server; a second ban of the same identity replaces the first
    /// (its author, time and reason).
    public func ban(_ ban: BanRecord) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in
            try connection.prepare(
                "INSERT OR REPLACE INTO bans (identity, name, by, room, at, reason) VALUES (?, ?, ?, ?, ?, ?)"
            ).bind(
                .text(ban.identity), .text(ban.name), .text(ban.by), ban.room.map { .text($0) } ?? .null,
                .integer(ban.at),
                .text(ban.reason)
            ).run()
        }
    }

    /// Makes the bans exactly `bans`, in one transaction (a reader sees the old set or the new one): a node of a
    /// cluster keeps the cluster's bans this way, as Redis holds them (docs/tokens.md, "Bans").
    public func replaceBans(with bans: [BanRecord]) throws(DatabaseError) {
        try with { connection throws(DatabaseError) in
            try connection.transaction { () throws(DatabaseError) in
                try connection.execute("DELETE FROM bans")
                for ban in bans {
                    try connection.prepare(
                        "INSERT OR REPLACE INTO bans (identity, name, by, room, at, reason) VALUES (?, ?, ?, ?, ?, ?)"
                    ).bind(
                        .text(ban.identity), .text(ban.name), .text(ban.by), ban.room.map { .text($0) } ?? .null,
                        .integer(ban.at), .text(ban.reason)
                    ).run()
                }
            }
        }
    }

    /// Lifts the ban of `identity`. Returns whether there was one.
    @discardableResult
    public func lift(ban identity: String) throws(DatabaseError) -> Bool {
        try with { connection throws(DatabaseError) in
            try connection.prepare("DELETE FROM bans WHERE identity = ?").bind(.text(identity)).run()
            return connection.changes > 0
        }
    }

    /// The identity `who` names among the bans: a banned identity itself, else the one ban whose name is `who`
    /// (ignoring case); nil when none is, or when more than one banned person had that name.
    public func bannedIdentity(named who: String) throws(DatabaseError) -> String? {
        let bans = try bans()
        if bans.contains(where: { $0.identity == who }) { return who }
        let named = bans.filter { !$0.name.isEmpty && $0.name.lowercased() == who.lowercased() }
        return named.count == 1 ? named[0].identity : nil
    }

    /// The ban of `identity`, if it is banned.
    public func ban(of identity: String) throws(DatabaseError) -> BanRecord? {
        try bans(identity: identity).first
    }

    /// Every ban (or the one of `identity`), newest first.
    public func bans(identity: String? = nil) throws(DatabaseError) -> [BanRecord] {
        try with { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT identity, name, by, room, at, reason FROM bans"
                    + (identity == nil ? "" : " WHERE identity = ?") + " ORDER BY at DESC, identity")
            if let identity { try statement.bind(.text(identity)) }
            return try statement.rows { row in
                BanRecord(
                    identity: row.text(at: 0), name: row.text(at: 1), by: row.text(at: 2),
                    room: row.optionalText(at: 3), at: row.int64(at: 4), reason: row.text(at: 5))
            }
        }
    }
}
