import Foundation
import RedisClient

/// How often a node talks to Redis and how long it trusts what it heard. The defaults are the production
/// timings of docs/cluster.md; tests shorten them.
public struct ClusterTiming: Sendable, Equatable {
    /// How long a room's lease lasts unless renewed.
    public var leaseMilliseconds = 5000
    /// How long after the send time of its last acknowledged renewal a node stops acting as a room's owner,
    /// measured on CLOCK_BOOTTIME (which keeps counting while the process is frozen or the machine sleeps).
    public var selfFenceMilliseconds = 4000
    /// How often the node refreshes its registration, renews its leases and checks the rooms it watches.
    public var tickMilliseconds = 1000
    /// How long a node's registration lasts unless refreshed.
    public var nodeTTLMilliseconds = 5000
    /// Longest random wait before trying to take a room whose owner is gone (so nodes do not all try at once).
    public var acquireJitterMilliseconds = 300
    /// After Redis comes back, how long nodes that did not own a room wait before taking it, so that its
    /// former owner, which holds its latest state, takes it back first.
    public var formerOwnerHeadStartMilliseconds = 2000
    /// How long a request may wait for Redis before it is answered "unavailable".
    public var requestDeadlineMilliseconds = 5000
    /// Longest wait for one Redis reply.
    public var commandTimeoutMilliseconds = 1000
    /// How long a follower's blocking read waits for new entries before asking again.
    public var readBlockMilliseconds = 500

    public init() {}
}

/// Who this node is and where its Redis is.
public struct ClusterConfiguration: Sendable {
    public var redis: RedisEndpoint
    public var node: String
    /// Random per process start unless given.
    public var incarnation: UInt64
    public var mediaAddress: String
    public var relayAddress: String
    /// The local address Redis connections come from (the node's own address).
    public var sourceAddress: String?
    public var timing: ClusterTiming
    public var retention: RetentionLimits

    public init(
        redis: RedisEndpoint, node: String, incarnation: UInt64 = UInt64.random(in: 1...UInt64(Int64.max)),
        mediaAddress: String, relayAddress: String, sourceAddress: String? = nil,
        timing: ClusterTiming = ClusterTiming(),
        retention: RetentionLimits = RetentionLimits()
    ) {
        self.redis = redis
        self.node = node
        self.incarnation = incarnation
        self.mediaAddress = mediaAddress
        self.relayAddress = relayAddress
        self.sourceAddress = sourceAddress
        self.timing = timing
        self.retention = retention
    }
}

/// What a node tells its runtime, on the runtime's thread (through `deliver`).
public enum ClusterNotice: Sendable, Equatable {
    /// This node now owns the room. With `reseed`, Redis lost the room's state (it restarted empty) and the
    /// runtime writes it again from its own copy with a reset entry (`ClusterNode.reseed`).
    case becameOwner(room: String, token: LeaseToken, reseed: Bool)
    /// This node must stop acting as the room's owner: its renewal was refused (`fenced`), or it heard no
    /// acknowledgement in time (`selfFenced`: Redis unreachable, or this process was frozen).
    case lostOwnership(room: String, token: LeaseToken, fenced: Bool)
    /// A node registered (or came back as a new incarnation).
    case nodeJoined(NodeRecord)
    /// A node's registration expired or was replaced by a new incarnation: its peers are gone.
    case nodeLeft(NodeRecord)
    /// Redis stopped answering; requests fail "unavailable" until it returns. Media is not affected.
    case redisUnavailable(String)
    case redisAvailable
    /// Redis came back without its data (its generation changed). Rooms this node owned are taken again and
    /// reported with `becameOwner(reseed: true)`.
    case redisLostData
    /// New entries of a followed room, in order, continuing the chain from where the follower was.
    case entries(room: String, [RoomEntry])
    /// A followed room's chain broke (entries trimmed, or reset by another owner): read its snapshot and
    /// follow again from the snapshot's last ID.
    case resync(room: String)
    /// Requests queued for a room this node serves as owner, in order.
    case requests(room: String, [RoomRequest])
    /// What the other live nodes say of the rooms they own, for the lobby (`publishLobby`): every node's
    /// records, sent whenever one of them changed or a node came or went.
    case lobby([LobbyRecords])
    /// The cluster's bans as Redis holds them, read at start, whenever they changed (on the tick), and when the
    /// runtime asks (`refreshBans`).
    case bans(ClusterBans)
}
