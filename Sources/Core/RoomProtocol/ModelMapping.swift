import RoomCore

/// The one mapping between the protocol and RoomCore's client state.
///
/// Requests need none: a `ClientMessage` carries RoomCore's `ClientRequest` itself, and peers, chat, levels and
/// the role table travel as RoomCore's own types (`ControlCodec` writes and reads them). What remains is the
/// point of view: the server announces a room to everyone, and a client's store applies what concerns it. This
/// file says, for every server message, which `RoomAction`s a client's store receives.
extension ServerMessage {
    /// The actions for this message as the client `selfID` applies it, in order: none when the store has no use
    /// for it, one per peer for a `peers_joined` or `peers_left` (each with its own sequence number). `selfID` is
    /// this client's identity once known (from the last `joined`).
    public func roomActions(selfID: PeerID?, linkBase: ServerAddress? = nil) -> [RoomAction] {
        let last = max(0, seq ?? 0)
        func numbered(_ events: [ServerEvent]) -> [RoomAction] {
            let first = last - Int64(events.count) + 1
            return events.enumerated().map { index, event in
                .server(event, seq: UInt64(max(0, first + Int64(index))))
            }
        }
        switch event {
        case .peersJoined(let peers): return numbered(peers.map { .peerJoined($0.peer, invitation: $0.invitation) })
        case .peersLeft(let departures): return numbered(departures.map { .peerLeft($0.peer) })
        default: break
        }
        guard let event = roomEvent(selfID: selfID, linkBase: linkBase) else { return [] }
        return [.server(event, seq: UInt64(max(0, seq ?? 0)))]
    }

    /// RoomCore's event for this message, or nil when it is not for this client's store (a `peers_joined` or
    /// `peers_left`, which `roomActions` splits). An invite link becomes the
    /// whole link on the server the client reached (`linkBase`); without one the client cannot show it, and it is
    /// skipped.
    public func roomEvent(selfID: PeerID?, linkBase: ServerAddress? = nil) -> ServerEvent? {
        switch event {
        case .joined(let snapshot):
            let me = snapshot.peers.first { $0.peer.id == snapshot.selfID }
            var invitations: [PeerID: Invitation] = [:]
            for announced in snapshot.peers {
                if let invitation = announced.invitation, Self.actor(invitation.by) != nil {
                    invitations[announced.peer.id] = invitation
                }
            }
            return .joined(
                RoomSnapshot(
                    roomID: snapshot.room, topic: snapshot.topic, selfID: snapshot.selfID,
                    peers: snapshot.peers.map(\.peer), recentChat: snapshot.chat, ended: false,
                    seq: UInt64(max(0, seq ?? 0)), invitations: invitations, stepUp: me?.stepUp,
                    tokenRole: snapshot.tokenRole, listed: snapshot.listed, recording: snapshot.recording,
                    streaming: snapshot.streaming, streamDestinations: snapshot.streamDestinations,
                    hostlessEnding: snapshot.ending, handsAllowed: snapshot.handsAllowed))
        case .peerJoined(let announced): return .peerJoined(announced.peer, invitation: announced.invitation)
        case .peersJoined, .peersLeft: return nil
        case .peerLeft(let id, _): return .peerLeft(id)
        case .roleChanged(let id, let role, let by, let stepUp):
            return .roleChanged(id, to: role, by: Self.actor(by), stepUp: stepUp)
        case .handRaised(let id, let at): return .handRaised(id, at: at)
        case .handLowered(let id, let by): return .handLowered(id, by: Self.actor(by))
        case .muteChanged(let id, let muted, let by): return .muteChanged(id, muted: muted, by: Self.actor(by))
        case .micChanged(let id, let working): return .micChanged(id, working: working)
        case .playingChanged(let id, let playing): return .playingChanged(id, playing: playing)
        case .speakers(let levels): return .speakers(levels)
        case .networkQuality(let peers): return .networkQuality(peers)
        case .reaction(let burst): return .reaction(burst)
        case .chat(let message): return .chat(message)
        case .invited(let id, let by, let at): return .invited(id, by: by, at: at)
        case .inviteDeclined(let id, _): return .inviteDeclined(id)
        case .inviteWithdrawn(let id, let by): return .inviteWithdrawn(id, by: Self.actor(by))
        case .inviteExpired(let id): return .inviteExpired(id)
        case .handsAllowed(let allowed, let by): return .handsAllowed(allowed, by: Self.actor(by))
        case .roomEnding(let id, let name, let at): return .roomEnding(id, name: name, at: at)
        case .askedToMute(_, let by): return .askedToMute(by: by)
        case .removed(let id, let by, let reason): return .removed(id, reason: reason, by: Self.actor(by))
        case .roomEnded(_, let reason): return .roomEnded(reason: reason)
        case .topicChanged(let topic, let by): return .topicChanged(topic, by: Self.actor(by))
        case .listingChanged(let listed, let by): return .listingChanged(listed: listed, by: Self.actor(by))
        case .recording(let recording, let by, let reason): return .recording(recording, by: by, reason: reason)
        case .streaming(let streaming, let by, let reason): return .streaming(streaming, by: by, reason: reason)
        case .inviteLink(let room, let role, let token, let expiresAt, _):
            guard let linkBase else { return nil }
            return .inviteLink(
                InviteLink(
                    room: room, role: role, link: linkBase.link(room: room, invite: token), expiresAt: expiresAt))
        case .links(_, let links, let withdrawn, let locked, _):
            return .links(links, withdrawn: withdrawn, locked: locked)
        case .bans(let bans, let lifted, _):
            return .bans(bans, lifted: lifted)
        case .stats(let people, _): return .stats(people)
        case .knock(_, let knock): return .knock(knock)
        case .waiting: return .waitingForHost
        case .error(let code, let text, _): return .error(code: code.rawValue, message: text)
        }
    }

    /// The peer who made a change, or nil when the server made it itself (the wire's `by` is then empty).
    static func actor(_ by: PeerID) -> PeerID? {
        by.rawValue.isEmpty ? nil : by
    }
}
