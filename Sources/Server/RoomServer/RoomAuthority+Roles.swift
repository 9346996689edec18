import RoomCore
import RoomProtocol

// MARK: Roles, the room's end and the host handover

/// Roles changed and kept, the room ended, and a room left without a host handed over or ended.
extension RoomAuthority {
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
        // Everyone was told the room ended; the recording ends with it, and a recorder the server runs for it is
        // stopped, whether it joined yet or not.
        outcome.recorderOrders.append(.stop(by: nil))
        recording = nil
        recorders = []
        recorderReasons = [:]
        streams = []
        streamingSince = nil
        streamPeers = [:]
        outcome.streamOrders.append(.stopAll)
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

    /// The room's deadline as the store keeps it (a handover due, or its end, and the last host); nil when none
    /// waits.
    public var deadline: RoomDeadline? {
        guard handoverDue != nil || endsAt != nil else { return nil }
        return RoomDeadline(
            handoverDue: handoverDue, endsAt: endsAt, lastHost: lastHost?.id, lastHostName: lastHost?.name)
    }

    /// Tells the store of a decision that set, moved or cleared the room's deadline (`before`: as it stood
    /// before the decision). A refusal changed nothing and says nothing.
    func noteDeadline(since before: RoomDeadline?, into outcome: inout Outcome) {
        guard outcome.error == nil, deadline != before else { return }
        outcome.changes.append(.deadline(deadline))
    }

    /// A room loaded after a restart takes back the deadline it had. Everyone's connection dropped when the server
    /// stopped, and each has the reconnect grace from `now` (the load, at the start) to come back: a handover waits
    /// for that, as after any drop of the last host (a host back by then keeps the role), while an ending keeps the
    /// time everyone was told, and a room whose time passed while the server was down ends at once.
    package mutating func restore(_ saved: RoomDeadline, now: Timestamp) {
        if let due = saved.handoverDue { handoverDue = max(due, now + Self.reconnectGrace) }
        endsAt = saved.endsAt
        if let host = saved.lastHost { lastHost = (host, saved.lastHostName ?? host.rawValue) }
    }

    /// The room's end while it waits for a host, as a newcomer's snapshot tells it (the `room_ending` it missed).
    var hostlessEnding: HostlessEnding? {
        guard let endsAt, let lastHost else { return nil }
        return HostlessEnding(host: lastHost.id, name: lastHost.name, at: endsAt)
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
            let deadline = now + endingGrace
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
}
