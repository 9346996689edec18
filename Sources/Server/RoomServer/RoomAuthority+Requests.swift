import RoomCore
import RoomProtocol

// MARK: Requests

/// A peer's request: checked (the role table's rank and permission rules, then the room's state), then acted on.
extension RoomAuthority {
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
        // A request from someone not in the room (a copy a node carried from a connection the room had already
        // let go, say) is refused without being noted under its id: it says nothing of what the id asks, and the
        // same request sent again once its sender is back in the room is decided then, not refused again.
        let present = peers[actorID] != nil
        let deadlineBefore = deadline
        var outcome = decide(request, from: actorID, id: id, now: now)
        if outcome.error == nil {
            reportListing(into: &outcome, now: now)
            stopSpeaking(behind: outcome.gates, now: now)
            noteDeadline(since: deadlineBefore, into: &outcome)
        }
        if once, present, let id {
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
                return (.forbidden, "you cannot raise your own role above the one your link gives\(token)")
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
        case .startRecording:
            if recording != nil { return (.conflict, ClientRequest.alreadyRecording) }
        case .stopRecording:
            if recording == nil { return (.conflict, ClientRequest.notRecording) }
        case .setRole, .stepDown, .setMute, .setMicWorking, .setPlaying, .remove, .setTopic, .endRoom, .leave,
            .createLink, .listLinks, .revokeLink, .setLocked, .listBans, .unban, .admitWaiting, .denyWaiting,
            .recorderError:
            break
        case .stats:
            break
        case .startStream, .stopStream, .streamStatus:
            return streamConflict(request, actor: actor)
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
    mutating func perform(
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
        case .remove(let targetID, let reason, let withdrawLink, let ban):
            let reason = DisplayName.sanitizeLine(reason ?? "", maxGraphemes: ControlLimits.maxReasonCharacters)
            // Removing a recorder is stopping the recording: every recorder goes (the server's own is told to
            // stop), none is kept out, and no recorder is banned, so that the room may be recorded again.
            // Removing a stream's recorder is stopping that stream, as for a recording.
            let isRecorder = recorders.contains(targetID) || streamPeers[targetID] != nil
            if withdrawLink || (ban && !isRecorder) {
                outcome.linkRequests.append(
                    LinkRequest(
                        peer: actorID, room: name, revoke: nil, withdrawUsedBy: withdrawLink ? targetID : nil,
                        ban: ban && !isRecorder ? targetID : nil, banName: target?.name ?? "", banReason: reason,
                        requestID: withdrawLink ? requestID : nil))
            }
            if let stream = streamPeers[targetID] {
                removeStreamRecorder(targetID, of: stream, by: actorID, into: &outcome)
                audit(targetID, reason)
                return outcome
            }
            if isRecorder {
                stopRecording(by: actorID, into: &outcome)
                audit(targetID, reason)
                return outcome
            }
            broadcast(.removed(peer: targetID, by: actorID, reason: reason), into: &outcome)
            if target?.handRaisedAt != nil { outcome.changes.append(.hand(targetID, raisedAt: nil)) }
            peers[targetID] = nil
            stopSpeaking(targetID, now: now)
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
        case .listBans:
            outcome.linkRequests.append(
                LinkRequest(peer: actorID, room: name, revoke: nil, bans: .list, requestID: requestID))
        case .unban(let who):
            outcome.linkRequests.append(
                LinkRequest(peer: actorID, room: name, revoke: nil, bans: .lift(who), requestID: requestID))
            audit(nil, who)
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
        case .startRecording:
            outcome.recorderOrders.append(.start(by: actorID))
            audit()
        case .stopRecording:
            stopRecording(by: actorID, into: &outcome)
            audit()
        case .recorderError(let reason):
            recorderReasons[actorID] = DisplayName.sanitizeLine(
                reason, maxGraphemes: ClientRequest.maxRecorderErrorLength)
            audit(nil, recorderReasons[actorID] ?? "")
        case .startStream(let name), .stopStream(let name):
            actOnStream(request, by: actorID, now: now, into: &outcome)
            audit(nil, name)
        case .streamStatus:
            actOnStream(request, by: actorID, now: now, into: &outcome)
        case .stats:
            // The answer is this requester's alone, as they asked; nothing in the room changes.
            outcome.deliveries.append(
                Delivery(
                    to: .peer(actorID), ServerMessage(.stats(people: speakingStats(now: now), id: requestID), seq: nil))
            )
        case .react(let reaction):
            // Checked and counted in one step: a refusal changes nothing but forgetting rates out of the window.
            if let refused = reactions.offer(reaction, from: actorID, at: now) {
                return refusal(.rateLimited, refused.message, id: requestID)
            }
            announceReactions(now: now, into: &outcome)
        }
        return outcome
    }
}
