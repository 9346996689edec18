import Crypto
import RoomCore
import RoomProtocol
import RoomTransport

/// A connection's way in and out: its token is checked before any room state is sent, its peer joins its
/// room (taking over from an older connection of the same identity), and its close is the peer's leave.
extension ServerState {
    func opened(_ connection: WebSocketConnection) {
        guard let request = connection.request, let roomName = request.room else {
            connection.close(code: .policyViolation, reason: "no room")
            return
        }
        guard let token = request.bearerToken, !token.isEmpty else {
            log.info("\(connection): refused, no token")
            connection.close(
                code: WebSocketCloseCode(ServerClose.tokenMissing.code), reason: ServerClose.tokenMissing.reason)
            return
        }
        let now = currentTimestamp()
        let roles = configuration.roles
        let claims: TokenClaims
        do {
            claims = try verifier.verify(token, room: roomName, now: now / 1000) { roles.contains(RoleName($0)) }
        } catch {
            log.info("\(connection): refused token for room \(roomName): \(error)")
            connection.close(code: WebSocketCloseCode(error.closeCode), reason: error.closeReason)
            return
        }
        guard claims.subject.utf8.count <= ControlLimits.maxIdentityBytes, !claims.subject.isEmpty else {
            connection.close(
                code: WebSocketCloseCode(ServerClose.identityUnusable.code),
                reason: ServerClose.identityUnusable.reason)
            return
        }
        let id = PeerID(claims.subject)
        switch rooms.join(id, name: claims.name, role: RoleName(claims.role), room: roomName, now: now) {
        case .refused(let reason):
            log.info("\(connection): \(id) refused from room \(roomName): \(reason.rawValue)")
            connection.close(code: WebSocketCloseCode(reason.code), reason: ServerClose.reason(reason))
        case .joined(let snapshot, let outcome, let replaced):
            let entry = ConnectionEntry(
                connection: connection, room: roomName, peer: id,
                bucket: LeakyBucket(capacity: configuration.rateBurst, drainPerSecond: configuration.ratePerSecond))
            if let previous = connections.admit(entry), replaced {
                previous.close(.replaced)
            }
            entry.send(snapshot)
            let room = rooms.authority(roomName, now: now)
            media?.joined(id, room: roomName, mayPublish: room.mayPublish(id), connection: connection)
            log.info(
                "\(connection): \(id) joined room \(roomName) as \(room.peers[id]?.role.rawValue ?? "?")\(replaced ? " (replacing an older connection)" : "")"
            )
            rooms.publish(outcome, in: roomName)
        }
    }

    func closed(_ connection: WebSocketConnection, code: WebSocketCloseCode, reason: String) {
        guard let entry = connections.closed(connection), let roomName = entry.room, let peer = entry.peer else {
            return
        }
        log.info("\(connection): \(peer) left room \(roomName) (\(code) \(reason))")
        rooms.leave(peer, reason: code == .normal ? .left : .disconnected, from: roomName, now: currentTimestamp())
    }
}
