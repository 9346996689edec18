import RoomCore
import RoomProtocol

// MARK: Joining and leaving

/// Who comes in, with which role, and what their leaving changes; the snapshot a joiner is sent.
extension RoomAuthority {
    /// A peer with a verified token joins. `role` is the token's role, which must be in the table. A peer who
    /// left less than 60 s ago (by `departed`, which a room loaded after a restart gets from the store) gets its
    /// role back.
    /// A recorder says who asked for the recording (`startedBy`, see `recorderArrived`).
    public mutating func join(
        id: PeerID, name rawName: String, role tokenRole: RoleName, now: Timestamp, startedBy: PeerID? = nil,
        stream: String? = nil
    ) -> JoinResult {
        let deadlineBefore = deadline
        let result = admit(id: id, name: rawName, role: tokenRole, now: now, startedBy: startedBy, stream: stream)
        guard case .joined(let snapshot, var outcome, let replaced) = result else { return result }
        reportListing(into: &outcome, now: now)
        noteDeadline(since: deadlineBefore, into: &outcome)
        return .joined(snapshot: snapshot, outcome: outcome, replaced: replaced)
    }

    mutating func admit(
        id: PeerID, name rawName: String, role tokenRole: RoleName, now: Timestamp, startedBy: PeerID? = nil,
        stream: String? = nil
    ) -> JoinResult {
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
        if role == .recorder, !(stream.map { streamArrived(id, name: $0) } ?? false) {
            recorderArrived(id, startedBy: startedBy, now: now, into: &outcome)
        }
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
        let deadlineBefore = deadline
        var outcome = depart(departures, now: now)
        reportListing(into: &outcome, now: now)
        noteDeadline(since: deadlineBefore, into: &outcome)
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
            stopSpeaking(id, now: now)
            streamPeers[id] = nil
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
        recordersLeft(gone, into: &outcome)
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
            tokenRole: tokenRoles[id], listed: listed, recording: recording, streaming: streaming,
            streamDestinations: peers[id].map { roles.can($0.role, .stream) } == true ? streamDestinations : [],
            ending: hostlessEnding, handsAllowed: handsAllowed)
        return ServerMessage(.joined(snapshot), seq: seq)
    }
}
