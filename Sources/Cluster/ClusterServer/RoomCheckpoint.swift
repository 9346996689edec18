import RoomCore
import RoomProtocol
import RoomServer

/// Everything a `RoomAuthority` holds but its name, role table and size limit: what a node that did not see a
/// room's history needs to decide exactly as the room's other copies do. A cluster keeps one in Redis beside
/// the room's event stream (as `ClusterFormat` writes it); applying the entries written after it brings a copy up
/// to date.
public struct RoomCheckpoint: Sendable, Equatable {
    struct Departed: Sendable, Equatable {
        var peer: PeerID
        var role: RoleName
        var at: Timestamp
    }

    struct Invitation: Sendable, Equatable {
        var peer: PeerID
        var by: PeerID
        /// When it was sent, on the owner's clock: it lapses `RoomAuthority.invitationLifetime` later.
        var at: Timestamp
    }

    struct Hand: Sendable, Equatable {
        var peer: PeerID
        var at: Timestamp
    }

    struct TokenRole: Sendable, Equatable {
        var peer: PeerID
        var role: RoleName
    }

    /// The ids of one identity's decided requests, oldest first, and the refusals of those refused
    /// (`AppliedRequests.stored`; a checkpoint without `refused` has only requests that took effect).
    struct Applied: Sendable, Equatable {
        var peer: PeerID
        var ids: [String]
        var refused: [Refused]? = nil
    }

    /// A refused request's id (as in `Applied.ids`) and its refusal's code and message.
    struct Refused: Sendable, Equatable {
        var id: String
        var code: String
        var message: String
    }

    var topic: String
    var ended: Bool
    var seq: Int64
    /// The peers in join order.
    var peers: [Peer]
    var invitations: [Invitation]
    var heldInvitations: [Invitation]
    /// Raised hands of peers away within the grace; absent from checkpoints written before hands were kept.
    var heldHands: [Hand]?
    /// Peers whose role someone else lowered: they may not step back up by themselves.
    var loweredByOthers: [PeerID]
    /// The role each of them was lowered to, the most they come back with (absent from checkpoints written
    /// before demotions outlasted the reconnect grace: each then keeps the role it holds, or left with).
    var loweredTo: [TokenRole]?
    /// The role each present or recently departed peer's token gave: the most it keeps, and what it may step
    /// back up to.
    var tokenRoles: [TokenRole]
    var chat: [ChatMessage]
    var removed: [PeerID]
    var departed: [Departed]
    var departedPruneThreshold: Int
    /// Whether the room shows in the lobby.
    var listed: Bool
    /// When the room went live; nil while it is empty or ended.
    var liveSince: Timestamp?
    /// The ids of the requests that took effect, per identity (absent in a checkpoint written before they were
    /// kept).
    var applied: [Applied]?
    /// When a room left without a host by one who dropped hands the role over (absent when none waits).
    var handoverDue: Timestamp?
    /// When the room, left with neither host nor moderator, ends (absent when it is not ending).
    var endsAt: Timestamp?
    /// False when raising hands is off (absent when it is on).
    var handsAllowed: Bool?
    /// The last host who left, named when the room is said to be ending (absent when none left).
    var lastHost: LastHost?
    /// Each person's speaking time and turns since the room went live (absent when no one has spoken, and in
    /// checkpoints written before it was kept).
    var speaking: [Speaking]?
    /// The room's recording while a recorder is in it (absent when it is not recorded; the recorders are the
    /// peers of role `recorder`).
    var recording: RecordingState?
    /// Where the room streams and which peers carry its streams (absent when neither; `RoomCheckpoint+Streaming`).
    var streaming: StreamingCheckpoint?

    struct LastHost: Sendable, Equatable {
        var peer: PeerID
        var name: String
    }

    init(
        topic: String, ended: Bool, seq: Int64, peers: [Peer], invitations: [Invitation],
        heldInvitations: [Invitation], loweredTo: [TokenRole], tokenRoles: [TokenRole], chat: [ChatMessage],
        removed: [PeerID], departed: [Departed],
        departedPruneThreshold: Int, listed: Bool, liveSince: Timestamp?, applied: [Applied]? = nil,
        heldHands: [Hand]? = nil, handoverDue: Timestamp? = nil, endsAt: Timestamp? = nil,
        lastHost: LastHost? = nil, handsAllowed: Bool? = nil, recording: RecordingState? = nil
    ) {
        self.recording = recording
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
        var checkpoint = RoomCheckpoint(
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
            handsAllowed: handsAllowed ? nil : false, recording: recording)
        checkpoint.speaking = speakingCheckpoint
        checkpoint.streaming = streamingCheckpoint
        return checkpoint
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
        restoreSpeaking(checkpoint.speaking ?? [])
        recording = checkpoint.recording
        restoreStreaming(checkpoint.streaming)
        // A stream's recorder is the stream, not a recording.
        recorders = Set(checkpoint.peers.filter { $0.role == .recorder && streamPeers[$0.id] == nil }.map(\.id))
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
