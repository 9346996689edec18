import RoomCore
import RoomProtocol

/// A room's state on the server and the rules that change it: the one place that checks and then acts.
///
/// Pure and synchronous: the caller passes the time in, and every change comes back as an `Outcome` whose
/// events are already numbered (`seq`). Every request is checked first (the role table's rank and permission
/// rules, then the room's state) and acted on second; a refusal changes nothing. Media, connections and the
/// database only consume outcomes (see `LocalRooms`), so they never decide anything about a room.
public struct RoomAuthority: Sendable {
    /// How long a departed peer's role is kept for a reconnect.
    public static let reconnectGrace: Timestamp = 60_000
    /// How long an invitation to speak waits for an answer before it lapses.
    public static let invitationLifetime: Timestamp = Invitation.lifetime
    /// The default most peers in one room.
    public static let defaultMaxPeers = 10_000

    public let name: String
    public let roles: RoleTable
    public var maxPeers: Int
    public package(set) var topic: String
    public package(set) var ended: Bool
    /// The last sequence number given to an event.
    public package(set) var seq: Int64
    public package(set) var peers: [PeerID: Peer] = [:]
    /// The pending invitations to speak, by invitee: who sent each and when.
    public package(set) var invitations: [PeerID: Invitation] = [:]
    /// Pending invitations of peers whose connection dropped, given back if they return before they lapse.
    public package(set) var heldInvitations: [PeerID: Invitation] = [:]
    /// Peers whose role someone else lowered, with the role they were moved to: they may not step back up
    /// themselves, and they come back with no more than that role whatever token they bring and however long
    /// they were away, until someone raises them again (or the room ends). Kept as long as the room, like a
    /// removal, and saved with it.
    public package(set) var loweredByOthers: [PeerID: RoleName] = [:]
    /// The raised hands of peers whose connection dropped (or who were here when the server stopped), with when
    /// each went up: given back, in their place in the queue, to a peer back within the reconnect grace.
    public package(set) var heldHands: [PeerID: Timestamp] = [:]
    /// The last chat messages, oldest first.
    public package(set) var chat: [ChatMessage]
    /// Identities removed since the room was last opened.
    public package(set) var removedIdentities: Set<PeerID> = []
    /// Roles of peers who left recently, for reconnects.
    public package(set) var departed: [PeerID: (role: RoleName, at: Timestamp)]
    /// Join order, so snapshots list peers stably.
    package var order: [PeerID] = []
    /// Whether the room shows in the lobby; its host decides, and it is kept across restarts.
    public package(set) var listed: Bool
    /// When the room went live (its first person arrived); nil while it is empty or ended.
    public package(set) var liveSince: Timestamp?
    /// Who is on stage and whose hand is up, kept as people come and go so the listing never scans the room.
    package var tally = ListingTally()
    /// The listing lobby watchers were last told of; nil while the room is not in the list.
    package var reportedListing: RoomListing?
    /// The role each peer's token gave when it joined, kept while the peer is here or its role is kept for a
    /// return: a new connection with a lesser token must not keep what the greater one gave. It is also the most
    /// a present peer may take back itself after stepping down.
    package var tokenRoles: [PeerID: RoleName] = [:]
    /// How many departures are kept before old ones are pruned; doubles with what is kept, so a crowd leaving
    /// costs time linear in its size.
    package var departedPruneThreshold = 1024
    /// When the room, left without a host by one who dropped, hands the host role over if no host is back by
    /// then (see `handOver`); nil when no handover waits.
    public package(set) var handoverDue: Timestamp?
    /// Whether people may raise hands in the room; a host or moderator turns it off and on.
    public package(set) var handsAllowed = true
    /// When the room ends because its last host left and no moderator could take over, unless a host (or a
    /// moderator, who then becomes host) arrives first; nil when the room is not ending.
    public package(set) var endsAt: Timestamp?
    /// The last host who left (identity and name), for the announcement that the room is ending.
    public package(set) var lastHost: (id: PeerID, name: String)?
    /// The refusal of a raised hand while raising hands is off.
    public static let handsOff = "raising hands is turned off in this room; a host or moderator can turn it back on"
    /// How long a room without host or moderator goes on before it ends, unless the server says otherwise
    /// (`endingGrace`).
    public static let hostlessGrace: Timestamp = 120_000
    /// How long this room, left without host or moderator, goes on before it ends (`serve --hostless-grace`).
    public var endingGrace: Timestamp = RoomAuthority.hostlessGrace
    /// The ids of the requests that took effect, per identity: a repeat is not acted on again.
    package var applied = AppliedRequests()
    /// Each peer's network quality as last announced, and when.
    var qualitySent: [PeerID: SentQuality] = [:]
    /// Peers that were given the scores announced before they came.
    /// Each person's reaction rate and the reactions not announced yet. Ephemeral: not saved, not in a checkpoint.
    var reactions = ReactionGate()
    /// Each person's speaking time and turns since the room went live: not saved, but in a cluster's checkpoint.
    package var speaking = RoomSpeaking()
    var qualityTold: Set<PeerID> = []
    /// The room's recording while a recorder is in it: by whom (who asked, or the recorder) and since when.
    public package(set) var recording: RecordingState?
    /// The recorders in the room; the room is recorded while there is one.
    public package(set) var recorders: Set<PeerID> = []
    /// Why each recorder said it stops (`recorder_error`), for the `recording` event that says it stopped.
    var recorderReasons: [PeerID: String] = [:]
    /// The server's stream destinations (their names), which `start_stream` may name; set by the server.
    public var streamDestinations: [String] = []
    /// The destinations the room streams to, in the order they were started.
    public package(set) var streams: [String] = []
    /// Since when the room streams (to one destination or more without a break); nil while it does not.
    public package(set) var streamingSince: Timestamp?
    /// The recorders in the room that carry a stream, with its destination: in no list, no count, no recording.
    public package(set) var streamPeers: [PeerID: String] = [:]

    /// A room as loaded from the store (or new).
    public init(
        name: String, roles: RoleTable, topic: String = "", ended: Bool = false, seq: Int64 = 0,
        chat: [ChatMessage] = [],
        departed: [PeerID: (role: RoleName, at: Timestamp)] = [:], invitations: [PeerID: Invitation] = [:],
        demotions: [PeerID: RoleName] = [:], maxPeers: Int = RoomAuthority.defaultMaxPeers, listed: Bool = true,
        hands: [PeerID: Timestamp] = [:]
    ) {
        self.name = name
        self.roles = roles
        self.topic = topic
        self.ended = ended
        self.seq = seq
        self.chat = Array(chat.suffix(ControlLimits.chatHistory))
        self.departed = departed
        // Nobody is in a room just loaded: its invitations wait for their invitees to come back.
        self.heldInvitations = invitations
        self.loweredByOthers = demotions
        self.heldHands = hands
        self.maxPeers = maxPeers
        self.listed = listed
    }

    /// The role taken by `step_down`, a refused stage and a default: `audience`, or the lowest role off stage.
    var audienceRole: RoleName {
        if roles.contains(.audience) { return .audience }
        return roles.roles.last(where: { !$0.onStage })?.name ?? roles.roles.last?.name ?? .audience
    }

    /// The role an accepted invitation gives: `speaker`, or the lowest role on stage that may publish.
    var speakerRole: RoleName {
        if roles.contains(.speaker) { return .speaker }
        return roles.roles.last(where: { $0.onStage && $0.permissions.contains(.publishAudio) })?.name ?? .speaker
    }

    // MARK: Helpers
    mutating func next(_ event: WireEvent) -> ServerMessage {
        seq += 1
        return ServerMessage(event, seq: seq)
    }

    mutating func broadcast(_ event: WireEvent, into outcome: inout Outcome) {
        outcome.deliveries.append(Delivery(to: .everyone, next(event)))
    }

    func refusal(_ code: ErrorCode, _ message: String, id: RequestID?) -> Outcome {
        var outcome = Outcome()
        outcome.error = ServerMessage(.error(code: code, message: message, id: id), seq: nil)
        return outcome
    }

    /// A peer as snapshots and joins announce it, with its pending invitation.
    func announced(_ peer: Peer) -> AnnouncedPeer {
        AnnouncedPeer(peer, invitation: invitations[peer.id])
    }

    /// Whether a peer may be heard now: its role may publish and it is not muted. Unknown peers may not.
    public func mayPublish(_ id: PeerID) -> Bool {
        guard let peer = peers[id] else { return false }
        return roles.can(peer.role, .publishAudio) && !peer.muted
    }

    func gate(_ id: PeerID) -> GateChange {
        GateChange(id, open: mayPublish(id))
    }
}

/// A peer's network quality as last announced, and when.
struct SentQuality: Sendable, Equatable {
    var quality: PeerQuality
    var at: Timestamp
}
