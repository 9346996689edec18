/// A room as stored: its topic and whether it has ended. Times are milliseconds since the Unix epoch.
public struct RoomRecord: Sendable, Equatable {
    /// The room's name, as in `/rooms/ROOM`.
    public var id: String
    /// The topic; empty when none was set.
    public var topic: String
    /// When the room was ended, or `nil` while it is open.
    public var endedAt: Int64?
    /// Why the room was ended, as the host gave it.
    public var endedReason: String?
    /// When the room was first opened.
    public var createdAt: Int64
    /// When any of the above last changed.
    public var updatedAt: Int64

    /// Whether the room refuses joins until a host opens it again.
    public var isEnded: Bool { endedAt != nil }
}

/// One line of the moderation audit log: who did what to whom, when, and why.
public struct AuditRecord: Sendable, Equatable {
    /// Increasing with every entry, across rooms.
    public var id: Int64
    /// The room the action happened in.
    public var room: String
    /// When the server performed it (milliseconds since the Unix epoch).
    public var at: Int64
    /// The identity that acted.
    public var actor: String
    /// What was done, as a wire name such as `set_role`, `mute_peer`, `remove`, `set_topic`, `end_room`.
    public var action: String
    /// The identity acted upon, when there is one.
    public var target: String?
    /// Free text: the new role, the reason given, the new topic.
    public var detail: String?
}

/// Who a stored chat message was addressed to.
public enum ChatAudienceRecord: Sendable, Equatable {
    /// Everyone in the room.
    case everyone
    /// One peer, by identity.
    case peer(String)
    /// Everyone holding a role, by role name.
    case role(String)
}

/// A chat message as stored; the server filters by `audience` before sending history to a joiner.
public struct ChatRecord: Sendable, Equatable {
    /// Increasing with every message, across rooms; gives the order.
    public var id: Int64
    /// The room it was sent in.
    public var room: String
    /// When the server accepted it (milliseconds since the Unix epoch).
    public var at: Int64
    /// The sender's identity.
    public var fromIdentity: String
    /// The sender's display name at the time.
    public var fromName: String
    /// Who it was for.
    public var audience: ChatAudienceRecord
    /// The message.
    public var text: String
}

/// A role an identity holds in a room, or held when it left: `at` is when it left (or, while it is in the room,
/// when it took the role).
public struct RoleRecord: Sendable, Equatable {
    public var identity: String
    public var role: String
    public var at: Int64
}

/// A pending invitation to speak: who was invited, by whom, and when (milliseconds since the Unix epoch).
public struct InvitationRecord: Sendable, Equatable {
    public var invitee: String
    public var inviter: String
    public var at: Int64
}

/// A raised hand: whose, and since when.
public struct HandRecord: Sendable, Equatable {
    public var identity: String
    public var raisedAt: Int64
}

/// What a server reads to bring a room back (`RoomDatabase.load`).
public struct StoredRoom: Sendable, Equatable {
    /// The room, or `nil` when it was never opened.
    public var record: RoomRecord?
    /// The latest chat messages, oldest first.
    public var chat: [ChatRecord]
    /// The roles of the peers who left recently, each with when it left.
    public var roles: [RoleRecord]
    /// The invitations to speak still pending, oldest first.
    public var invitations: [InvitationRecord]
    /// Whether the room shows in the lobby (every room does until its host unlists it).
    public var listed: Bool
    /// Whether people may raise hands in the room (on until a host or moderator turns it off).
    public var handsAllowed: Bool
    /// The peers someone else moved down, each with the role it was moved to (`at`: when), by identity.
    public var demotions: [RoleRecord]
    /// The raised hands, first raised first.
    public var hands: [HandRecord]
    /// Since when the room has had people in it, or nil when it was empty.
    public var liveSince: Int64? = nil
    /// The room's deadline (a handover due, or its end), if one waits.
    public var deadline: DeadlineRecord? = nil
}
