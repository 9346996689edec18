/// The client's connection as the screen reports it.
public enum ConnectionState: Sendable, Equatable {
    /// Waiting for the first snapshot.
    case connecting
    case connected
    /// Lost; the runtime is on its `attempt`-th try (from 1), the next at `retryAt` (0 when not known).
    case reconnecting(attempt: Int, retryAt: Timestamp = 0)
}

/// Why the room is over for this client.
public enum RoomEnding: Sendable, Equatable {
    case removed(reason: String, by: PeerID?)
    case ended(reason: String)
}

/// A pending invitation onto the stage: who sent it and when.
public struct Invitation: Sendable, Equatable {
    public var by: PeerID
    /// When it was sent, on the server's clock (milliseconds since the Unix epoch).
    public var at: Timestamp

    public init(by: PeerID, at: Timestamp) {
        self.by = by
        self.at = at
    }

    /// How long an invitation waits for an answer before it lapses, in milliseconds.
    public static let lifetime: Timestamp = 120_000
}

/// A room's recording while it goes on: who started it and since when. Whether a room is recorded is whether a
/// recorder is in it; everyone in the room is told.
public struct RecordingState: Sendable, Equatable {
    /// Who asked for the recording, or the recorder itself when it was started by hand; nil when not known.
    public var by: PeerID?
    /// When it started, on the server's clock (milliseconds since the Unix epoch).
    public var since: Timestamp

    public init(by: PeerID?, since: Timestamp) {
        self.by = by
        self.since = since
    }
}

/// A room whose last host left with no moderator to take over: it ends at `at` unless a host (or a moderator,
/// who then becomes host) arrives first. `host` and `name` are the last host who left.
public struct HostlessEnding: Sendable, Equatable {
    public var host: PeerID
    public var name: String
    /// When the room ends, on the server's clock (milliseconds since the Unix epoch).
    public var at: Timestamp

    public init(host: PeerID, name: String, at: Timestamp) {
        self.host = host
        self.name = name
        self.at = at
    }
}

/// Where a room streams live while it does: the names of the server's destinations it goes out to (in the
/// order the server gives) and since when it has streamed without a break. Everyone in the room is told.
public struct StreamingState: Sendable, Equatable {
    /// The destinations, by the names the server's operator gave them (never their addresses); never empty.
    public var to: [String]
    /// When the room began to stream (to the first of them), on the server's clock (ms since the epoch).
    public var since: Timestamp

    public init(to: [String], since: Timestamp) {
        self.to = to
        self.since = since
    }

    /// The longest destination name: 1 to 32 of `a-z`, `0-9` and `-`.
    public static let maxNameLength = 32
    /// The most destinations a server has.
    public static let maxDestinations = 64

    /// Whether `name` is a destination's name: 1 to 32 of `a-z`, `0-9` and `-`.
    public static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameLength
            && name.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
            }
    }
}

/// How the room's last recording ended: who stopped it (nil when nobody did: its recorder left or failed) and
/// why, when it stopped on a fault ("the recorder could not write: No space left on device").
public struct RecordingStop: Sendable, Equatable {
    public var by: PeerID?
    public var reason: String?
}

/// Why an event was ignored. Ignoring is always safe; the counters show how often it happens.
public enum IgnoreReason: String, Sendable, CaseIterable, Hashable {
    /// Same sequence number as the last applied event.
    case duplicate
    /// Older than the last applied event.
    case outOfOrder
    /// About a peer that is not in the room.
    case unknownPeer
    /// Names a role the table does not have.
    case unknownRole
    /// A peer joined who is already here.
    case alreadyPresent
    /// Would change nothing (hand already up, same role, ...).
    case noChange
    /// Arrived before the first snapshot.
    case beforeSnapshot
    /// Arrived after this client was removed or the room ended.
    case afterEnding
    /// Says this client left: only `removed` and `room_ended` end a session here (a connection the server no
    /// longer counts is closed by the server, and the client comes back).
    case aboutThisClient
}

/// How many events were ignored, by reason.
public struct IgnoredEvents: Sendable, Equatable {
    public private(set) var counts: [IgnoreReason: Int] = [:]
    public init() {}
    public init(_ counts: [IgnoreReason: Int]) { self.counts = counts.filter { $0.value != 0 } }

    public subscript(reason: IgnoreReason) -> Int { counts[reason, default: 0] }
    public var total: Int { counts.values.reduce(0, +) }

    mutating func count(_ reason: IgnoreReason) { counts[reason, default: 0] += 1 }
}

/// A room happening worth a line in the event pane.
public enum Activity: Sendable, Equatable {
    case joined(PeerID, name: String)
    case left(PeerID, name: String)
    case roleChanged(PeerID, name: String, to: RoleName, by: PeerID?)
    case muted(PeerID, name: String, by: PeerID)
    /// A peer declined this client's invitation to speak.
    case declinedInvitation(PeerID, name: String)
    /// A peer's invitation to speak was withdrawn.
    case withdrawnInvitation(PeerID, name: String, by: PeerID?)
    /// A peer's invitation to speak lapsed unanswered.
    case expiredInvitation(PeerID, name: String)
    case removed(PeerID, name: String, reason: String, by: PeerID?)
    case topicChanged(String, by: PeerID?)
    case ended(reason: String)
    /// The room was listed in the lobby, or taken out of it.
    case listingChanged(listed: Bool, by: PeerID?)
}

/// Everything the client knows about its room. Changed only by `reduce`.
public struct RoomState: Sendable, Equatable {
    /// How many chat messages are kept.
    public static let chatCapacity = 500
    /// How many activity lines are kept.
    public static let activityCapacity = 500
    /// The longest topic, in characters; longer ones are refused before sending and cut when received.
    public static let maxTopicLength = 200
    /// The longest reason for a removal or an ending that is shown.
    public static let maxReasonLength = 200

    public let roles: RoleTable
    public internal(set) var roomID = ""
    public internal(set) var topic = ""
    /// Whether the room shows in the lobby (its host decides; `/list`, `/unlist`).
    public internal(set) var listed = true
    /// This client's identity, known from the first snapshot on.
    public internal(set) var selfID: PeerID?
    public internal(set) var peers: [PeerID: Peer] = [:]
    public internal(set) var chat = BoundedHistory<ChatMessage>(capacity: RoomState.chatCapacity)
    public internal(set) var activity = BoundedHistory<Activity>(capacity: RoomState.activityCapacity)
    public internal(set) var connection = ConnectionState.connecting
    /// Set when this client was removed or the room ended; the room then accepts no more requests.
    public internal(set) var ending: RoomEnding?
    /// This client's own invitation to speak while it waits for an answer (the prompt); cleared once answered.
    public internal(set) var invitation: Invitation?
    /// Every pending invitation to speak in the room, by invitee (this client's own too, until the server says
    /// how it ended).
    public internal(set) var invitations: [PeerID: Invitation] = [:]
    /// The role this client may take back itself (it stepped down from it, and its token allows it).
    public internal(set) var stepUpRole: RoleName?
    /// The role this client's token gives, when the server said.
    public internal(set) var tokenRole: RoleName?
    /// Who last asked this client to mute, until it does.
    public internal(set) var muteRequestedBy: PeerID?
    /// The room's end because its last host left and no moderator could take over, unless a host returns: from
    /// `room_ending`, or from the snapshot of someone who joins meanwhile.
    public internal(set) var hostlessEnding: HostlessEnding?
    /// When the room ends because its last host left and no moderator could take over, unless a host returns.
    public var endsAt: Timestamp? { hostlessEnding?.at }
    /// Whether raising hands is on in the room, as the snapshot said and the last `hands_allowed` announced.
    public internal(set) var handsAllowed = true
    /// The last error the server reported.
    public internal(set) var lastError: ServerError?
    /// The sequence number of the last applied server event.
    public internal(set) var lastSeq: UInt64 = 0
    public internal(set) var ignoredEvents = IgnoredEvents()
    /// The last network quality the server sent for each peer it sends them for (everyone on stage, and this
    /// client; for moderators, the audience too). Peers without an entry are not measured yet.
    public internal(set) var quality: [PeerID: PeerQuality] = [:]
    /// The time of the last `.tick`, for waiting times.
    public internal(set) var now: Timestamp = 0
    /// The reactions shown beside names, until they expire (`ShownReactions.lifetime` after they arrived).
    public internal(set) var reactions = ShownReactions()
    /// The room's recording while one goes on; nil when the room is not recorded.
    public internal(set) var recording: RecordingState?
    /// Who stopped the last recording and why, when it stopped on a fault (`reason`); kept until another starts.
    public internal(set) var recordingStopped: RecordingStop?
    /// Where the room streams live while it does; nil when it does not.
    public internal(set) var streaming: StreamingState?
    /// The server's stream destinations, as told to this client when it may start a stream (else empty).
    public internal(set) var streamDestinations: [String] = []

    var sections = Sections()
    /// Peers whose level is above zero.
    var speaking: Set<PeerID> = []

    public init(roles: RoleTable) {
        self.roles = roles
    }

    /// Whether the first snapshot has arrived.
    public var hasJoined: Bool { selfID != nil }

    /// The reaction shown beside a person's name now, if any.
    public func reactionMark(of id: PeerID) -> Reaction? { reactions.mark(for: id, at: now) }

    /// This client's own peer, once joined.
    public var me: Peer? { selfID.flatMap { peers[$0] } }

    /// Hosts, moderators and speakers: by rank, then by when they came on stage, then id.
    public var stage: PeerSection<StageKey> { PeerSection(keys: sections.stage, peers: peers) }
    /// Off-stage peers with a hand up, first come first served.
    public var raisedHands: PeerSection<HandKey> { PeerSection(keys: sections.hands, peers: peers) }
    /// The first raised hand whose invitation to speak is not out yet: whom "invite next" invites.
    public var nextHandToInvite: Peer? { raisedHands.first(where: { invitations[$0.id] == nil }) }
    /// Everyone else, by lowercased name and id.
    public var audience: PeerSection<AudienceKey> { PeerSection(keys: sections.audience, peers: peers) }

    /// A peer's place in the raised-hand queue, from 1; `nil` when their hand is not in it.
    public func queuePosition(of id: PeerID) -> Int? {
        guard let peer = peers[id], case .hand(let key) = sections.placement(of: peer, roles: roles) else {
            return nil
        }
        return sections.hands.position(of: key).map { $0 + 1 }
    }

    /// How long a peer's hand has been up at `now`, in milliseconds.
    public func waitingTime(of id: PeerID, now: Timestamp) -> Int64? {
        peers[id]?.waitingTime(now: now)
    }

    /// The screen section a peer is shown in; nil for a recorder, which none shows.
    public func section(of id: PeerID) -> SectionName? {
        guard let peer = peers[id], peer.role != .recorder else { return nil }
        if roles.isOnStage(peer.role) { return .stage }
        return peer.handRaisedAt == nil ? .audience : .raisedHands
    }
}

/// The three parts of the room screen.
public enum SectionName: Sendable, Equatable {
    case stage, raisedHands, audience
}

/// An error the server reported.
public struct ServerError: Sendable, Equatable {
    public var code: String
    public var message: String
}
