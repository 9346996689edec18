import Platform

/// Where the cluster keeps everything in Redis. Every key starts with `cr:`; a room's keys carry the room in a
/// hash tag (`cr:{lobby}:events`), so all of one room's keys would share a slot in a Redis Cluster and every
/// function call stays on one shard.
public enum ClusterKeys {
    /// Set of the node names that registered (live or not: a live node also has its `node` key).
    public static let nodes = "cr:nodes"
    /// Hash from slot number to `name|incarnation|expiry ms`.
    public static let slots = "cr:slots"
    /// A random value written when Redis is first used; when it is gone or changed, Redis lost its data.
    public static let generation = "cr:gen"
    /// Set of the rooms that have state in Redis.
    public static let rooms = "cr:rooms"

    /// Hash of the identities banned from every room of the cluster: identity to the ban's record, as the server
    /// writes it (sealed). Written only by `cr_append` (with the entry that bans or lifts), `cr_ban_lift` and
    /// `cr_ban_carry`.
    public static let bans = "cr:bans"
    /// Raised on every change of `bans`, so a node reads the whole hash only when it changed.
    public static let bansVersion = "cr:bans:v"
    /// Hash of the identities whose ban was lifted: identity to when (Unix seconds), so a node that was away
    /// does not bring a lifted ban back (`cr_ban_carry`).
    public static let lifts = "cr:lifts"

    /// `incarnation|slot|media|relay`, expiring unless refreshed.
    public static func node(_ name: String) -> String { "cr:node:\(name)" }
    /// Hash of what the node's lobbies should show of the rooms it owns: room to an entry the room server
    /// writes, plus `~v` (changed on every write). Replaced whole on each change, expiring unless refreshed.
    public static func lobby(_ node: String) -> String { "cr:lobby:\(node)" }

    public static func owner(_ room: String) -> String { "cr:{\(room)}:owner" }
    public static func epoch(_ room: String) -> String { "cr:{\(room)}:epoch" }
    public static func events(_ room: String) -> String { "cr:{\(room)}:events" }
    public static func requests(_ room: String) -> String { "cr:{\(room)}:requests" }
    public static func meta(_ room: String) -> String { "cr:{\(room)}:meta" }
    public static func peers(_ room: String) -> String { "cr:{\(room)}:peers" }
    public static func chat(_ room: String) -> String { "cr:{\(room)}:chat" }
    public static func audit(_ room: String) -> String { "cr:{\(room)}:audit" }

    /// Whether a room or node name follows the one naming rule (`PlainName`: 1 to 64 bytes of letters, digits,
    /// `-`, `_` and `.`), so a name can never break out of a key's hash tag or its `|`-separated values.
    public static func isValidName(_ name: String) -> Bool { PlainName.isValid(name) }
}
