import Platform
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTransport
import WebSocket

/// A lobby's `open_room`: checked (the server's policy, the lobby link's role, the room's name, that no room of
/// that name exists), then acted on (the room is made in the store with its topic, and the asker gets a host's
/// link for it, for one person, which the lobby enters it with).
///
/// Loop thread only (like the rest of `ServerState`).
extension ServerState {
    /// How long the host's link to a room opened from the lobby lasts: long enough to walk in, and to come back
    /// after a dropped connection; the host makes lasting links from inside the room.
    static let openedRoomLinkLifetime: Int64 = 24 * 3600

    /// Whether the lobby link a watcher came with lets it open rooms here, as the lobby is told when it connects:
    /// only a watcher whose client said who it is (`GuestHeaders`) may, as only an identity can be checked for a ban.
    func mayOpenRooms(_ claims: InviteClaims, identity: PeerID?) -> Bool {
        guard cluster == nil, identity != nil else { return false }
        switch configuration.openRooms {
        case .nobody: return false
        case .hosts: return configuration.roles.can(RoleName(claims.role), .endRoom)
        case .anyone: return true
        }
    }

    /// The rule a lobby is told: nobody opens rooms on a cluster's node, whatever the option says.
    var openRoomsRule: OpenRoomsPolicy { cluster == nil ? configuration.openRooms : .nobody }

    /// Why `open_room` may not go ahead, as the lobby is answered.
    struct OpenRoomRefusal: Error {
        var code: ErrorCode
        var message: String
    }

    /// Whether `open_room` may go ahead, checked before any room is looked up: who asks, or why they may not.
    func openRoomCheck(name: String, request: WebSocketUpgradeRequest?) -> Result<PeerID, OpenRoomRefusal> {
        if cluster != nil {
            return .failure(
                OpenRoomRefusal(
                    code: .forbidden,
                    message: "This server is one node of a cluster, where rooms are not opened from the lobby; ask "
                        + "its operator for a host's link (clubroom invite --room NAME --role host)."))
        }
        switch configuration.openRooms {
        case .nobody:
            return .failure(
                OpenRoomRefusal(
                    code: .forbidden,
                    message: "This server does not let people open rooms from the lobby; ask its operator for a "
                        + "host's link (clubroom invite --room NAME --role host)."))
        case .hosts:
            guard let request, case .success(let claims) = lobbyAdmission(request: request),
                configuration.roles.can(RoleName(claims.role), .endRoom)
            else {
                return .failure(
                    OpenRoomRefusal(
                        code: .forbidden,
                        message: "On this server only people who came in with a host's lobby link open rooms; ask a "
                            + "host for one."))
            }
        case .anyone:
            // The lobby link is checked again: it may have expired or been withdrawn since the lobby opened.
            guard let request, case .success = lobbyAdmission(request: request) else {
                return .failure(
                    OpenRoomRefusal(
                        code: .forbidden,
                        message: "Your lobby link no longer opens rooms here; ask the host for a new one."))
            }
        }
        guard let request, let identity = guestIdentity(of: request) else {
            return .failure(
                OpenRoomRefusal(
                    code: .forbidden,
                    message: "Opening a room needs your client's key, which Clubroom sends only over wss:// or to "
                        + "this machine; ask the host for a wss:// link."))
        }
        if let ban = door.ban(of: identity) {
            log.info("open_room by \(identity) refused: banned by \(ban.by)")
            return .failure(OpenRoomRefusal(code: .forbidden, message: ServerClose.banned.reason))
        }
        guard PlainName.isValid(name) else {
            return .failure(
                OpenRoomRefusal(
                    code: .badRequest,
                    message: "A room's name is 1 to 64 letters, digits, dashes (-), underscores (_) or dots (.), "
                        + "with no spaces."))
        }
        return .success(identity)
    }

    /// Carries out a lobby's `open_room`, answering `connection` with `room_opened` or an `error` naming `id`.
    func openRoom(name: String, topic: String, id: String, from connection: some DirectoryWatcher) {
        let identity: PeerID
        switch openRoomCheck(name: name, request: (connection as? WebSocketConnection)?.request) {
        case .success(let opener): identity = opener
        case .failure(let refusal):
            log.info("\(connection): open_room \(name.prefix(64).debugDescription) refused: \(refusal.message)")
            directory.answer(.refused(code: refusal.code, message: refusal.message, id: id), to: connection)
            return
        }
        if let earlier = unenteredOpening(name, by: identity) {
            // The opener asks again for a room nobody has entered: the answer with its link was lost (the lobby's
            // connection dropped before it came). The earlier link is withdrawn and a new one given.
            try? door.registry?.revoke(earlier, room: name, by: identity.rawValue, at: currentTimestamp() / 1000)
            log.info("\(connection): open_room \(name) asked again by its opener: a new host's link")
            answerOpened(name: name, id: id, by: identity, at: currentTimestamp(), for: connection)
            return
        }
        let taken = DirectoryMessage.refused(
            code: .conflict,
            message: "A room called \(name) exists already on this server; choose another name, or join it from the "
                + "list if it is live.", id: id)
        if openingRooms.contains(name) || isLiveOrLoaded(name) {
            directory.answer(taken, to: connection)
            return
        }
        openingRooms.insert(name)
        let now = currentTimestamp()
        // The store says whether it ever had the room (ended or not, listed or not); a new one is made there.
        persistence.load(name, now: now, create: false) { [self] result in
            switch result {
            case .failure(let error):
                openingRooms.remove(name)
                log.warning("open_room \(name): the store could not be read: \(error.problem)")
                directory.answer(
                    .refused(code: .internal, message: "The room could not be opened now; try again.", id: id),
                    to: connection)
            case .success(let saved) where saved.exists:
                openingRooms.remove(name)
                directory.answer(taken, to: connection)
            case .success:
                // The name stays in `openingRooms`: the database learns of the room from the change journal a
                // moment later, and a second ask meanwhile must not find it free.
                opened(name: name, topic: topic, id: id, by: identity, at: now, for: connection)
            }
        }
    }

    /// The role a room's opener gets: the highest that may end rooms (`host` in the built-in table).
    var hostRole: RoleName {
        configuration.roles.roles.filter { $0.permissions.contains(.endRoom) }.min { $0.rank < $1.rank }?.name
            ?? .host
    }

    /// The id of the host's link `identity` was given when it opened `name` from the lobby, while nobody has
    /// come in with it and the room is not live: nil otherwise.
    private func unenteredOpening(_ name: String, by identity: PeerID) -> String? {
        guard let earlier = lobbyOpeners[name], earlier.opener == identity, !isLiveOrLoaded(name),
            let link = (try? door.registry?.links(room: name))?.first(where: { $0.id == earlier.link }),
            link.uses == 0, link.revokedAt == nil, link.expiresAt > currentTimestamp() / 1000
        else { return nil }
        return earlier.link
    }

    /// Whether a room of that name is in the lobby's list or loaded here.
    private func isLiveOrLoaded(_ name: String) -> Bool {
        directory.listings[name] != nil || (rooms as? LocalRooms)?.isKnown(name) == true
    }

    private func opened(
        name: String, topic: String, id: String, by opener: PeerID, at now: Timestamp,
        for connection: some DirectoryWatcher
    ) {
        let clean = DisplayName.sanitizeLine(topic, maxGraphemes: RoomState.maxTopicLength)
        persistence.store.commit(
            [.openRoom(room: name, at: now)] + (clean.isEmpty ? [] : [.setTopic(room: name, topic: clean, at: now)])
        ) { _ in }
        log.info("\(connection): opened room \(name) from the lobby")
        answerOpened(name: name, id: id, by: opener, at: now, for: connection)
    }

    /// Answers the opener of `name` with `room_opened` and a new host's link for one person.
    private func answerOpened(
        name: String, id: String, by opener: PeerID, at now: Timestamp, for connection: some DirectoryWatcher
    ) {
        let invite: String
        do {
            let (token, claims) = try verifier.issuer.signedInvite(
                role: hostRole.rawValue, room: name, ttl: Self.openedRoomLinkLifetime, now: now / 1000,
                creator: nil, maxUses: 1)
            try? door.registry?.register(LinkRecord(claims))
            lobbyOpeners[name] = (opener, claims.id)
            invite = token
        } catch {
            directory.answer(
                .refused(code: .internal, message: "The room's host link could not be signed; try again.", id: id),
                to: connection)
            return
        }
        directory.answer(.opened(room: name, invite: invite, id: id), to: connection)
    }
}
