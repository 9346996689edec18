import RoomCore
import RoomProtocol

/// Who receives a message.
public enum Recipients: Sendable, Equatable {
    case everyone
    case everyoneExcept(PeerID)
    case peer(PeerID)
    /// These peers, in this order (a chat to a role: its holders and the sender).
    case peers([PeerID])
}

/// A message for some of the room's connections.
public struct Delivery: Sendable, Equatable {
    public var to: Recipients
    public var message: ServerMessage

    public init(to: Recipients, _ message: ServerMessage) {
        self.to = to
        self.message = message
    }
}

/// A line of the moderation audit log: who did what to whom, when, and why.
public struct AuditEntry: Sendable, Equatable {
    public var at: Timestamp
    public var actor: PeerID
    /// The request's wire name (`set_role`, `remove`, …) or `reopen`.
    public var action: String
    public var target: PeerID?
    /// The new role, the topic, the reason: whatever the action carried.
    public var detail: String = ""
}

/// Why the room closes a connection.
public enum CloseReason: String, Sendable, Equatable {
    case left
    case roomEnded = "room_ended"
    case roomFull = "room_full"
    case replaced
    case removed

    /// The WebSocket close code (see `docs/protocol.md`).
    public var code: UInt16 {
        switch self {
        case .left: 1000
        case .roomEnded: 4009
        case .roomFull: 4010
        case .replaced: 4011
        case .removed: 4012
        }
    }
}

/// A change the persistence queue writes to the database.
public enum SavedChange: Sendable, Equatable {
    case topic(String)
    /// The room ended with this reason.
    case ended(reason: String)
    /// A host's join opened the ended room again.
    case reopened
    /// A chat message, with its sender's name at the time.
    case chat(ChatMessage)
    case audit(AuditEntry)
    /// A peer left: remember its role for a reconnect within the grace period.
    case departed(PeerID, role: RoleName, at: Timestamp)
    /// A peer in the room holds a role other than its token's (moved by a moderator, stepped down, accepted an
    /// invitation, or given back its role on return): kept so that a crash of the server does not lose it.
    case roleHeld(PeerID, role: RoleName, at: Timestamp)
    /// A removed peer's role is forgotten: it does not come back with it.
    case roleForgotten(PeerID)
    /// An invitation to speak is pending (sent, or given back to an invitee who returned).
    case invited(PeerID, by: PeerID, at: Timestamp)
    /// The invitee's invitation is answered, withdrawn or lapsed.
    case invitationEnded(PeerID)
    /// The host listed the room in the lobby, or took it out.
    case listed(Bool)
    /// Raising hands was turned on or off for the room.
    case handsAllowed(Bool)
    /// Someone else moved the peer down to this role: the most it comes back with, until someone raises it.
    case demoted(PeerID, role: RoleName, at: Timestamp)
    /// Someone raised the demoted peer again: its token's role counts again.
    case demotionEnded(PeerID)
    /// A peer's hand went up at this time, or (nil) is down for good: a hand stays up while its owner is away
    /// within the reconnect grace, so that a restart keeps the queue and its order.
    case hand(PeerID, raisedAt: Timestamp?)
    /// The room has had people in it since this time (the age the lobby shows), or (nil) is empty again. Saved
    /// on its own (`OutcomeCommitter.save`), never part of an outcome: nothing waits for it.
    case live(since: Timestamp?)
    /// The room's timed decision about its host (a handover due, or its end), or (nil) none waits any more: kept
    /// so that a restart of the server acts on it when it is due.
    case deadline(RoomDeadline?)
}

/// A room's timed decision about its host, as the store keeps it: the handover due once a dropped last host's
/// grace runs out, or the room's end when no moderator could take over, and the last host who left (named in the
/// `room_ending` announcement).
public struct RoomDeadline: Sendable, Equatable {
    public var handoverDue: Timestamp?
    public var endsAt: Timestamp?
    public var lastHost: PeerID?
    public var lastHostName: String?
}

/// A peer's publish gate, set again: whether its audio may be forwarded (its role may publish and it is not
/// muted).
public struct GateChange: Sendable, Equatable {
    public var peer: PeerID
    public var open: Bool

    public init(_ peer: PeerID, open: Bool) {
        self.peer = peer
        self.open = open
    }
}

/// What the room decided about one request or happening: everything that follows from it, so that whoever
/// carries it out (media, connections, the database) needs nothing else from the room. A refusal has only
/// `error` set.
///
/// It is carried out in a fixed order: `changes` are committed to the store first (nothing is announced before
/// it is durable), then `gates` (a demoted or muted speaker is cut off before anyone hears of it), then
/// `deliveries` in order, then `closes`.
public struct Outcome: Sendable, Equatable {
    /// Publish gates to set, for peers whose role or mute changed (and for a joiner).
    public var gates: [GateChange] = []
    public var deliveries: [Delivery] = []
    public var changes: [SavedChange] = []
    /// Connections to close after the deliveries are sent.
    public var closes: [(peer: PeerID, reason: CloseReason)] = []
    /// The refusal sent to the requester; when set, nothing else happened.
    public var error: ServerMessage?
    /// How the room's entry in the lobby's list changed, when it did (see `RoomDirectory`).
    public var listing: ListingChange?
    /// Invite links the room agreed to make; the server signs each and sends it to its requester alone.
    public var grants: [LinkGrant] = []
    /// Requests about the room's links (`list_links`, `revoke_link`), for the link registry of every node.
    public var linkRequests: [LinkRequest] = []
    /// Answers to newcomers waiting at the locked room's door, for the node that holds each of them.
    public var doorAnswers: [DoorAnswer] = []
    /// What the room asks of the recorder the server runs for it (`RecorderSupervisor`), on the node that owns it.
    public var recorderOrders: [RecorderOrder] = []
    /// What the room asks of the recorders the server runs for its streams (`StreamSupervisor`), on its owner.
    public var streamOrders: [StreamOrder] = []

    public init() {}

    public static func == (lhs: Outcome, rhs: Outcome) -> Bool {
        lhs.gates == rhs.gates && lhs.deliveries == rhs.deliveries && lhs.changes == rhs.changes
            && lhs.error == rhs.error && lhs.closes.map(\.peer) == rhs.closes.map(\.peer)
            && lhs.closes.map(\.reason) == rhs.closes.map(\.reason) && lhs.listing == rhs.listing
            && lhs.grants == rhs.grants && lhs.linkRequests == rhs.linkRequests
            && lhs.doorAnswers == rhs.doorAnswers && lhs.recorderOrders == rhs.recorderOrders
            && lhs.streamOrders == rhs.streamOrders
    }
}

/// What a room asks of the recorder the server runs for it.
public enum RecorderOrder: Sendable, Equatable {
    /// Run a recorder for the room: `by` asked for the recording.
    case start(by: PeerID)
    /// Stop it: `by` asked, or nobody did (nil: the room ended).
    case stop(by: PeerID?)
}

/// What a room asks of the recorders that carry its streams.
public enum StreamOrder: Sendable, Equatable {
    /// Stream the room to the server's destination of that name: `by` asked.
    case start(String, by: PeerID)
    /// Stop streaming there: `by` asked, or nobody did (nil: it stopped on a fault).
    case stop(String, by: PeerID?)
    /// Stop every stream of the room: it ended.
    case stopAll
}

/// What a join attempt led to.
public enum JoinResult: Sendable, Equatable {
    /// The peer is in: `snapshot` goes to the joiner, `outcome` to the others.
    case joined(snapshot: ServerMessage, outcome: Outcome, replaced: Bool)
    /// The room refuses the join; the connection is closed with this reason.
    case refused(CloseReason)
}
