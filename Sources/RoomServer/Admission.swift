import Crypto
import RoomCore
import RoomProtocol
import RoomTransport

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
        let admitted: (id: PeerID, name: String, role: RoleName)
        switch admission(to: roomName, request: request, now: now) {
        case .success(let who): admitted = who
        case .failure(let refusal):
            log.info("\(connection): refused for room \(roomName): \(refusal.detail)")
            connection.close(code: WebSocketCloseCode(refusal.code), reason: refusal.reason)
            return
        }
        let id = admitted.id
        switch rooms.join(id, name: admitted.name, role: admitted.role, room: roomName, now: now) {
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
        directory.closed(connection)
        guard let entry = connections.closed(connection), let roomName = entry.room, let peer = entry.peer else {
            return
        }
        log.info("\(connection): \(peer) left room \(roomName) (\(code) \(reason))")
        rooms.leave(peer, reason: code == .normal ? .left : .disconnected, from: roomName, now: currentTimestamp())
    }
}
