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
    public var detail: String

    public init(at: Timestamp, actor: PeerID, action: String, target: PeerID? = nil, detail: String = "") {
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target
        self.detail = detail
    }
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

    public init() {}

    public static func == (lhs: Outcome, rhs: Outcome) -> Bool {
        lhs.gates == rhs.gates && lhs.deliveries == rhs.deliveries && lhs.changes == rhs.changes
            && lhs.error == rhs.error && lhs.closes.map(\.peer) == rhs.closes.map(\.peer)
            && lhs.closes.map(\.reason) == rhs.closes.map(\.reason) && lhs.listing == rhs.listing
            && lhs.grants == rhs.grants && lhs.linkRequests == rhs.linkRequests
            && lhs.doorAnswers == rhs.doorAnswers
    }
}

/// What a join attempt led to.
public enum JoinResult: Sendable, Equatable {
    /// The peer is in: `snapshot` goes to the joiner, `outcome` to the others.
    case joined(snapshot: ServerMessage, outcome: Outcome, replaced: Bool)
    /// The room refuses the join; the connection is closed with this reason.
    case refused(CloseReason)
}

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
    public internal(set) var topic: String
    public internal(set) var ended: Bool
    /// The last sequence number given to an event.
    public package(set) var seq: Int64
    public internal(set) var peers: [PeerID: Peer] = [:]
    /// The pending invitations to speak, by invitee: who sent each and when.
    public internal(set) var invitations: [PeerID: Invitation] = [:]
    /// Pending invitations of peers whose connection dropped, given back if they return before they lapse.
    public internal(set) var heldInvitations: [PeerID: Invitation] = [:]
    /// Peers whose role someone else lowered, with the role they were moved to: they may not step back up
    /// themselves, and they come back with no more than that role whatever token they bring and however long
    /// they were away, until someone raises them again (or the room ends). Kept as long as the room, like a
    /// removal, and saved with it.
    public internal(set) var loweredByOthers: [PeerID: RoleName] = [:]
    /// The raised hands of peers whose connection dropped (or who were here when the server stopped), with when
    /// each went up: given back, in their place in the queue, to a peer back within the reconnect grace.
    public internal(set) var heldHands: [PeerID: Timestamp] = [:]
    /// The last chat messages, oldest first.
    public internal(set) var chat: [ChatMessage]
    /// Identities removed since the room was last opened.
    public internal(set) var removedIdentities: Set<PeerID> = []
    /// Roles of peers who left recently, for reconnects.
    public internal(set) var departed: [PeerID: (role: RoleName, at: Timestamp)]
    /// Join order, so snapshots list peers stably.
    package var order: [PeerID] = []
    /// Whether the room shows in the lobby; its host decides, and it is kept across restarts.
    public internal(set) var listed: Bool
    /// When the room went live (its first person arrived); nil while it is empty or ended.
    public internal(set) var liveSince: Timestamp?
    /// Who is on stage and whose hand is up, kept as people come and go so the listing never scans the room.
    var tally = ListingTally()
    /// The listing lobby watchers were last told of; nil while the room is not in the list.
    package var reportedListing: RoomListing?
    /// The role each peer's token gave when it joined, kept while the peer is here or its role is kept for a
    /// return: a new connection with a lesser token must not keep what the greater one gave. It is also the most
    /// a present peer may take back itself after stepping down.
    var tokenRoles: [PeerID: RoleName] = [:]
    /// How many departures are kept before old ones are pruned; doubles with what is kept, so a crowd leaving
    /// costs time linear in its size.
    var departedPruneThreshold = 1024
    /// When the room, left without a host by one who dropped, hands the host role over if no host is back by
    /// then (see `handOver`); nil when no handover waits.
    public internal(set) var handoverDue: Timestamp?
    /// Whether people may raise hands in the room; a host or moderator turns it off and on.
    public package(set) var handsAllowed = true
    /// When the room ends because its last host left and no moderator could take over, unless a host (or a
    /// moderator, who then becomes host) arrives first; nil when the room is not ending.
    public internal(set) var endsAt: Timestamp?
    /// The last host who left (identity and name), for the announcement that the room is ending.
    public internal(set) var lastHost: (id: PeerID, name: String)?
    /// The refusal of a raised hand while raising hands is off.
    public static let handsOff = "raising hands is turned off in this room; a host or moderator can turn it back on"
    /// How long a room without host or moderator goes on before it ends.
    public static let hostlessGrace: Timestamp = 120_000
    /// The ids of the requests that took effect, per identity: a repeat is not acted on again.
    package var applied = AppliedRequests()
    /// Each peer's network quality as last announced, and when.
    var qualitySent: [PeerID: SentQuality] = [:]
    /// Peers that were given the scores announced before they came.
    /// Each person's reaction rate and the reactions not announced yet. Ephemeral: not saved, not in a checkpoint.
    var reactions = ReactionGate()
    var qualityTold: Set<PeerID> = []

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

    // MARK: Joining and leaving

    /// A peer with a verified token joins. `role` is the token's role, which must be in the table. A peer who
    /// left less than 60 s ago (by `departed`, which a room loaded after a restart gets from the store) gets its
    /// role back.
    public mutating func join(
        id: PeerID, name rawName: String, role tokenRole: RoleName, now: Timestamp
    ) -> JoinResult {
        let result = admit(id: id, name: rawName, role: tokenRole, now: now)
        guard case .joined(let snapshot, var outcome, let replaced) = result else { return result }
        reportListing(into: &outcome, now: now)
        return .joined(snapshot: snapshot, outcome: outcome, replaced: replaced)
    }

    mutating func admit(id: PeerID, name rawName: String, role tokenRole: RoleName, now: Timestamp) -> JoinResult {
        if var present = peers[id] {
            var outcome = Outcome()
            let kept = roleKept(present.role, of: id, previousToken: tokenRoles[id], newToken: tokenRole)
            tokenRoles[id] = higherRole(tokenRoles[id], tokenRole)
            if kept != present.role {
                // Told to the others only: the new connection learns its role from its snapshot.
                present.role = kept
                outcome.deliveries.append(
                    Delivery(to: .everyoneExcept(id), next(.roleChanged(peer: id, role: kept, by: id, stepUp: nil))))
                if !present.muted && !roles.can(kept, .publishAudio) {
                    present.muted = true
                    outcome.deliveries.append(
                        Delivery(to: .everyoneExcept(id), next(.muteChanged(peer: id, muted: true, by: id))))
                }
                // Raised onto the stage by a higher link: the hand has what it asked for.
                if present.handRaisedAt != nil, roles.isOnStage(kept) {
                    present.handRaisedAt = nil
                    outcome.deliveries.append(
                        Delivery(to: .everyoneExcept(id), next(.handLowered(peer: id, by: id))))
                    outcome.changes.append(.hand(id, raisedAt: nil))
                }
                peers[id] = present
                outcome.changes.append(.roleHeld(id, role: kept, at: now))
            }
            outcome.gates.append(gate(present.id))
            return .joined(snapshot: snapshot(for: present.id, resumed: true), outcome: outcome, replaced: true)
        }
        if removedIdentities.contains(id) { return .refused(.removed) }
        let invitationsBefore = standingInvitations
        var outcome = Outcome()
        if ended {
            guard roles.can(tokenRole, .endRoom) else { return .refused(.roomEnded) }
            ended = false
            removedIdentities = []
            outcome.changes.append(.reopened)
            outcome.changes.append(.audit(AuditEntry(at: now, actor: id, action: "reopen")))
        }
        guard peers.count < maxPeers else { return .refused(.roomFull) }
        var role = tokenRole
        var resumed = false
        if let previous = departed.removeValue(forKey: id), now - previous.at <= Self.reconnectGrace,
            roles.contains(previous.role)
        {
            role = roleKept(previous.role, of: id, previousToken: tokenRoles[id], newToken: tokenRole)
            resumed = true
        }
        // Someone else's demotion outlasts the reconnect grace: whatever the token, no more than that role.
        if let cap = loweredByOthers[id], roles.contains(cap), roles.rank(of: role) < roles.rank(of: cap) {
            role = cap
        }
        tokenRoles[id] = resumed ? higherRole(tokenRoles[id], tokenRole) : tokenRole
        if role != tokenRole { outcome.changes.append(.roleHeld(id, role: role, at: now)) }
        let sanitized = DisplayName.sanitize(rawName)
        var peer = Peer(
            id: id, name: sanitized.isEmpty ? id.rawValue : sanitized, role: role, muted: true, joinedAt: now)
        // Back within the grace (or after a restart of the server), a raised hand is up again with its first
        // time, so the queue keeps its order; otherwise it is down for good.
        if let held = heldHands.removeValue(forKey: id) {
            if resumed, roles.can(role, .raiseHand), !roles.isOnStage(role) {
                peer.handRaisedAt = held
            } else {
                outcome.changes.append(.hand(id, raisedAt: nil))
            }
        }
        peers[id] = peer
        order.append(id)
        if role == .host { handoverDue = nil }
        // Back from a dropped connection (or a restart of the server) before the invitation lapsed: it still
        // stands (it is the room's, so its sender need not be here).
        if let held = heldInvitations.removeValue(forKey: id), now - held.at < Self.invitationLifetime,
            !roles.isOnStage(role)
        {
            invitations[id] = held
        }
        outcome.gates.append(gate(id))
        outcome.deliveries.append(Delivery(to: .everyoneExcept(id), next(.peerJoined(announced(peer)))))
        outcome.changes += invitationChanges(since: invitationsBefore)
        if endsAt != nil, role == .host || role == .moderator { goOn(with: id, now: now, into: &outcome) }
        return .joined(snapshot: snapshot(for: id, resumed: resumed), outcome: outcome, replaced: false)
    }

    /// The role a peer holding `role` keeps when the same identity comes back (or opens a second connection)
    /// with a link or token for `newToken`: its place is its own, so a lesser link (a lobby link after a host
    /// link, a second terminal) takes nothing away. A link higher than the one the peer came with raises it to the
    /// link's role, unless someone else moved the peer down (that stands until someone raises them again); a link
    /// no higher than before leaves a role the peer stepped down from itself where it is. When the old link is not
    /// known (a room loaded after a restart), the role is kept as it was: the room cannot tell a step down from a
    /// lower link.
    func roleKept(_ role: RoleName, of id: PeerID, previousToken: RoleName?, newToken: RoleName) -> RoleName {
        guard roles.rank(of: newToken) < roles.rank(of: role), loweredByOthers[id] == nil,
            let previousToken, roles.rank(of: newToken) < roles.rank(of: previousToken)
        else { return role }
        return newToken
    }

    /// The higher of two links' roles (the one known when the other is not).
    func higherRole(_ one: RoleName?, _ other: RoleName) -> RoleName {
        guard let one else { return other }
        return roles.rank(of: one) <= roles.rank(of: other) ? one : other
    }

    /// A peer's connection went away: it asked to (`left`) or dropped (`disconnected`).
    public mutating func leave(_ id: PeerID, reason: LeaveReason, now: Timestamp) -> Outcome {
        leave([Departure(id, reason)], now: now)
    }

    /// Peers' connections went away together (a crowd timing out at once): one announcement for all of them,
    /// `peers_left` when there are several, and one pass over the room, so the cost is linear in the room
    /// however many leave. Peers not in the room are skipped.
    public mutating func leave(_ departures: [Departure], now: Timestamp) -> Outcome {
        var outcome = depart(departures, now: now)
        reportListing(into: &outcome, now: now)
        return outcome
    }

    mutating func depart(_ departures: [Departure], now: Timestamp) -> Outcome {
        let invitationsBefore = standingInvitations
        var outcome = Outcome()
        var gone: [Departure] = []
        var hostsGone: [(peer: Peer, reason: LeaveReason)] = []
        for departure in departures {
            let id = departure.peer
            guard let peer = peers.removeValue(forKey: id) else { continue }
            if let inviter = invitations.removeValue(forKey: id), departure.reason == .disconnected {
                heldInvitations[id] = inviter
            }
            if departure.reason == .disconnected, let raised = peer.handRaisedAt {
                heldHands[id] = raised
            } else if peer.handRaisedAt != nil || heldHands.removeValue(forKey: id) != nil {
                outcome.changes.append(.hand(id, raisedAt: nil))
            }
            departed[id] = (peer.role, now)
            outcome.changes.append(.departed(id, role: peer.role, at: now))
            gone.append(departure)
            if peer.role == .host { hostsGone.append((peer, departure.reason)) }
        }
        guard let single = gone.first else { return outcome }
        if gone.count == 1 {
            order.removeAll { $0 == single.peer }
            outcome.deliveries.append(
                Delivery(to: .everyone, next(.peerLeft(peer: single.peer, reason: single.reason))))
        } else {
            let leaving = Set(gone.map(\.peer))
            order.removeAll { leaving.contains($0) }
            // One number per departure, as `peers_joined` does, so the room's numbering stays one per event.
            seq += Int64(gone.count)
            outcome.deliveries.append(Delivery(to: .everyone, ServerMessage(.peersLeft(gone), seq: seq)))
        }
        pruneDeparted(now: now)
        outcome.changes += invitationChanges(since: invitationsBefore)
        afterHostsLeft(hostsGone, now: now, into: &outcome)
        return outcome
    }

    mutating func pruneDeparted(now: Timestamp) {
        guard departed.count > departedPruneThreshold else { return }
        departed = departed.filter { now - $0.value.at <= Self.reconnectGrace }
        heldInvitations = heldInvitations.filter { departed[$0.key] != nil }
        heldHands = heldHands.filter { departed[$0.key] != nil }
        tokenRoles = tokenRoles.filter { peers[$0.key] != nil || departed[$0.key] != nil }
        departedPruneThreshold = max(1024, departed.count * 2)
    }

    /// The joined snapshot for one peer.
    public func snapshot(for id: PeerID, resumed: Bool) -> ServerMessage {
        let role = peers[id]?.role
        let visible = chat.filter { message in
            switch message.to {
            case .everyone: true
            case .peer(let to): to == id || message.from == id
            case .role(let to): role.map { roles.receives($0, messageTo: to) } ?? false || message.from == id
            }
        }
        var present = order.compactMap { peers[$0].map(announced) }
        if let index = present.firstIndex(where: { $0.peer.id == id }) { present[index].stepUp = stepUpRole(of: id) }
        let snapshot = JoinedSnapshot(
            room: name, selfID: id, peers: present, topic: topic, chat: visible, roles: roles, resumed: resumed,
            tokenRole: tokenRoles[id], listed: listed)
        return ServerMessage(.joined(snapshot), seq: seq)
    }

    // MARK: Requests

    /// Checks a request from a peer in the room, then acts on it.
    public mutating func handle(
        _ request: ClientRequest, from actorID: PeerID, id: RequestID? = nil, now: Timestamp
    )
        -> Outcome
    {
        let once = id != nil && AppliedRequests.isDeduplicated(request)
        if once, let id, let decided = applied.decision(id, from: actorID) {
            var outcome = Outcome()
            outcome.error = decided.refusal ?? AppliedRequests.repeated(id)
            return outcome
        }
        var outcome = decide(request, from: actorID, id: id, now: now)
        if outcome.error == nil {
            reportListing(into: &outcome, now: now)
        }
        if once, let id {
            applied.record(id, from: actorID, refusal: outcome.error) { peers[$0] != nil }
        }
        return outcome
    }

    mutating func decide(_ request: ClientRequest, from actorID: PeerID, id: RequestID?, now: Timestamp) -> Outcome {
        guard let actor = peers[actorID] else {
            return refusal(.notFound, "you are not in this room", id: id)
        }
        if ended { return refusal(.roomEnded, "the room has ended", id: id) }
        var target: Peer?
        if let targetID = request.target {
            guard let found = peers[targetID] else {
                return refusal(.notFound, "no one called \(targetID) is in the room", id: id)
            }
            target = found
        }
        if case .setRole(_, let role) = request, !roles.contains(role) {
            return refusal(.notFound, "there is no role called \(role)", id: id)
        }
        if case .chat(_, .role(let role)) = request, !roles.contains(role) {
            return refusal(.notFound, "there is no role called \(role)", id: id)
        }
        if let refused = roles.check(request, by: actor, target: target) {
            return refusal(.forbidden, refused.reason, id: id)
        }
        if let conflict = stateConflict(request, actor: actor, target: target) {
            return refusal(conflict.code, conflict.message, id: id)
        }
        return act(request, actor: actor, target: target, id: id, now: now)
    }

    /// The room's state checks, after the role table allowed a request.
    func stateConflict(_ request: ClientRequest, actor: Peer, target: Peer?) -> (code: ErrorCode, message: String)? {
        switch request {
        case .raiseHand:
            if roles.isOnStage(actor.role) { return (.conflict, "you are already on the stage") }
            if actor.handRaisedAt != nil { return (.conflict, "your hand is already raised") }
            if !handsAllowed { return (.conflict, Self.handsOff) }
        case .setHandsAllowed(let allowed):
            if allowed == handsAllowed {
                return (.conflict, allowed ? "raising hands is already on" : "raising hands is already off")
            }
        case .lowerHand:
            if actor.handRaisedAt == nil { return (.conflict, "your hand is not raised") }
        case .chat(_, .role(let role)):
            let read = peers.values.contains { $0.id != actor.id && roles.receives($0.role, messageTo: role) }
            if !read { return (.conflict, roles.nobodyReceives(messageTo: role)) }
        case .invite:
            guard let target else { return nil }
            if invitations[target.id] != nil { return (.conflict, "\(target.name) is already invited") }
        case .withdrawInvite:
            guard let target else { return nil }
            if invitations[target.id] == nil { return (.conflict, "\(target.name) has no pending invitation") }
        case .acceptInvite, .declineInvite:
            if invitations[actor.id] == nil { return (.conflict, "you have no pending invitation") }
        case .setRole(let id, let role) where id == actor.id && roles.rank(of: role) < roles.rank(of: actor.role):
            // Stepping back up: only to a role the token gives, and not after someone else lowered you.
            if loweredByOthers[actor.id] != nil {
                return (.forbidden, "someone else moved you down; a host or moderator can bring you back")
            }
            guard let limit = stepUpRole(of: actor.id), roles.rank(of: role) >= roles.rank(of: limit) else {
                let token = tokenRoles[actor.id].map { " (\($0))" } ?? ""
                return (.forbidden, "you cannot raise your own role above your token's\(token)")
            }
        case .mutePeer:
            guard let target else { return nil }
            if target.muted { return (.conflict, "\(target.name) is already muted") }
        case .lowerHandOf:
            guard let target else { return nil }
            if target.handRaisedAt == nil { return (.conflict, "\(target.name)'s hand is not raised") }
        case .clearHands:
            if roles.loweredByClearHands(actor, among: order.lazy.compactMap { self.peers[$0] }).isEmpty {
                return (.conflict, RoleTable.noHandsToLower)
            }
        case .muteAll:
            if roles.mutedByMuteAll(actor, among: order.lazy.compactMap { self.peers[$0] }).isEmpty {
                return (.conflict, RoleTable.nobodyToMute)
            }
        case .setListed(let flag):
            if flag == listed {
                return (.conflict, flag ? "the room is already listed in the lobby" : "the room is already unlisted")
            }
        case .chat(let text, _):
            if DisplayName.sanitizeLine(text, maxGraphemes: ControlLimits.maxChatCharacters).isEmpty {
                return (.badRequest, "a chat message cannot be empty")
            }
        case .setRole, .stepDown, .setMute, .setMicWorking, .setPlaying, .remove, .setTopic, .endRoom, .leave,
            .createLink, .listLinks, .revokeLink, .setLocked, .admitWaiting, .denyWaiting:
            break
        case .react:
            // The sender's rate depends on the time, so it is checked where the reaction is counted (`perform`),
            // and a refusal there changes nothing.
            break
        }
        return nil
    }

    mutating func act(
        _ request: ClientRequest, actor: Peer, target: Peer?, id requestID: RequestID?, now: Timestamp
    ) -> Outcome {
        let invitationsBefore = standingInvitations
        let demotionsBefore = loweredByOthers
        var outcome = perform(request, actor: actor, target: target, id: requestID, now: now)
        outcome.changes += invitationChanges(since: invitationsBefore)
        // Only a move by someone else and an accepted invitation change demotions.
        switch request {
        case .setRole, .acceptInvite: outcome.changes += demotionChanges(since: demotionsBefore, now: now)
        default: break
        }
        // Every hand that went up or down, whatever moved it, as the room announced it.
        for delivery in outcome.deliveries {
            switch delivery.message.event {
            case .handRaised(let peer, let at):
                // The hand's owner gets a place in the store too (as a role held does), so that after a crash the
                // room knows them as returning and gives the hand back.
                if let role = peers[peer]?.role { outcome.changes.append(.roleHeld(peer, role: role, at: at)) }
                outcome.changes.append(.hand(peer, raisedAt: at))
            case .handLowered(let peer, _): outcome.changes.append(.hand(peer, raisedAt: nil))
            default: continue
            }
        }
        return outcome
    }

    /// What a checked request does to the room (`act` adds the store's view of its invitations).
    private mutating func perform(
        _ request: ClientRequest, actor: Peer, target: Peer?, id requestID: RequestID?, now: Timestamp
    ) -> Outcome {
        var outcome = Outcome()
        let actorID = actor.id
        func audit(_ target: PeerID? = nil, _ detail: String = "") {
            outcome.changes.append(
                .audit(AuditEntry(at: now, actor: actorID, action: request.typeName, target: target, detail: detail)))
        }
        switch request {
        case .raiseHand:
            peers[actorID]?.handRaisedAt = now
            broadcast(.handRaised(peer: actorID, at: now), into: &outcome)
        case .setHandsAllowed(let allowed):
            handsAllowed = allowed
            broadcast(.handsAllowed(allowed: allowed, by: actorID), into: &outcome)
            outcome.changes.append(.handsAllowed(allowed))
            if !allowed {
                // Every raised hand goes down with it (clients lower them on `hands_allowed`), held ones too.
                let raised = Set(peers.values.filter { $0.handRaisedAt != nil }.map(\.id)).union(heldHands.keys)
                for id in raised.sorted() {
                    peers[id]?.handRaisedAt = nil
                    heldHands[id] = nil
                    tally.hands.remove(id)
                    outcome.changes.append(.hand(id, raisedAt: nil))
                }
            }
            audit(nil, allowed ? "on" : "off")
        case .lowerHand:
            peers[actorID]?.handRaisedAt = nil
            broadcast(.handLowered(peer: actorID, by: actorID), into: &outcome)
        case .invite(let targetID):
            invitations[targetID] = Invitation(by: actorID, at: now)
            broadcast(.invited(peer: targetID, by: actorID, at: now), into: &outcome)
            audit(targetID)
        case .withdrawInvite(let targetID):
            invitations[targetID] = nil
            broadcast(.inviteWithdrawn(peer: targetID, by: actorID), into: &outcome)
            audit(targetID)
        case .acceptInvite:
            let inviter = invitations.removeValue(forKey: actorID)
            // Invited back on stage by someone else: a demotion below the stage now stops at it.
            if let cap = loweredByOthers[actorID], roles.rank(of: speakerRole) < roles.rank(of: cap) {
                loweredByOthers[actorID] = speakerRole
            }
            changeRole(of: actorID, to: speakerRole, by: actorID, now: now, into: &outcome)
            audit(actorID, inviter.map { "invited by \($0.by)" } ?? "")
        case .declineInvite:
            let inviter = invitations.removeValue(forKey: actorID)
            broadcast(.inviteDeclined(peer: actorID, by: actorID), into: &outcome)
            // Saying no also takes the hand down: left up, it stays first in the queue and the next "invite next"
            // asks the same person again. They raise it again when they are ready.
            if actor.handRaisedAt != nil {
                peers[actorID]?.handRaisedAt = nil
                broadcast(.handLowered(peer: actorID, by: actorID), into: &outcome)
            }
            audit(actorID, inviter.map { "invited by \($0.by)" } ?? "")
        case .setRole(let targetID, let role):
            if targetID != actorID, let old = target?.role {
                // A demotion by someone else is kept; a promotion by someone else lifts it.
                if roles.rank(of: role) > roles.rank(of: old) {
                    loweredByOthers[targetID] = role
                } else {
                    loweredByOthers[targetID] = nil
                }
            }
            changeRole(of: targetID, to: role, by: actorID, now: now, into: &outcome)
            audit(targetID, role.rawValue)
        case .stepDown:
            changeRole(of: actorID, to: audienceRole, by: actorID, now: now, into: &outcome)
            audit(actorID, audienceRole.rawValue)
        case .setMute(let muted):
            guard actor.muted != muted else { return outcome }
            peers[actorID]?.muted = muted
            outcome.gates.append(gate(actorID))
            broadcast(.muteChanged(peer: actorID, muted: muted, by: actorID), into: &outcome)
        case .setMicWorking(let working):
            // Said by the client about its own microphone: not kept past the connection (a client that comes
            // back says it again), and a repeat changes nothing.
            guard actor.micWorking != working else { return outcome }
            peers[actorID]?.micWorking = working
            broadcast(.micChanged(peer: actorID, working: working), into: &outcome)
        case .lowerHandOf(let targetID):
            peers[targetID]?.handRaisedAt = nil
            broadcast(.handLowered(peer: targetID, by: actorID), into: &outcome)
            audit(targetID)
        case .clearHands:
            let targets = roles.loweredByClearHands(actor, among: order.compactMap { peers[$0] })
            for target in targets {
                peers[target.id]?.handRaisedAt = nil
                broadcast(.handLowered(peer: target.id, by: actorID), into: &outcome)
            }
            audit(nil, "\(targets.count) lowered")
        case .muteAll:
            // One request, one mute per person (as `mute_peer` would have said it), in the room's order.
            let targets = roles.mutedByMuteAll(actor, among: order.compactMap { peers[$0] })
            for target in targets {
                peers[target.id]?.muted = true
                outcome.gates.append(gate(target.id))
                broadcast(.muteChanged(peer: target.id, muted: true, by: actorID), into: &outcome)
                outcome.deliveries.append(
                    Delivery(to: .peer(target.id), next(.askedToMute(peer: target.id, by: actorID))))
            }
            audit(nil, "\(targets.count) muted")
        case .setPlaying(let playing):
            guard actor.playing != playing else { return outcome }
            peers[actorID]?.playing = playing
            broadcast(.playingChanged(peer: actorID, playing: playing), into: &outcome)
        case .mutePeer(let targetID):
            peers[targetID]?.muted = true
            outcome.gates.append(gate(targetID))
            broadcast(.muteChanged(peer: targetID, muted: true, by: actorID), into: &outcome)
            outcome.deliveries.append(
                Delivery(to: .peer(targetID), next(.askedToMute(peer: targetID, by: actorID))))
            audit(targetID)
        case .remove(let targetID, let reason, let withdrawLink):
            if withdrawLink {
                outcome.linkRequests.append(
                    LinkRequest(peer: actorID, room: name, revoke: nil, withdrawUsedBy: targetID, requestID: requestID))
            }
            let reason = DisplayName.sanitizeLine(reason ?? "", maxGraphemes: ControlLimits.maxReasonCharacters)
            broadcast(.removed(peer: targetID, by: actorID, reason: reason), into: &outcome)
            if target?.handRaisedAt != nil { outcome.changes.append(.hand(targetID, raisedAt: nil)) }
            peers[targetID] = nil
            order.removeAll { $0 == targetID }
            invitations[targetID] = nil
            removedIdentities.insert(targetID)
            outcome.closes.append((targetID, .removed))
            outcome.changes.append(.roleForgotten(targetID))
            audit(targetID, reason)
        case .setTopic(let text):
            topic = DisplayName.sanitizeLine(text, maxGraphemes: ControlLimits.maxTopicCharacters)
            broadcast(.topicChanged(topic: topic, by: actorID), into: &outcome)
            outcome.changes.append(.topic(topic))
            audit(nil, topic)
        case .endRoom(let reason):
            let reason = DisplayName.sanitizeLine(reason ?? "", maxGraphemes: ControlLimits.maxReasonCharacters)
            endRoom(by: actorID, reason: reason, into: &outcome)
            audit(nil, reason)
        case .chat(let text, let audience):
            let message = ChatMessage(
                from: actorID, fromName: actor.name,
                text: DisplayName.sanitizeLine(text, maxGraphemes: ControlLimits.maxChatCharacters), to: audience,
                sentAt: now)
            chat.append(message)
            if chat.count > ControlLimits.chatHistory { chat.removeFirst(chat.count - ControlLimits.chatHistory) }
            let recipients: Recipients
            switch audience {
            case .everyone: recipients = .everyone
            case .peer(let to): recipients = to == actorID ? .peer(actorID) : .peers([to, actorID])
            case .role(let role):
                var holders = order.filter { peers[$0].map { roles.receives($0.role, messageTo: role) } ?? false }
                if !holders.contains(actorID) { holders.append(actorID) }
                recipients = .peers(holders)
            }
            outcome.deliveries.append(Delivery(to: recipients, next(.chat(message))))
            outcome.changes.append(.chat(message))
        case .leave:
            var left = depart([Departure(actorID, .left)], now: now)
            left.closes.append((actorID, .left))
            return left
        case .setListed(let flag):
            listed = flag
            broadcast(.listingChanged(listed: flag, by: actorID), into: &outcome)
            outcome.changes.append(.listed(flag))
            audit(nil, flag ? "listed" : "unlisted")
        case .createLink(let role, let ttl, let maxUses):
            outcome.grants.append(
                LinkGrant(peer: actorID, room: name, role: role, ttl: ttl, maxUses: maxUses, requestID: requestID))
            audit(nil, "\(role.rawValue), \(ttl) s" + (maxUses.map { ", \($0) uses" } ?? ""))
        case .listLinks:
            outcome.linkRequests.append(LinkRequest(peer: actorID, room: name, revoke: nil, requestID: requestID))
        case .revokeLink(let link):
            outcome.linkRequests.append(LinkRequest(peer: actorID, room: name, revoke: link, requestID: requestID))
            audit(nil, link)
        case .setLocked(let locked):
            outcome.linkRequests.append(
                LinkRequest(peer: actorID, room: name, revoke: nil, lock: locked, requestID: requestID))
            audit(nil, locked ? "locked" : "unlocked")
        case .admitWaiting(let waiter):
            outcome.doorAnswers.append(
                DoorAnswer(peer: actorID, room: name, waiter: waiter, admit: true, requestID: requestID))
            audit(nil, waiter)
        case .denyWaiting(let waiter):
            outcome.doorAnswers.append(
                DoorAnswer(peer: actorID, room: name, waiter: waiter, admit: false, requestID: requestID))
            audit(nil, waiter)
        case .react(let reaction):
            // Checked and counted in one step: a refusal changes nothing but forgetting rates out of the window.
            if let refused = reactions.offer(reaction, from: actorID, at: now) {
                return refusal(.rateLimited, refused.message, id: requestID)
            }
            announceReactions(now: now, into: &outcome)
        }
        return outcome
    }

    /// Ends the room: everyone is told and their connections close; what it held of its members is forgotten.
    mutating func endRoom(by actor: PeerID, reason: String, into outcome: inout Outcome) {
        broadcast(.roomEnded(by: actor, reason: reason), into: &outcome)
        ended = true
        handoverDue = nil
        endsAt = nil
        lastHost = nil
        for id in order {
            outcome.closes.append((id, .roomEnded))
            departed[id] = nil
        }
        peers = [:]
        order = []
        invitations = [:]
        heldInvitations = [:]
        heldHands = [:]
        tokenRoles = [:]
        loweredByOthers = [:]
        outcome.changes.append(.ended(reason: reason))
    }

    /// Moves a peer to a role: its hand goes down (when it comes on stage) and its invitation is answered; it
    /// arrives muted. The role is recorded, so that a return after a crash of the server finds it.
    mutating func changeRole(
        of id: PeerID, to role: RoleName, by actor: PeerID, now: Timestamp, into outcome: inout Outcome
    ) {
        guard var peer = peers[id] else { return }
        let lowersHand = peer.handRaisedAt != nil && roles.isOnStage(role)
        if lowersHand { peer.handRaisedAt = nil }
        invitations[id] = nil
        peer.role = role
        peers[id] = peer
        if role == .host { handoverDue = nil }
        broadcast(.roleChanged(peer: id, role: role, by: actor, stepUp: stepUpRole(of: id)), into: &outcome)
        // After the role change, which lowers the hand already for a client: one move, one line.
        if lowersHand { broadcast(.handLowered(peer: id, by: actor), into: &outcome) }
        if !peer.muted {
            peer.muted = true
            broadcast(.muteChanged(peer: id, muted: true, by: actor), into: &outcome)
        }
        // A role that may not publish cannot play a file either; its client stops playing when it sees the role.
        if peer.playing && !roles.can(role, .publishAudio) {
            peer.playing = false
            broadcast(.playingChanged(peer: id, playing: false), into: &outcome)
        }
        peers[id] = peer
        outcome.gates.append(gate(id))
        outcome.changes.append(.roleHeld(id, role: role, at: now))
    }

    /// The role a peer may take back itself: its token's, when it stands below it now and nobody else lowered
    /// it there.
    public func stepUpRole(of id: PeerID) -> RoleName? {
        guard let peer = peers[id], let token = tokenRoles[id], roles.contains(token), loweredByOthers[id] == nil,
            roles.rank(of: token) < roles.rank(of: peer.role)
        else { return nil }
        return token
    }

    /// What the store must learn of the demotions a decision made or lifted.
    func demotionChanges(since before: [PeerID: RoleName], now: Timestamp) -> [SavedChange] {
        var changes: [SavedChange] = []
        for (id, role) in loweredByOthers.sorted(by: { $0.key < $1.key }) where before[id] != role {
            changes.append(.demoted(id, role: role, at: now))
        }
        for id in before.keys.sorted() where loweredByOthers[id] == nil {
            changes.append(.demotionEnded(id))
        }
        return changes
    }

    // MARK: Invitations

    /// Lets invitations older than `invitationLifetime` lapse: each is announced with `invite_expired` (and
    /// audited, with its sender as the actor). Held invitations of absent peers lapse silently.
    public mutating func expireInvitations(now: Timestamp) -> Outcome {
        let invitationsBefore = standingInvitations
        var outcome = Outcome()
        let lapsed = invitations.filter { now - $0.value.at >= Self.invitationLifetime }
            .sorted { ($0.value.at, $0.key) < ($1.value.at, $1.key) }
        for (invitee, invitation) in lapsed {
            invitations[invitee] = nil
            broadcast(.inviteExpired(peer: invitee), into: &outcome)
            outcome.changes.append(
                .audit(AuditEntry(at: now, actor: invitation.by, action: "invite_expired", target: invitee)))
        }
        heldInvitations = heldInvitations.filter { now - $0.value.at < Self.invitationLifetime }
        outcome.changes += invitationChanges(since: invitationsBefore)
        announceReactions(now: now, into: &outcome)
        if let due = handoverDue, due <= now { handOver(now: now, into: &outcome) }
        if let due = endsAt, due <= now {
            endRoom(by: PeerID(""), reason: "the last host left and none came back", into: &outcome)
            reportListing(into: &outcome, now: now)
        }
        return outcome
    }

    /// When the room next has timed work: an invitation to lapse or reactions held back to announce.
    public var nextTimedWork: Timestamp? {
        [nextInvitationExpiry, reactions.nextBurstAt].compactMap { $0 }.min()
    }

    // MARK: Reactions

    /// Announces the gathered reactions to everyone, unsequenced, when a burst is due (the first reaction after a
    /// quiet `ReactionGate.interval` goes out at once; the rest wait for the room's next timed work, at most a
    /// second later).
    mutating func announceReactions(now: Timestamp, into outcome: inout Outcome) {
        guard let burst = reactions.burst(at: now) else { return }
        outcome.deliveries.append(Delivery(to: .everyone, ServerMessage(.reaction(burst), seq: nil)))
    }

    /// Every invitation still standing: those of present peers and those held for peers who dropped.
    var standingInvitations: [PeerID: Invitation] {
        heldInvitations.merging(invitations) { _, present in present }
    }

    /// The store's changes that bring its invitations from `before` to those standing now, in invitee order.
    func invitationChanges(since before: [PeerID: Invitation]) -> [SavedChange] {
        let standing = standingInvitations
        guard standing != before else { return [] }
        var changes: [SavedChange] = []
        for (invitee, invitation) in standing.sorted(by: { $0.key.rawValue < $1.key.rawValue })
        where before[invitee] != invitation {
            changes.append(.invited(invitee, by: invitation.by, at: invitation.at))
        }
        for invitee in before.keys.sorted(by: { $0.rawValue < $1.rawValue }) where standing[invitee] == nil {
            changes.append(.invitationEnded(invitee))
        }
        return changes
    }

    /// When the next timed decision is due, if any: a pending invitation lapsing, or a host's handover.
    public var nextInvitationExpiry: Timestamp? {
        (invitations.values.map { $0.at + Self.invitationLifetime } + [handoverDue, endsAt].compactMap { $0 }).min()
    }

    // MARK: Host handover

    /// Hosts left (`reasons`, one per host): when none is present any more, the handover waits for the grace of
    /// those who dropped (they may come back), and happens at once when every host left on purpose.
    mutating func afterHostsLeft(
        _ hosts: [(peer: Peer, reason: LeaveReason)], now: Timestamp, into outcome: inout Outcome
    ) {
        guard let last = hosts.last, !ended, !hostPresent else { return }
        lastHost = (last.peer.id, last.peer.name)
        if hosts.contains(where: { $0.reason == .disconnected }) {
            handoverDue = max(handoverDue ?? now, now + Self.reconnectGrace)
        }
        if handoverDue == nil { handOver(now: now, into: &outcome) }
    }

    /// Whether a host is in the room.
    var hostPresent: Bool { peers.values.contains { $0.role == .host } }

    /// A room without a host: the moderator who has been in the room longest (join order) becomes host, which
    /// everyone is told as a role change made by the server itself (an empty `by`). Nothing changes when a host
    /// is back. The moderator keeps their microphone as it was. With no moderator present, the room is to end
    /// after `hostlessGrace`, which everyone is told.
    mutating func handOver(now: Timestamp, into outcome: inout Outcome) {
        handoverDue = nil
        guard !ended, roles.contains(.host), !hostPresent else { return }
        guard let heir = order.first(where: { peers[$0]?.role == .moderator }) else {
            guard endsAt == nil, !peers.isEmpty, let lastHost else { return }
            let deadline = now + Self.hostlessGrace
            endsAt = deadline
            broadcast(.roomEnding(peer: lastHost.id, name: lastHost.name, at: deadline), into: &outcome)
            return
        }
        promote(heir, now: now, into: &outcome)
    }

    /// A host, or a moderator who becomes host, arrived while the room was ending: it goes on, and everyone is
    /// told.
    mutating func goOn(with id: PeerID, now: Timestamp, into outcome: inout Outcome) {
        endsAt = nil
        lastHost = nil
        if peers[id]?.role == .moderator { promote(id, now: now, into: &outcome) }
        broadcast(.roomEnding(peer: id, name: peers[id]?.name ?? id.rawValue, at: nil), into: &outcome)
    }

    /// Makes a moderator host, as the server's own change.
    mutating func promote(_ heir: PeerID, now: Timestamp, into outcome: inout Outcome) {
        guard var peer = peers[heir] else { return }
        peer.role = .host
        peers[heir] = peer
        let server = PeerID("")
        broadcast(.roleChanged(peer: heir, role: .host, by: server, stepUp: stepUpRole(of: heir)), into: &outcome)
        outcome.gates.append(gate(heir))
        outcome.changes.append(.roleHeld(heir, role: .host, at: now))
        outcome.changes.append(.audit(AuditEntry(at: now, actor: server, action: "host_handover", target: heir)))
    }

    // MARK: Audio levels

    /// New audio levels (0–100) measured by the media path: stores them and announces, in one `speakers` event,
    /// those that changed for peers still in the room. Nothing is sent when nothing changed.
    public mutating func updateLevels(_ levels: [PeerID: Int]) -> Outcome {
        var changed: [SpeakerLevel] = []
        for id in order {
            guard let level = levels[id], var peer = peers[id] else { continue }
            let clamped = min(100, max(0, level))
            guard peer.level != clamped else { continue }
            peer.level = clamped
            peers[id] = peer
            changed.append(SpeakerLevel(peer: id, level: clamped))
        }
        var outcome = Outcome()
        if !changed.isEmpty { broadcast(.speakers(levels: changed), into: &outcome) }
        return outcome
    }

    // MARK: Network quality

    /// The least time between two `network_quality` announcements of one peer's score.
    public static let qualityInterval: Timestamp = 2000

    /// Network quality measured by the media path (about every second, for each peer measured). A peer's score is
    /// announced only when it changed, and at most once per `qualityInterval`: a stage member's to everyone, an
    /// audience member's only to those who may move people (hosts, moderators) and to themself, each group in
    /// one message. Someone who joined since the last call gets the scores already announced that they may see.
    /// Unsequenced: a measure, not room state.
    public mutating func updateQuality(_ measured: [PeerQuality], now: Timestamp) -> Outcome {
        var stage: [PeerQuality] = []
        var audience: [PeerQuality] = []
        for quality in measured {
            guard let peer = peers[quality.peer] else { continue }
            if let sent = qualitySent[quality.peer],
                sent.quality.score == quality.score || now - sent.at < Self.qualityInterval
            {
                continue
            }
            qualitySent[quality.peer] = SentQuality(quality: quality, at: now)
            if roles.isOnStage(peer.role) { stage.append(quality) } else { audience.append(quality) }
        }
        if qualitySent.count > peers.count { qualitySent = qualitySent.filter { peers[$0.key] != nil } }
        if qualityTold.count > peers.count { qualityTold = qualityTold.filter { peers[$0] != nil } }
        var outcome = Outcome()
        func deliver(_ list: [PeerQuality], to recipients: Recipients) {
            guard !list.isEmpty else { return }
            outcome.deliveries.append(Delivery(to: recipients, ServerMessage(.networkQuality(list), seq: nil)))
        }
        let moderators = order.filter { id in peers[id].map { roles.can($0.role, .move) } ?? false }
        // Newcomers first, with what was announced before them (this call's changes come to them below).
        let newcomers = order.filter { !qualityTold.contains($0) }
        if !newcomers.isEmpty {
            let announcedNow = Set((stage + audience).map(\.peer))
            var stageSeen: [PeerQuality] = []
            var allSeen: [PeerQuality] = []
            for id in order {
                guard let sent = qualitySent[id], !announcedNow.contains(id), let peer = peers[id] else { continue }
                allSeen.append(sent.quality)
                if roles.isOnStage(peer.role) { stageSeen.append(sent.quality) }
            }
            for id in newcomers {
                qualityTold.insert(id)
                guard let peer = peers[id] else { continue }
                if roles.can(peer.role, .move) {
                    deliver(allSeen, to: .peer(id))
                } else if !roles.isOnStage(peer.role), !announcedNow.contains(id), let own = qualitySent[id] {
                    deliver(stageSeen + [own.quality], to: .peer(id))
                } else {
                    deliver(stageSeen, to: .peer(id))
                }
            }
        }
        deliver(stage, to: .everyone)
        deliver(audience, to: .peers(moderators))
        for quality in audience where !moderators.contains(quality.peer) {
            deliver([quality], to: .peer(quality.peer))
        }
        return outcome
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
