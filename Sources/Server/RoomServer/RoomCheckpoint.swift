import RoomCore
import RoomProtocol

/// Everything a `RoomAuthority` holds but its name, role table and size limit: what a node that did not see a
/// room's history needs to decide exactly as the room's other copies do. A cluster keeps one in Redis beside
/// the room's event stream; applying the entries written after it brings a copy up to date. Its JSON is the
/// cluster's to write and read (`ClusterServer`'s `ClusterFormat`).
public struct RoomCheckpoint: Sendable, Equatable {
    package struct Departed: Sendable, Equatable {
        package var peer: PeerID
        package var role: RoleName
        package var at: Timestamp

        package init(peer: PeerID, role: RoleName, at: Timestamp) {
            self.peer = peer
            self.role = role
            self.at = at
        }
    }

    package struct Invitation: Sendable, Equatable {
        package var peer: PeerID
        package var by: PeerID
        /// When it was sent, on the owner's clock: it lapses `RoomAuthority.invitationLifetime` later.
        package var at: Timestamp

        package init(peer: PeerID, by: PeerID, at: Timestamp) {
            self.peer = peer
            self.by = by
            self.at = at
        }
    }

    package struct Hand: Sendable, Equatable {
        package var peer: PeerID
        package var at: Timestamp

        package init(peer: PeerID, at: Timestamp) {
            self.peer = peer
            self.at = at
        }
    }

    package struct TokenRole: Sendable, Equatable {
        package var peer: PeerID
        package var role: RoleName

        package init(peer: PeerID, role: RoleName) {
            self.peer = peer
            self.role = role
        }
    }

    /// The ids of one identity's decided requests, oldest first, and the refusals of those refused
    /// (`AppliedRequests.stored`; a checkpoint without `refused` has only requests that took effect).
    package struct Applied: Sendable, Equatable {
        package var peer: PeerID
        package var ids: [String]
        package var refused: [Refused]? = nil

        package init(peer: PeerID, ids: [String], refused: [Refused]? = nil) {
            self.peer = peer
            self.ids = ids
            self.refused = refused
        }
    }

    /// A refused request's id (as in `Applied.ids`) and its refusal's code and message.
    package struct Refused: Sendable, Equatable {
        package var id: String
        package var code: String
        package var message: String

        package init(id: String, code: String, message: String) {
            self.id = id
            self.code = code
            self.message = message
        }
    }

    package var topic: String
    package var ended: Bool
    package var seq: Int64
    /// The peers in join order.
    package var peers: [Peer]
    package var invitations: [Invitation]
    package var heldInvitations: [Invitation]
    /// Raised hands of peers away within the grace; absent from checkpoints written before hands were kept.
    package var heldHands: [Hand]?
    /// Peers whose role someone else lowered: they may not step back up by themselves.
    package var loweredByOthers: [PeerID]
    /// The role each of them was lowered to, the most they come back with (absent from checkpoints written
    /// before demotions outlasted the reconnect grace: each then keeps the role it holds, or left with).
    package var loweredTo: [TokenRole]?
    /// The role each present or recently departed peer's token gave: the most it keeps, and what it may step
    /// back up to.
    package var tokenRoles: [TokenRole]
    package var chat: [ChatMessage]
    package var removed: [PeerID]
    package var departed: [Departed]
    package var departedPruneThreshold: Int
    /// Whether the room shows in the lobby.
    package var listed: Bool
    /// When the room went live; nil while it is empty or ended.
    package var liveSince: Timestamp?
    /// The ids of the requests that took effect, per identity (absent in a checkpoint written before they were
    /// kept).
    package var applied: [Applied]?
    /// When a room left without a host by one who dropped hands the role over (absent when none waits).
    package var handoverDue: Timestamp?
    /// When the room, left with neither host nor moderator, ends (absent when it is not ending).
    package var endsAt: Timestamp?
    /// False when raising hands is off (absent when it is on).
    package var handsAllowed: Bool?
    /// The last host who left, named when the room is said to be ending (absent when none left).
    package var lastHost: LastHost?

    package struct LastHost: Sendable, Equatable {
        package var peer: PeerID
        package var name: String

        package init(peer: PeerID, name: String) {
            self.peer = peer
            self.name = name
        }
    }

    package init(
        topic: String, ended: Bool, seq: Int64, peers: [Peer], invitations: [Invitation],
        heldInvitations: [Invitation], loweredTo: [TokenRole], tokenRoles: [TokenRole], chat: [ChatMessage],
        removed: [PeerID], departed: [Departed],
        departedPruneThreshold: Int, listed: Bool, liveSince: Timestamp?, applied: [Applied]? = nil,
        heldHands: [Hand]? = nil, handoverDue: Timestamp? = nil, endsAt: Timestamp? = nil,
        lastHost: LastHost? = nil, handsAllowed: Bool? = nil
    ) {
        self.handsAllowed = handsAllowed
        self.endsAt = endsAt
        self.lastHost = lastHost
        self.heldHands = heldHands
        self.handoverDue = handoverDue
        self.topic = topic
        self.ended = ended
        self.seq = seq
        self.peers = peers
        self.invitations = invitations
        self.heldInvitations = heldInvitations
        self.loweredByOthers = loweredTo.map(\.peer)
        self.loweredTo = loweredTo
        self.tokenRoles = tokenRoles
        self.chat = chat
        self.removed = removed
        self.departed = departed
        self.departedPruneThreshold = departedPruneThreshold
        self.listed = listed
        self.liveSince = liveSince
        self.applied = applied
    }
}

extension RoomAuthority {
    /// The room's state, in an order that does not depend on the process (dictionaries are sorted).
    public var checkpoint: RoomCheckpoint {
        RoomCheckpoint(
            topic: topic, ended: ended, seq: seq, peers: order.compactMap { peers[$0] },
            invitations: invitations.sorted { $0.key < $1.key }.map {
                .init(peer: $0.key, by: $0.value.by, at: $0.value.at)
            },
            heldInvitations: heldInvitations.sorted { $0.key < $1.key }.map {
                .init(peer: $0.key, by: $0.value.by, at: $0.value.at)
            },
            loweredTo: loweredByOthers.sorted { $0.key < $1.key }.map { .init(peer: $0.key, role: $0.value) },
            tokenRoles: tokenRoles.sorted { $0.key < $1.key }.map { .init(peer: $0.key, role: $0.value) },
            chat: chat, removed: removedIdentities.sorted(),
            departed: departed.sorted { $0.key < $1.key }.map {
                .init(peer: $0.key, role: $0.value.role, at: $0.value.at)
            },
            departedPruneThreshold: departedPruneThreshold, listed: listed, liveSince: liveSince,
            applied: applied.stored,
            heldHands: heldHands.isEmpty
                ? nil : heldHands.sorted { $0.key < $1.key }.map { .init(peer: $0.key, at: $0.value) },
            handoverDue: handoverDue, endsAt: endsAt, lastHost: lastHost.map { .init(peer: $0.id, name: $0.name) },
            handsAllowed: handsAllowed ? nil : false)
    }

    /// A copy of a room from its checkpoint: it decides everything after it exactly as the copy it was taken
    /// from. What lobbies were told of it is this node's own: none yet (see `announceListing`).
    public init(name: String, roles: RoleTable, restoring checkpoint: RoomCheckpoint, maxPeers: Int) {
        self.init(
            name: name, roles: roles, topic: checkpoint.topic, ended: checkpoint.ended, seq: checkpoint.seq,
            chat: checkpoint.chat, maxPeers: maxPeers, listed: checkpoint.listed)
        for peer in checkpoint.peers {
            peers[peer.id] = peer
            order.append(peer.id)
        }
        for invitation in checkpoint.invitations {
            invitations[invitation.peer] = RoomCore.Invitation(by: invitation.by, at: invitation.at)
        }
        for invitation in checkpoint.heldInvitations {
            heldInvitations[invitation.peer] = RoomCore.Invitation(by: invitation.by, at: invitation.at)
        }
        for hand in checkpoint.heldHands ?? [] { heldHands[hand.peer] = hand.at }
        for entry in checkpoint.tokenRoles { tokenRoles[entry.peer] = entry.role }
        removedIdentities = Set(checkpoint.removed)
        for entry in checkpoint.departed { departed[entry.peer] = (entry.role, entry.at) }
        if let loweredTo = checkpoint.loweredTo {
            for entry in loweredTo { loweredByOthers[entry.peer] = entry.role }
        } else {
            for peer in checkpoint.loweredByOthers {
                if let role = peers[peer]?.role ?? departed[peer]?.role { loweredByOthers[peer] = role }
            }
        }
        departedPruneThreshold = checkpoint.departedPruneThreshold
        liveSince = checkpoint.liveSince
        handoverDue = checkpoint.handoverDue
        endsAt = checkpoint.endsAt
        handsAllowed = checkpoint.handsAllowed ?? true
        lastHost = checkpoint.lastHost.map { ($0.peer, $0.name) }
        applied = AppliedRequests(stored: checkpoint.applied ?? [])
        for peer in checkpoint.peers {
            if roles.isOnStage(peer.role) { tally.stage.insert(peer.id) }
            if peer.handRaisedAt != nil { tally.hands.insert(peer.id) }
        }
    }

    /// The change that brings lobbies told of `reported` (nil: told nothing) to the room's listing now, which
    /// they are then taken to know: for a copy that replaces another one, or a room this node did not follow.
    public mutating func announceListing(after reported: RoomListing?) -> ListingChange? {
        let current = listing
        let departure: ListingDeparture = ended ? .ended : peers.isEmpty ? .empty : .unlisted
        reportedListing = current
        return ListingChange.between(reported, current, room: name, arrival: .started, departure: departure)
    }
}
