import RoomCore
import RoomProtocol
import RoomTransport
import WebSocket

/// A connection's way in and out: its token is checked before any room state is sent, its peer joins its
/// room (taking over from an older connection of the same identity), and its close is the peer's leave.
extension ServerState {
    func opened(_ connection: WebSocketConnection) {
        guard let request = connection.request else { return }
        if RoomServerRuntime.isDirectoryPath(request.path) {
            openedLobby(connection)
            return
        }
        guard let roomName = request.room else {
            connection.close(code: .policyViolation, reason: "no room")
            return
        }
        let now = currentTimestamp()
        let admitted: Admitted
        switch admission(to: roomName, request: request, now: now) {
        case .success(let who): admitted = who
        case .failure(let refusal):
            log.info("\(connection): refused for room \(roomName): \(refusal.detail)")
            connection.close(code: WebSocketCloseCode(refusal.code), reason: refusal.reason)
            return
        }
        // A recorder may say who asked for the recording; nobody else's header is read.
        var startedBy: PeerID?
        var stream: String?
        if admitted.role == .recorder {
            do throws(ControlDecodeError) {
                startedBy = try ControlCodec.decodeStartedBy(request.headers[ControlCodec.startedByHeader])
                stream = try ControlCodec.decodeStreamHeader(request.headers[ControlCodec.streamHeader])
            } catch {
                log.info("\(connection): refused for room \(roomName): \(error.message)")
                connection.close(
                    code: WebSocketCloseCode(ServerClose.startedByUnreadable.code),
                    reason: ServerClose.startedByUnreadable.reason)
                return
            }
        }
        let refusal =
            if let invite = admitted.invite {
                door.check(invite, identity: admitted.id, room: roomName, connection: connection, now: now)
            } else {
                door.removal(of: admitted.id, from: roomName)
            }
        if let refusal, refusal.code == ServerClose.roomLocked.code, let invite = admitted.invite {
            // A newcomer at a locked room waits for a host's answer instead of being turned away.
            let waiter = WaitingRoom.Waiter(
                connection: connection, peer: admitted.id, name: admitted.name, since: now,
                enter: { [self] in
                    let now = currentTimestamp()
                    if let refusal = door.check(
                        invite, identity: admitted.id, room: roomName, connection: connection, now: now,
                        admittedByHost: true)
                    {
                        log.info("\(connection): refused for room \(roomName): \(refusal.detail)")
                        connection.close(code: WebSocketCloseCode(refusal.code), reason: refusal.reason)
                        return
                    }
                    enter(connection, admitted, room: roomName, now: now, startedBy: startedBy, stream: stream)
                })
            if !waitingRoom.hold(waiter, room: roomName) {
                log.info("\(connection): refused for room \(roomName): \(refusal.detail), and the door is full")
                connection.close(
                    code: WebSocketCloseCode(ServerClose.waitersFull.code), reason: ServerClose.waitersFull.reason)
            }
            return
        }
        if let refusal {
            log.info("\(connection): refused for room \(roomName): \(refusal.detail)")
            connection.close(code: WebSocketCloseCode(refusal.code), reason: refusal.reason)
            return
        }
        enter(connection, admitted, room: roomName, now: now, startedBy: startedBy, stream: stream)
    }

    /// Registers a connection that passed the door and asks its room to take the join.
    private func enter(
        _ connection: WebSocketConnection,
        _ admitted: Admitted,
        room roomName: String, now: Timestamp, startedBy: PeerID?, stream: String?
    ) {
        let id = admitted.id
        let entry = ConnectionEntry(
            connection: connection, room: roomName, peer: id,
            bucket: LeakyBucket(capacity: configuration.rateBurst, drainPerSecond: configuration.ratePerSecond))
        connections.register(entry)
        // The connection this one takes over from, once the room has accepted the join.
        var previous: ConnectionEntry?
        let ticket = JoinTicket(
            id: id, name: admitted.name, role: admitted.role, now: now, onlyIfReturning: admitted.onlyIfReturning,
            fromLobby: admitted.fromLobby, startedBy: startedBy, stream: stream,
            isWanted: { [connections] in connections.isOpen(entry) },
            answer: { [self] answer in
                switch answer {
                case .refused(let reason):
                    log.info("\(connection): \(id) refused from room \(roomName): \(reason.rawValue)")
                    connection.close(code: WebSocketCloseCode(reason.code), reason: ServerClose.reason(reason))
                case .unlisted:
                    log.info("\(connection): server invite for room \(roomName), not listed, from \(id), not returning")
                    connection.close(
                        code: WebSocketCloseCode(ServerClose.notListed.code), reason: ServerClose.notListed.reason)
                case .unavailable:
                    connection.close(
                        code: WebSocketCloseCode(ServerClose.roomUnavailable.code),
                        reason: ServerClose.roomUnavailable.reason)
                case .accepted:
                    previous = connections.accepted(entry)
                    if let invite = admitted.invite { door.admitted(connection, link: invite.id, peer: id) }
                case .admitted(let snapshot, let outcome, let replaced):
                    admit(
                        entry, previous: previous, snapshot: snapshot, outcome: outcome, replaced: replaced,
                        link: admitted.invite.map { "invite \($0.id)" })
                }
            })
        rooms.join(ticket, room: roomName)
    }

    /// Carries out a committed join: the older connection of the identity goes, the joiner gets its snapshot
    /// and its media; the caller then announces the join to the others.
    private func admit(
        _ entry: ConnectionEntry, previous: ConnectionEntry?, snapshot: ServerMessage, outcome: Outcome,
        replaced: Bool, link: String?
    ) {
        previous?.close(.replaced)
        guard let roomName = entry.room, let id = entry.peer, connections.admit(entry) else {
            // A newer connection of the same identity took over before this join was carried out.
            if connections.isOpen(entry) { entry.close(.replaced) }
            return
        }
        entry.send(snapshot)
        let mayPublish = outcome.gates.last { $0.peer == id }?.open ?? false
        media?.joined(id, room: roomName, mayPublish: mayPublish, connection: entry.connection)
        var role = "?"
        if case .joined(let state) = snapshot.event, let me = state.peers.first(where: { $0.peer.id == id }) {
            role = me.peer.role.rawValue
            waitingRoom.arrived(entry, as: me.peer.role, in: roomName)
        }
        log.info(
            "\(entry.connection): \(id) joined room \(roomName) as \(role)\(link.map { " by \($0)" } ?? "")"
                + (replaced ? " (replacing an older connection)" : ""))
    }

    func closed(_ connection: WebSocketConnection, code: WebSocketCloseCode, reason: String) {
        directory.closed(connection)
        door.closed(connection)
        waitingRoom.closed(connection)
        guard let entry = connections.closed(connection), let roomName = entry.room, let peer = entry.peer else {
            return
        }
        // A server that is stopping closes everyone itself: nobody has left, and the roles held in the rooms stay
        // recorded as held, so that everyone gets them back when the server is back.
        guard !stopping else { return }
        departureLog.departed(
            "\(connection): \(peer) left room \(roomName) (\(code) \(reason))", to: log, loop: rooms.loop)
        rooms.leave(peer, reason: code == .normal ? .left : .disconnected, from: roomName)
    }
}
