import RoomCore
import RoomProtocol

// MARK: Invitations and reactions

/// What the room does as time passes: invitations lapse, held reactions are announced.
extension RoomAuthority {
    /// Lets invitations older than `invitationLifetime` lapse: each is announced with `invite_expired` (and
    /// audited, with its sender as the actor). Held invitations of absent peers lapse silently.
    public mutating func expireInvitations(now: Timestamp) -> Outcome {
        let invitationsBefore = standingInvitations
        let deadlineBefore = deadline
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
        noteDeadline(since: deadlineBefore, into: &outcome)
        return outcome
    }

    /// When the room next has timed work: an invitation to lapse or reactions held back to announce.
    public var nextTimedWork: Timestamp? {
        [nextInvitationExpiry, reactions.nextBurstAt].compactMap { $0 }.min()
    }

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
}
