import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTokens
import RoomTransport
import WebSocket

/// What a connection's token lets it do: open a room as someone, or watch the lobby. Room tokens name their
/// holder; invites admit whoever holds them, each as the identity their client's key gives (`ServerKeys`).
/// Every refusal has its own close code and sentence (`docs/protocol.md`).
/// Who a connection's credential lets in: identity, shown name, role, the invite it came by (nil for a room
/// token), whether only a returning member may use it (a lobby link to a room the lobby does not list), and
/// whether it came from the lobby.
typealias Admitted = (
    id: PeerID, name: String, role: RoleName, invite: InviteClaims?, onlyIfReturning: Bool, fromLobby: Bool
)

extension ServerState {
    /// Why a connection is refused: the close code and sentence it gets, and the detail for the log.
    struct DoorRefusal: Error {
        var code: UInt16
        var reason: String
        var detail: String

        init(_ close: (code: UInt16, reason: String), detail: String) {
            code = close.code
            reason = close.reason
            self.detail = detail
        }

        init(_ error: TokenError) {
            code = error.closeCode
            reason = error.closeReason
            detail = error.description
        }
    }

    /// Who a connection to `room` is, or why it may not come in.
    func admission(
        to room: String, request: WebSocketUpgradeRequest, now: Timestamp
    ) -> Result<Admitted, DoorRefusal> {
        let credential: TokenCredential
        switch verify(request) {
        case .success(let verified): credential = verified
        case .failure(let refusal): return .failure(refusal)
        }
        let roles = configuration.roles
        switch credential {
        case .person(let claims):
            // Bytes, not String equality: rooms are named by their exact text.
            guard claims.room.utf8.elementsEqual(room.utf8) else {
                return .failure(DoorRefusal(.wrongRoom(tokenRoom: claims.room, requestedRoom: room)))
            }
            guard roles.contains(RoleName(claims.role)) else { return .failure(DoorRefusal(.unknownRole(claims.role))) }
            guard claims.subject.utf8.count <= ControlLimits.maxIdentityBytes, !claims.subject.isEmpty else {
                return .failure(DoorRefusal(ServerClose.identityUnusable, detail: "identity too long"))
            }
            return .success((PeerID(claims.subject), claims.name, RoleName(claims.role), nil, false, false))
        case .invite(let claims):
            if let invited = claims.room, !invited.utf8.elementsEqual(room.utf8) {
                return .failure(DoorRefusal(.wrongRoom(tokenRoom: invited, requestedRoom: room)))
            }
            guard roles.contains(RoleName(claims.role)) else { return .failure(DoorRefusal(.unknownRole(claims.role))) }
            // A server invite opens only rooms this server's lobby shows: an unlisted room is refused exactly like
            // a room that does not exist, so an invite holder learns nothing of it. A room the lobby does not show
            // now may still be one its members are coming back to (after a restart, no room is listed until
            // someone is in it again): a server alone lets its room decide whether this is a returning member.
            var onlyIfReturning = false
            if claims.room == nil, directory.listings[room] == nil {
                guard rooms is LocalRooms else {
                    return .failure(
                        DoorRefusal(
                            ServerClose.notListed, detail: "server invite \(claims.id) for room \(room), not listed"))
                }
                onlyIfReturning = true
            }
            guard let identity = guestIdentity(of: request) else {
                return .failure(
                    DoorRefusal(ServerClose.guestKeyMissing, detail: "invite \(claims.id) without a guest key"))
            }
            let name = DisplayName.sanitize(GuestHeaders.decodeName(request.headers[GuestHeaders.name]) ?? "")
            return .success(
                (
                    identity, name.isEmpty ? "Guest" : name, RoleName(claims.role), claims, onlyIfReturning,
                    claims.room == nil
                ))
        }
    }

    /// The identity an invite holder's client key gives (`GuestHeaders`); nil when it sent none that works.
    func guestIdentity(of request: WebSocketUpgradeRequest) -> PeerID? {
        guard let key = GuestHeaders.decodeKey(request.headers[GuestHeaders.key]),
            let identity = verifier.keys.guestIdentity(key: key)
        else { return nil }
        return PeerID(identity)
    }

    /// Whether a connection may watch the lobby: only with a server invite.
    func lobbyAdmission(request: WebSocketUpgradeRequest) -> Result<InviteClaims, DoorRefusal> {
        switch verify(request) {
        case .failure(let refusal): return .failure(refusal)
        case .success(.person):
            return .failure(DoorRefusal(ServerClose.notServerInvite, detail: "a room token at the directory"))
        case .success(.invite(let claims)):
            guard claims.room == nil else {
                return .failure(
                    DoorRefusal(ServerClose.notServerInvite, detail: "room invite \(claims.id) at the directory"))
            }
            guard configuration.roles.contains(RoleName(claims.role)) else {
                return .failure(DoorRefusal(.unknownRole(claims.role)))
            }
            return .success(claims)
        }
    }

    private func verify(_ request: WebSocketUpgradeRequest) -> Result<TokenCredential, DoorRefusal> {
        guard let token = request.bearerToken, !token.isEmpty else {
            return .failure(DoorRefusal(ServerClose.tokenMissing, detail: "no token"))
        }
        do throws(TokenError) {
            // Roles are checked after the room, as the protocol's order of refusals says.
            return .success(try verifier.verifyCredential(token, now: currentTimestamp() / 1000) { _ in true })
        } catch {
            return .failure(DoorRefusal(error))
        }
    }

    /// A connection to `/rooms`: a lobby watching the list of live rooms.
    func openedLobby(_ connection: WebSocketConnection) {
        guard let request = connection.request else { return }
        switch lobbyAdmission(request: request) {
        case .failure(let refusal):
            log.info("\(connection): refused at the lobby: \(refusal.detail)")
            connection.close(code: WebSocketCloseCode(refusal.code), reason: refusal.reason)
        case .success(let claims):
            let identity = guestIdentity(of: request)
            if let identity, let ban = door.ban(of: identity) {
                let refusal = InviteDoor.refusal(ban, link: claims.id)
                log.info("\(connection): refused at the lobby: \(refusal.detail)")
                connection.close(code: WebSocketCloseCode(refusal.code), reason: refusal.reason)
                return
            }
            guard directory.hasRoom else {
                log.warning("\(connection): refused at the lobby: \(directory.maxWatchers) watchers already")
                connection.close(
                    code: WebSocketCloseCode(ServerClose.lobbyFull.code), reason: ServerClose.lobbyFull.reason)
                return
            }
            directory.watch(
                connection,
                welcome: .welcome(openRooms: openRoomsRule, mayOpen: mayOpenRooms(claims, identity: identity)))
            log.info("\(connection): watching the lobby (invite \(claims.id), \(claims.role))")
        }
    }
}

/// Signs the invite links a room agreed to make (`Outcome.grants`) and sends each to its requester alone, when
/// the outcome is published: after its audit entry is committed, like every other answer of the room.
///
/// Loop thread only (like the rest of `ServerState`).
///
/// It also keeps the link registry in step with the room: a person lowered by someone else loses the links they
/// made for roles above their new one, a person removed loses all of theirs (and stays out, across restarts,
/// until the room ends).
final class LinkSigner: OutcomeConsumer, @unchecked Sendable {
    let connections: Connections
    let issuer: TokenIssuer
    let log: ServerLog
    let registry: LinkRegistry?
    let roles: RoleTable

    init(connections: Connections, issuer: TokenIssuer, log: ServerLog, registry: LinkRegistry?, roles: RoleTable) {
        self.connections = connections
        self.issuer = issuer
        self.log = log
        self.registry = registry
        self.roles = roles
    }

    package func consume(_ outcome: Outcome, in room: String) {
        if let registry {
            follow(outcome, in: room, registry: registry)
            for request in outcome.linkRequests { answer(request, registry: registry) }
        }
        guard !outcome.grants.isEmpty else { return }
        let members = connections.members(of: room)
        for grant in outcome.grants {
            // The requester left before its link was ready: nobody to give it to.
            guard let entry = members[grant.peer] else { continue }
            let now = currentTimestamp() / 1000
            do {
                let (token, claims) = try issuer.signedInvite(
                    role: grant.role.rawValue, room: grant.room, ttl: grant.ttl, now: now,
                    creator: grant.peer.rawValue, maxUses: grant.maxUses)
                // So that the room's hosts see it in /links before anyone used it.
                try? registry?.register(LinkRecord(claims))
                entry.send(
                    ServerMessage(
                        .inviteLink(
                            room: grant.room, role: grant.role, token: token, expiresAt: (now + grant.ttl) * 1000,
                            id: grant.requestID), seq: nil))
                log.info(
                    "room \(grant.room): \(grant.peer) made link \(claims.id) for \(grant.role) valid \(grant.ttl) s")
            } catch {
                entry.send(
                    ServerMessage(
                        .error(
                            code: .internal, message: "the link could not be signed; try again", id: grant.requestID),
                        seq: nil))
            }
        }
    }
}

extension LinkSigner {
    /// Keeps the registry in step with what the room decided: links of people lowered by others or removed are
    /// withdrawn, removals are remembered until the room ends.
    func follow(_ outcome: Outcome, in room: String, registry: LinkRegistry) {
        let now = currentTimestamp() / 1000
        // The recorders an outcome that stops the recording removes are not kept out: the room may be recorded
        // again, by the same identity (the server's own recorder is always `recorder`).
        let stopsRecording =
            outcome.recorderOrders.contains {
                if case .stop = $0 { return true }
                return false
            }
            || outcome.streamOrders.contains {
                if case .stop = $0 { return true }
                return false
            }
        for delivery in outcome.deliveries {
            do {
                switch delivery.message.event {
                case .roomEnded:
                    // A room that ends forgets who was removed and whether it was locked: it starts afresh.
                    try registry.forgetRemovals(from: room)
                    try registry.setLocked(false, room: room, at: now)
                case .roleChanged(let peer, let role, let by, _) where by != peer:
                    let above = Set(
                        roles.roles.filter { roles.rank(of: $0.name) < roles.rank(of: role) }.map(\.name.rawValue))
                    let withdrawn = try registry.revoke(
                        madeBy: peer.rawValue, in: room, roles: above, by: by.rawValue, at: now)
                    if !withdrawn.isEmpty {
                        log.info(
                            "room \(room): \(peer) was made \(role) by \(by); withdrew their links "
                                + withdrawn.joined(separator: ", "))
                    }
                case .removed(let peer, let by, _) where !stopsRecording:
                    try registry.remember(removal: peer.rawValue, from: room, at: now)
                    let withdrawn = try registry.revoke(
                        madeBy: peer.rawValue, in: room, roles: Set(roles.roles.map(\.name.rawValue)),
                        by: by.rawValue, at: now)
                    if !withdrawn.isEmpty {
                        log.info(
                            "room \(room): \(peer) was removed by \(by); withdrew their links "
                                + withdrawn.joined(separator: ", "))
                    }
                default:
                    break
                }
            } catch {
                log.warning("room \(room): the link registry could not be updated: \(error)")
            }
        }
    }
}

extension LinkSigner {
    /// Carries out a host's `list_links` or `revoke_link`: every node withdraws in its own registry, and the
    /// node of the host's connection answers with the room's links.
    func answer(_ request: LinkRequest, registry: LinkRegistry) {
        let now = currentTimestamp() / 1000
        var withdrawn: [String] = []
        var links: [LinkRecord] = []
        var locked = false
        do {
            if let identity = request.ban {
                try registry.ban(
                    BanRecord(
                        identity: identity.rawValue, name: request.banName, by: request.peer.rawValue,
                        room: request.room, at: now, reason: request.banReason))
                log.info(
                    "room \(request.room): \(request.peer) banned \(identity) from the server's rooms"
                        + (request.banReason.isEmpty ? "" : ": \(request.banReason)"))
                // A ban alone asks for no list of links.
                if request.revoke == nil, request.withdrawUsedBy == nil, request.lock == nil { return }
            }
            if let bans = request.bans {
                answer(bans, of: request, registry: registry)
                return
            }
            if let link = request.revoke {
                if link == ClientRequest.allLinks {
                    let before = try registry.links(room: request.room).filter { $0.revokedAt == nil }.map(\.id)
                    try registry.withdrawAll(room: request.room, by: request.peer.rawValue, at: now)
                    withdrawn = before
                } else if try registry.revoke(link, room: request.room, by: request.peer.rawValue, at: now) {
                    withdrawn = [link]
                }
                log.info(
                    "room \(request.room): \(request.peer) withdrew "
                        + (link == ClientRequest.allLinks ? "every link" : "link \(link)")
                        + (withdrawn.isEmpty ? " (none working)" : ""))
            }
            if let identity = request.withdrawUsedBy {
                withdrawn = try registry.revoke(
                    usedBy: identity.rawValue, in: request.room, by: request.peer.rawValue, at: now)
                log.info(
                    "room \(request.room): \(request.peer) removed \(identity) and withdrew the links that let them in: "
                        + (withdrawn.isEmpty ? "none" : withdrawn.joined(separator: ", ")))
            }
            if let lock = request.lock {
                try registry.setLocked(lock, room: request.room, at: now)
                log.info(
                    "room \(request.room): \(request.peer) \(lock ? "locked the room to newcomers with links" : "unlocked the room")"
                )
            }
            links = try registry.links(room: request.room)
            locked = try registry.isLocked(request.room)
        } catch {
            log.warning("room \(request.room): the link registry could not be used: \(error)")
            connections.members(of: request.room)[request.peer]?.send(
                ServerMessage(
                    .error(
                        code: .internal, message: "the room's links could not be read; try again", id: request.requestID
                    ),
                    seq: nil))
            return
        }
        guard let entry = connections.members(of: request.room)[request.peer] else { return }
        // The newest first, at most the last 50: a host's view, not the operator's (`clubroom links`).
        let shown = links.prefix(50).map { link in
            RoomLink(
                id: link.id, role: RoleName(link.role), by: PeerID(link.creator), expiresAt: link.expiresAt * 1000,
                uses: link.uses, maxUses: link.maxUses, withdrawn: link.revokedAt != nil)
        }
        entry.send(
            ServerMessage(
                .links(
                    room: request.room, links: Array(shown), withdrawn: withdrawn, locked: locked, id: request.requestID
                ), seq: nil))
    }
}

extension LinkSigner {
    /// Carries out a host's `list_bans` or `unban`: every node lifts in its own registry, and the node of the
    /// host's connection answers with the server's bans.
    func answer(_ bans: LinkRequest.BanRequest, of request: LinkRequest, registry: LinkRegistry) {
        let entry = connections.members(of: request.room)[request.peer]
        do {
            var lifted: [String] = []
            if case .lift(let who) = bans {
                guard let identity = try registry.bannedIdentity(named: who) else {
                    entry?.send(
                        ServerMessage(
                            .error(
                                code: .notFound, message: "no one banned is called \(who); /bans lists who is",
                                id: request.requestID), seq: nil))
                    return
                }
                if try registry.lift(ban: identity) { lifted = [identity] }
                log.info("room \(request.room): \(request.peer) lifted the ban of \(identity)")
            }
            let shown = try registry.bans().prefix(50).map { ban in
                RoomBan(
                    identity: PeerID(ban.identity), name: ban.name, by: PeerID(ban.by), at: ban.at * 1000,
                    reason: ban.reason)
            }
            entry?.send(ServerMessage(.bans(bans: Array(shown), lifted: lifted, id: request.requestID), seq: nil))
        } catch {
            log.warning("room \(request.room): the bans could not be used: \(error)")
            entry?.send(
                ServerMessage(
                    .error(
                        code: .internal, message: "the server's bans could not be read; try again",
                        id: request.requestID),
                    seq: nil))
        }
    }
}
