/// The position of an entry in a room's event stream: the Redis stream ID `<seq>-<part>`, where `seq` is the
/// room's sequence number. Entries are ordered by (seq, part).
public struct EntryID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var seq: UInt64
    public var part: UInt64

    /// Before the first entry.
    public static let zero = EntryID(seq: 0, part: 0)

    public init(seq: UInt64, part: UInt64 = 0) {
        self.seq = seq
        self.part = part
    }

    /// Parses `<seq>-<part>`.
    public init?(_ text: String) {
        let pieces = text.split(separator: "-", omittingEmptySubsequences: false)
        guard pieces.count == 2, let seq = UInt64(pieces[0]), let part = UInt64(pieces[1]) else { return nil }
        self.init(seq: seq, part: part)
    }

    public var description: String { "\(seq)-\(part)" }

    public static func < (a: EntryID, b: EntryID) -> Bool { (a.seq, a.part) < (b.seq, b.part) }
}

/// Who owns a room and under which epoch: the fencing token every append carries. `node|incarnation|epoch`
/// in Redis.
public struct LeaseToken: Sendable, Hashable, CustomStringConvertible {
    public var node: String
    public var incarnation: UInt64
    public var epoch: UInt64

    public var description: String { "\(node)|\(incarnation)|\(epoch)" }
}

extension LeaseToken {
    /// Reads a token as `description` writes it (`node|incarnation|epoch`).
    init?(_ text: String) {
        let pieces = text.split(separator: "|")
        guard pieces.count == 3, let incarnation = UInt64(pieces[1]), let epoch = UInt64(pieces[2]) else {
            return nil
        }
        self.init(node: String(pieces[0]), incarnation: incarnation, epoch: epoch)
    }
}

/// A change to a room's shared state, written in the same atomic step as the entry that announces it, so the
/// state in Redis always matches the last entry. Values are opaque bytes (the server's encoding).
public enum StateOperation: Sendable, Equatable {
    /// Sets one peer's record.
    case setPeer(String, [UInt8])
    case removePeer(String)
    /// Removes every peer (a reset entry starts from nothing).
    case removeAllPeers
    /// Sets a room field (topic, ended, invitations...); `lastId`, `lastAt` and `reqCursor` are the store's own.
    case setMeta(String, [UInt8])
    case removeMeta(String)
    /// Adds a chat message; the oldest beyond the room's chat length are dropped.
    case appendChat([UInt8])
    case removeAllChat
    /// Adds an audit record; the oldest beyond the audit length are dropped.
    case appendAudit([UInt8])
    /// Bans an identity from every room of the cluster: `cr:bans` holds its record (the server's, sealed).
    case setBan(String, [UInt8])
    /// Lifts an identity's ban, at Unix second `at` (kept in `cr:lifts`).
    case liftBan(String, at: Int64)

    /// Meta fields the store writes itself.
    public static let reservedMetaFields: Set<String> = ["lastId", "lastAt", "reqCursor"]

    var arguments: [[UInt8]] {
        switch self {
        case .setPeer(let peer, let value): [Array("peer".utf8), Array(peer.utf8), value]
        case .removePeer(let peer): [Array("unpeer".utf8), Array(peer.utf8), []]
        case .removeAllPeers: [Array("nopeers".utf8), [], []]
        case .setMeta(let field, let value): [Array("meta".utf8), Array(field.utf8), value]
        case .removeMeta(let field): [Array("unmeta".utf8), Array(field.utf8), []]
        case .appendChat(let value): [Array("chat".utf8), [], value]
        case .removeAllChat: [Array("nochat".utf8), [], []]
        case .appendAudit(let value): [Array("audit".utf8), [], value]
        case .setBan(let identity, let value): [Array("ban".utf8), Array(identity.utf8), value]
        case .liftBan(let identity, let at): [Array("unban".utf8), Array(identity.utf8), Array(String(at).utf8)]
        }
    }
}

/// What an entry is: an ordinary outcome, or a reset that replaces the room's state (after Redis lost it).
public enum EntryKind: String, Sendable, Equatable {
    case outcome
    case reset
}

/// One entry of a room's event stream.
public struct RoomEntry: Sendable, Equatable {
    public var id: EntryID
    /// The entry before it: readers that did not see `prev` last have missed something and resynchronise.
    public var prev: EntryID
    /// The request this entry answers ("" when none), so a request is seen to take effect once.
    public var requestID: String
    /// The epoch of the owner that wrote it.
    public var epoch: UInt64
    public var kind: EntryKind
    /// The outcome as the server encodes it.
    public var body: [UInt8]

    public init(
        id: EntryID, prev: EntryID, requestID: String = "", epoch: UInt64 = 0, kind: EntryKind = .outcome,
        body: [UInt8]
    ) {
        self.id = id
        self.prev = prev
        self.requestID = requestID
        self.epoch = epoch
        self.kind = kind
        self.body = body
    }
}

/// What came of an append.
public enum AppendResult: Sendable, Equatable {
    /// Written.
    case appended(EntryID)
    /// An entry with this ID was written before (a retry after a lost reply): nothing changed.
    case duplicate(EntryID)
    /// The token is no longer the room's owner: the write was refused. `owner` is who holds it now, if anyone.
    case fenced(owner: LeaseToken?)
    /// `prev` is not the last entry: the writer's view is behind (or ahead); it must resynchronise.
    case gap(last: EntryID)
}

/// What came of trying to own a room.
public enum AcquireResult: Sendable, Equatable {
    case acquired(LeaseToken)
    /// Another node holds it for about `remainingMilliseconds` more unless renewed.
    case held(by: LeaseToken, remainingMilliseconds: Int)
}

/// A node as the cluster knows it.
public struct NodeRecord: Sendable, Hashable {
    public var name: String
    /// Random per process start: a restarted node is a new incarnation, with new relay keys.
    public var incarnation: UInt64
    /// A small number unique among live nodes, carried in SSRCs so that they cannot collide across nodes.
    public var slot: Int
    /// Where clients send media to this node.
    public var mediaAddress: String
    /// Where other nodes relay media to this node.
    public var relayAddress: String
}

/// A room's shared state as stored: its fields, its peers and its chat tail, read in one atomic step together
/// with the last entry's ID, so that reading the stream after `lastID` continues it exactly.
public struct RoomSnapshot: Sendable, Equatable {
    public var meta: [String: [UInt8]]
    public var peers: [String: [UInt8]]
    public var chat: [[UInt8]]
    public var lastID: EntryID
    /// The last request whose outcome was written: the owner reads requests after it.
    public var requestCursor: String
    /// The time of the last entry (ms since the epoch, by its writer's clock).
    public var lastAt: Int64

    public init(
        meta: [String: [UInt8]] = [:], peers: [String: [UInt8]] = [:], chat: [[UInt8]] = [], lastID: EntryID = .zero,
        requestCursor: String = "0-0", lastAt: Int64 = 0
    ) {
        self.meta = meta
        self.peers = peers
        self.chat = chat
        self.lastID = lastID
        self.requestCursor = requestCursor
        self.lastAt = lastAt
    }

    /// The operations that write this state from nothing (for a reset entry).
    public var operations: [StateOperation] {
        var operations: [StateOperation] = [.removeAllPeers, .removeAllChat]
        for (field, value) in meta.sorted(by: { $0.key < $1.key }) { operations.append(.setMeta(field, value)) }
        for (peer, value) in peers.sorted(by: { $0.key < $1.key }) { operations.append(.setPeer(peer, value)) }
        for message in chat { operations.append(.appendChat(message)) }
        return operations
    }
}

/// A request an edge node queued for a room's owner.
public struct RoomRequest: Sendable, Equatable {
    /// The stream ID Redis gave it: the owner's cursor.
    public var id: String
    /// The node that queued it (whose client asked).
    public var node: String
    public var body: [UInt8]
}

/// How long each room keeps its history in Redis.
public struct RetentionLimits: Sendable, Equatable {
    /// Entries kept in a room's stream (approximately: Redis trims whole nodes of the stream).
    public var entries: Int
    public var chat: Int
    public var audit: Int

    public init(entries: Int = 10_000, chat: Int = 200, audit: Int = 1_000) {
        self.entries = entries
        self.chat = chat
        self.audit = audit
    }
}
