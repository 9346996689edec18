/// Everything that can happen to a room's state, in one closed enum.
public enum RoomAction: Sendable, Equatable {
    /// An event from the server with its room sequence number. For the unsequenced connection events
    /// (`reconnecting`, `reconnected`, `error`) the number is not read; pass 0. For `joined`, the snapshot's
    /// own `seq` is used.
    case server(ServerEvent, seq: UInt64)
    /// A line typed on the command line, already parsed.
    case command(Command)
    /// An intent from a key (`r` raises the hand, `i` invites the selection, ...).
    case request(ClientRequest)
    /// The runtime's clock, for waiting times. The reducer never reads a clock itself.
    case tick(Timestamp)
}

/// A line for the status bar.
public struct Notice: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case info
        /// A request refused locally, before it was sent.
        case refusal
        /// An error from the server.
        case error
    }

    public var kind: Kind
    public var text: String

    public init(_ kind: Kind, _ text: String) {
        self.kind = kind
        self.text = text
    }
}

/// Work for the runtime to do after a reduce.
public enum Effect: Sendable, Equatable {
    /// Send a request to the server.
    case send(ClientRequest)
    /// Show a line on the status bar.
    case notice(Notice)
    /// Show the command help (`Command.helpText`).
    case showHelp
    /// Close the session and leave the room screen.
    case leave
}

/// Applies one action to the state and returns what the runtime should do next.
/// Pure and synchronous: no I/O, no clock, no randomness. Bad, stale or duplicate events are ignored and
/// counted in `state.ignoredEvents`; the state only changes as the server says.
public func reduce(_ state: inout RoomState, _ action: RoomAction) -> [Effect] {
    switch action {
    case .server(let event, let seq):
        return applyServer(&state, event, seq: seq)
    case .command(let command):
        return perform(&state, command)
    case .request(let request):
        return submit(&state, request)
    case .tick(let now):
        state.now = now
        state.reactions.expire(at: now)
        return []
    }
}

// MARK: - Server events

private func applyServer(_ state: inout RoomState, _ event: ServerEvent, seq: UInt64) -> [Effect] {
    switch event {
    case .reconnecting(let attempt, let retryAt):
        state.connection = .reconnecting(attempt: max(1, attempt), retryAt: retryAt)
        return []
    case .reconnected:
        state.connection = .connected
        return []
    case .error(let code, let raw):
        let message = DisplayName.sanitizeLine(raw, maxGraphemes: RoomState.maxReasonLength)
        state.lastError = ServerError(code: code, message: message)
        return [.notice(Notice(.error, message))]
    case .inviteLink, .links, .bans, .stats, .knock, .waitingForHost:
        // The answer to this client's own request; the app shows it.
        return []
    case .reaction(let burst):
        // Unsequenced and never kept: only marks beside people in the room, shown from the last tick on.
        guard state.hasJoined else { return [] }
        let present = ReactionBurst(
            counts: burst.counts, senders: burst.senders.filter { state.peers[$0.peer] != nil })
        state.reactions.show(present, at: state.now)
        return []
    case .networkQuality(let scores):
        // Unsequenced: a measure, not room state. Only peers in the room are kept; a score of someone unknown
        // (they left in the meantime) is counted and dropped.
        guard state.hasJoined else {
            state.ignoredEvents.count(.beforeSnapshot)
            return []
        }
        for entry in scores {
            guard state.peers[entry.peer] != nil else {
                state.ignoredEvents.count(.unknownPeer)
                continue
            }
            var kept = entry
            kept.score = min(PeerQuality.best, max(0, entry.score))
            kept.lossPercent = min(100, max(0, entry.lossPercent))
            state.quality[entry.peer] = kept
        }
        return []
    case .joined(let snapshot):
        if state.roomID == snapshot.roomID && state.hasJoined && snapshot.seq < state.lastSeq {
            state.ignoredEvents.count(.outOfOrder)
            return []
        }
        applySnapshot(&state, snapshot)
        return []
    default:
        break
    }
    guard state.hasJoined else {
        state.ignoredEvents.count(.beforeSnapshot)
        return []
    }
    if seq == state.lastSeq {
        state.ignoredEvents.count(.duplicate)
        return []
    }
    if seq < state.lastSeq {
        state.ignoredEvents.count(.outOfOrder)
        return []
    }
    if state.ending != nil {
        state.lastSeq = seq
        state.ignoredEvents.count(.afterEnding)
        return []
    }
    // Gaps are normal (events addressed to other clients share the room's numbering), so a later number is
    // applied and becomes the new high-water mark even when it is ignored for another reason.
    state.lastSeq = seq
    if let reason = apply(&state, event) {
        state.ignoredEvents.count(reason)
        return []
    }
    return []
}

private func applySnapshot(_ state: inout RoomState, _ snapshot: RoomSnapshot) {
    var peers: [PeerID: Peer] = [:]
    peers.reserveCapacity(snapshot.peers.count)
    for peer in snapshot.peers { peers[peer.id] = peer }
    state.roomID = snapshot.roomID
    state.topic = DisplayName.sanitizeLine(snapshot.topic, maxGraphemes: RoomState.maxTopicLength)
    state.listed = snapshot.listed
    state.selfID = snapshot.selfID
    state.peers = peers
    state.sections = Sections(peers: peers.values, roles: state.roles)
    state.speaking = Set(peers.values.lazy.filter { $0.level > 0 }.map(\.id))
    state.quality = state.quality.filter { id, _ in peers[id] != nil }
    state.chat.removeAll()
    for message in snapshot.recentChat { state.chat.append(message) }
    state.connection = .connected
    state.ending = snapshot.ended ? .ended(reason: "") : nil
    // Invitations stand only for people here and off stage.
    state.invitations = snapshot.invitations.filter { id, _ in
        peers[id].map { !state.roles.isOnStage($0.role) } ?? false
    }
    // A pending invitation survives a reconnect: the snapshot says who sent it, so the prompt comes back.
    state.invitation = snapshot.ended ? nil : state.invitations[snapshot.selfID]
    state.stepUpRole = snapshot.stepUp
    state.tokenRole = snapshot.tokenRole
    state.muteRequestedBy = nil
    state.recording = snapshot.ended ? nil : snapshot.recording
    state.streaming = snapshot.ended ? nil : snapshot.streaming
    state.streamDestinations = snapshot.streamDestinations
    state.hostlessEnding = snapshot.ended ? nil : snapshot.hostlessEnding
    state.handsAllowed = snapshot.handsAllowed
    state.lastSeq = snapshot.seq
}

/// Applies a sequenced event; returns why it was ignored, or `nil` when applied.
private func apply(_ state: inout RoomState, _ event: ServerEvent) -> IgnoreReason? {
    switch event {
    case .peerJoined(let peer, let invitation):
        // One hash lookup on the common path; the rare duplicate puts the original back.
        if let existing = state.peers.updateValue(peer, forKey: peer.id) {
            state.peers[peer.id] = existing
            return .alreadyPresent
        }
        state.sections.insert(peer, roles: state.roles)
        if let invitation, !state.roles.isOnStage(peer.role) { state.invitations[peer.id] = invitation }
        if peer.level > 0 { state.speaking.insert(peer.id) }
        state.activity.append(.joined(peer.id, name: peer.name))

    case .peerLeft(let id):
        if id == state.selfID { return .aboutThisClient }
        guard let peer = removePeer(&state, id) else { return .unknownPeer }
        state.activity.append(.left(id, name: peer.name))

    case .roleChanged(let id, let role, let by, let stepUp):
        guard var peer = state.peers[id] else { return .unknownPeer }
        guard state.roles.contains(role) else { return .unknownRole }
        if peer.role == role { return .noChange }
        peer.role = role
        if state.roles.isOnStage(role) { peer.handRaisedAt = nil }
        update(&state, peer)
        // A new role answers any invitation: the server drops it.
        state.invitations[id] = nil
        if id == state.selfID {
            state.invitation = nil
            state.stepUpRole = stepUp
        }
        state.activity.append(.roleChanged(id, name: peer.name, to: role, by: by))

    case .handRaised(let id, let at):
        guard var peer = state.peers[id] else { return .unknownPeer }
        if peer.handRaisedAt != nil { return .noChange }
        peer.handRaisedAt = at
        update(&state, peer)

    case .handLowered(let id, _):
        guard var peer = state.peers[id] else { return .unknownPeer }
        if peer.handRaisedAt == nil { return .noChange }
        peer.handRaisedAt = nil
        update(&state, peer)

    case .muteChanged(let id, let muted, let by):
        guard var peer = state.peers[id] else { return .unknownPeer }
        if peer.muted == muted { return .noChange }
        peer.muted = muted
        state.peers[id] = peer
        if muted && id == state.selfID { state.muteRequestedBy = nil }
        if muted, let by, by != id { state.activity.append(.muted(id, name: peer.name, by: by)) }

    case .micChanged(let id, let working):
        guard var peer = state.peers[id] else { return .unknownPeer }
        if peer.micWorking == working { return .noChange }
        peer.micWorking = working
        state.peers[id] = peer

    case .playingChanged(let id, let playing):
        guard var peer = state.peers[id] else { return .unknownPeer }
        if peer.playing == playing { return .noChange }
        peer.playing = playing
        state.peers[id] = peer

    case .speakers(let levels):
        // The server sends only the levels that changed: a peer not listed keeps its level.
        var unknown = 0
        for entry in levels {
            guard state.peers[entry.peer] != nil else {
                unknown += 1
                continue
            }
            let level = Peer.clampLevel(entry.level)
            state.peers[entry.peer]!.level = level
            if level > 0 { state.speaking.insert(entry.peer) } else { state.speaking.remove(entry.peer) }
        }
        // One unknown entry spoils only itself; count each so the counters stay honest.
        for _ in 0..<unknown { state.ignoredEvents.count(.unknownPeer) }

    case .chat(let message):
        if state.peers[message.from] == nil { return .unknownPeer }
        state.chat.append(message)

    case .invited(let id, let by, let at):
        guard let peer = state.peers[id] else { return .unknownPeer }
        if state.roles.isOnStage(peer.role) { return .noChange }
        let invitation = Invitation(by: by, at: at)
        if state.invitations[id] == invitation { return .noChange }
        state.invitations[id] = invitation
        if id == state.selfID { state.invitation = invitation }

    case .inviteDeclined(let id):
        guard let peer = state.peers[id] else { return .unknownPeer }
        guard state.invitations.removeValue(forKey: id) != nil else { return .noChange }
        if id == state.selfID { state.invitation = nil }
        state.activity.append(.declinedInvitation(id, name: peer.name))

    case .inviteWithdrawn(let id, let by):
        guard let peer = state.peers[id] else { return .unknownPeer }
        guard state.invitations.removeValue(forKey: id) != nil else { return .noChange }
        if id == state.selfID { state.invitation = nil }
        state.activity.append(.withdrawnInvitation(id, name: peer.name, by: by))

    case .inviteExpired(let id):
        guard let peer = state.peers[id] else { return .unknownPeer }
        guard state.invitations.removeValue(forKey: id) != nil else { return .noChange }
        if id == state.selfID { state.invitation = nil }
        state.activity.append(.expiredInvitation(id, name: peer.name))

    case .roomEnding(let id, let name, let at):
        state.hostlessEnding = at.map { HostlessEnding(host: id, name: name, at: $0) }

    case .handsAllowed(let allowed, _):
        state.handsAllowed = allowed
        // Turning them off lowers every raised hand; no `hand_lowered` follows.
        if !allowed {
            for var peer in state.peers.values where peer.handRaisedAt != nil {
                peer.handRaisedAt = nil
                update(&state, peer)
            }
        }

    case .askedToMute(let by):
        guard let me = state.me else { return .unknownPeer }
        if me.muted { return .noChange }
        state.muteRequestedBy = by

    case .removed(let id, let raw, let by):
        let reason = DisplayName.sanitizeLine(raw, maxGraphemes: RoomState.maxReasonLength)
        if id == state.selfID {
            state.ending = .removed(reason: reason, by: by)
            state.invitation = nil
            state.invitations = [:]
            return nil
        }
        guard let peer = removePeer(&state, id) else { return .unknownPeer }
        state.activity.append(.removed(id, name: peer.name, reason: reason, by: by))

    case .roomEnded(let raw):
        let reason = DisplayName.sanitizeLine(raw, maxGraphemes: RoomState.maxReasonLength)
        state.ending = .ended(reason: reason)
        state.recording = nil
        state.streaming = nil
        state.invitation = nil
        state.invitations = [:]
        state.activity.append(.ended(reason: reason))

    case .topicChanged(let raw, let by):
        let topic = DisplayName.sanitizeLine(raw, maxGraphemes: RoomState.maxTopicLength)
        if state.topic == topic { return .noChange }
        state.topic = topic
        state.activity.append(.topicChanged(topic, by: by))

    case .listingChanged(let listed, let by):
        if state.listed == listed { return .noChange }
        state.listed = listed
        state.activity.append(.listingChanged(listed: listed, by: by))

    case .recording(let recording?, _, _):
        if state.recording == recording { return .noChange }
        state.recording = recording
        state.recordingStopped = nil

    case .recording(nil, let by, let raw):
        guard state.recording != nil else { return .noChange }
        state.recording = nil
        let reason = raw.map { DisplayName.sanitizeLine($0, maxGraphemes: RoomState.maxReasonLength) }
        state.recordingStopped = RecordingStop(by: by, reason: reason?.isEmpty == false ? reason : nil)

    case .streaming(let streaming, _, _):
        let now = streaming.flatMap { $0.to.isEmpty ? nil : $0 }
        if state.streaming == now { return .noChange }
        state.streaming = now

    case .joined, .reconnecting, .reconnected, .error, .inviteLink, .links, .bans, .stats, .networkQuality, .knock,
        .waitingForHost,
        .reaction:
        break
    }
    return nil
}

private func update(_ state: inout RoomState, _ peer: Peer) {
    guard let old = state.peers.updateValue(peer, forKey: peer.id) else { return }
    state.sections.update(old, to: peer, roles: state.roles)
}

private func removePeer(_ state: inout RoomState, _ id: PeerID) -> Peer? {
    guard let peer = state.peers.removeValue(forKey: id) else { return nil }
    state.invitations[id] = nil
    state.sections.remove(peer, roles: state.roles)
    state.speaking.remove(id)
    state.quality[id] = nil
    return peer
}

// MARK: - Local intents

private func perform(_ state: inout RoomState, _ command: Command) -> [Effect] {
    switch command {
    case .help:
        return [.showHelp]
    case .hand:
        return submit(&state, state.me?.handRaisedAt == nil ? .raiseHand : .lowerHand)
    case .raiseHand:
        return submit(&state, .raiseHand)
    case .lowerHand:
        return submit(&state, .lowerHand)
    case .invite(let id):
        return submit(&state, .invite(id))
    case .inviteNext:
        // Whether this person may invite at all comes first, as for the screen's n.
        if let me = state.me, !state.roles.can(me.role, .invite) {
            return [.notice(Notice(.refusal, state.roles.refusal(lacking: .invite).reason))]
        }
        guard !state.raisedHands.isEmpty else { return [.notice(Notice(.info, "no raised hands to invite"))] }
        guard let next = state.nextHandToInvite else {
            return [.notice(Notice(.info, "every raised hand is invited already; /withdraw NAME takes one back"))]
        }
        return submit(&state, .invite(next.id))
    case .withdraw(let id):
        return submit(&state, .withdrawInvite(id))
    case .accept:
        return submit(&state, .acceptInvite)
    case .decline:
        return submit(&state, .declineInvite)
    case .move(let id, let role):
        if id == state.selfID && role == .audience { return submit(&state, .stepDown) }
        return submit(&state, .setRole(id, role))
    case .mute(let id):
        return submit(&state, id == state.selfID ? .setMute(true) : .mutePeer(id))
    case .unmute:
        return submit(&state, .setMute(false))
    case .muteAll:
        return submit(&state, .muteAll)
    case .lowerHandOf(let id):
        return submit(&state, .lowerHandOf(id))
    case .clearHands:
        return submit(&state, .clearHands)
    case .handsAllowed(let allowed):
        return submit(&state, .setHandsAllowed(allowed))
    case .remove(let id, let reason, let withdrawLink, let ban):
        return submit(&state, .remove(id, reason: reason, withdrawLink: withdrawLink, ban: ban))
    case .chat(let text):
        return submit(&state, .chat(text, to: .everyone))
    case .dm(let id, let text):
        return submit(&state, .chat(text, to: .peer(id)))
    case .toRole(let role, let text):
        return submit(&state, .chat(text, to: .role(role)))
    case .topic(let text):
        return submit(&state, .setTopic(text))
    case .end(let reason):
        return submit(&state, .endRoom(reason: reason))
    case .leave:
        return submit(&state, .leave)
    case .listed(let listed):
        return submit(&state, .setListed(listed))
    case .link(let role, let ttl, let uses):
        return submit(&state, .createLink(role: role, ttl: ttl ?? ClientRequest.defaultLinkLifetime, maxUses: uses))
    case .links:
        return submit(&state, .listLinks)
    case .revoke(let link):
        return submit(&state, .revokeLink(link))
    case .bans:
        return submit(&state, .listBans)
    case .unban(let who):
        return submit(&state, .unban(who))
    case .locked(let locked):
        return submit(&state, .setLocked(locked))
    case .record(let start):
        return submit(&state, start ? .startRecording : .stopRecording)
    case .admit(let name):
        return submit(&state, .admitWaiting(name))
    case .deny(let name):
        return submit(&state, .denyWaiting(name))
    case .react(let reaction):
        return submit(&state, .react(reaction))
    case .stats:
        return submit(&state, .stats)
    case .stream(.start(let name)):
        return submit(&state, .startStream(name))
    case .stream(.stop(let name)):
        return submit(&state, .stopStream(name))
    case .stream(.list), .volume, .who, .showTopic, .notify, .retry, .play:
        // Local to this client: the app answers them from its own state or its connection; the server never
        // hears of them.
        return []
    }
}

/// Sends a request if the local checks pass, or says why not. Never changes roles, hands or mutes itself.
private func submit(_ state: inout RoomState, _ request: ClientRequest) -> [Effect] {
    if case .leave = request {
        return state.ending == nil && state.hasJoined ? [.send(.leave), .leave] : [.leave]
    }
    if let refusal = refusal(for: request, in: state) {
        return [.notice(Notice(.refusal, refusal.reason))]
    }
    switch request {
    case .acceptInvite, .declineInvite:
        // The question is answered; what follows (a role change or not) comes from the server.
        state.invitation = nil
    default:
        break
    }
    return [.send(request)]
}

private func refusal(for request: ClientRequest, in state: RoomState) -> Refusal? {
    switch state.ending {
    case .removed: return Refusal("you were removed from this room")
    case .ended: return Refusal("the room has ended")
    case nil: break
    }
    guard let me = state.me else { return Refusal("not in the room yet; wait for the connection") }
    if case .reconnecting = state.connection { return Refusal("reconnecting; try again in a moment") }

    var target: Peer?
    if let id = request.target {
        guard let peer = state.peers[id] else { return Refusal("\(id) is not in the room") }
        target = peer
    }
    if let refusal = state.roles.check(request, by: me, target: target) { return refusal }

    switch request {
    case .raiseHand:
        if state.roles.isOnStage(me.role) { return Refusal("you are already on the stage") }
        if me.handRaisedAt != nil { return Refusal("your hand is already raised") }
    case .lowerHand:
        if me.handRaisedAt == nil { return Refusal("your hand is not raised") }
    case .acceptInvite, .declineInvite:
        if state.invitation == nil { return Refusal("there is no invitation to answer") }
    case .invite:
        if let target, target.id == me.id { return Refusal("you cannot invite yourself") }
        if let target, let pending = state.invitations[target.id] {
            let by = pending.by == me.id ? "you" : state.peers[pending.by]?.name ?? pending.by.rawValue
            return Refusal("\(target.name) is already invited (by \(by)); /withdraw \(target.name) takes it back")
        }
    case .withdrawInvite:
        if let target, state.invitations[target.id] == nil {
            return Refusal("\(target.name) has no pending invitation")
        }
    case .setRole(let id, let role) where id == me.id:
        if state.roles.rank(of: role) < state.roles.rank(of: me.role) {
            guard let limit = state.stepUpRole else {
                return Refusal("you cannot raise your own role; a host or moderator can move you")
            }
            if state.roles.rank(of: role) < state.roles.rank(of: limit) {
                return Refusal("you can step back up to \(English.article(limit.rawValue)) at most")
            }
        }
    case .setMute(let muted):
        if me.muted == muted { return Refusal(muted ? "you are already muted" : "you are not muted") }
    case .mutePeer:
        if let target, target.muted { return Refusal("\(target.name) is already muted") }
    case .lowerHandOf:
        if let target, target.handRaisedAt == nil { return Refusal("\(target.name)'s hand is not raised") }
    case .clearHands:
        if state.roles.loweredByClearHands(me, among: state.raisedHands).isEmpty {
            return Refusal(RoleTable.noHandsToLower)
        }
    case .muteAll:
        if state.roles.mutedByMuteAll(me, among: state.stage).isEmpty { return Refusal(RoleTable.nobodyToMute) }
    case .chat(let text, let audience):
        if text.trimmingWhitespace().isEmpty { return Refusal("nothing to send") }
        if text.count > ChatMessage.maxLength {
            return Refusal("the message is too long (\(ChatMessage.maxLength) characters at most)")
        }
        if case .role(let role) = audience, !state.roles.contains(role) {
            return Refusal("there is no role called \(role)")
        }
        if case .role(let role) = audience,
            !state.peers.values.contains(where: { $0.id != me.id && state.roles.receives($0.role, messageTo: role) })
        {
            return Refusal(state.roles.nobodyReceives(messageTo: role))
        }
        if case .peer(let id) = audience, id == me.id { return Refusal("you cannot message yourself") }
    case .setTopic(let topic):
        if topic.count > RoomState.maxTopicLength {
            return Refusal("the topic is too long (\(RoomState.maxTopicLength) characters at most)")
        }
    case .setListed(let listed):
        if state.listed == listed {
            return Refusal(listed ? "the room is already listed in the lobby" : "the room is already unlisted")
        }
    case .startRecording:
        if state.recording != nil { return Refusal(ClientRequest.alreadyRecording) }
    case .stopRecording:
        if state.recording == nil { return Refusal(ClientRequest.notRecording) }
    case .startStream(let name):
        if state.streaming?.to.contains(name) == true { return Refusal(ClientRequest.alreadyStreaming(to: name)) }
        if !state.streamDestinations.isEmpty, !state.streamDestinations.contains(name) {
            return Refusal(ClientRequest.noSuchStream(name, destinations: state.streamDestinations))
        }
    case .stopStream(let name):
        if state.streaming?.to.contains(name) != true { return Refusal(ClientRequest.notStreaming(to: name)) }
    case .recorderError(let reason):
        if reason.count > ClientRequest.maxRecorderErrorLength {
            return Refusal("the reason is too long (\(ClientRequest.maxRecorderErrorLength) characters at most)")
        }
    default:
        break
    }
    return nil
}

extension String {
    func trimmingWhitespace() -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return Substring(scalars[first...last])
    }
}
