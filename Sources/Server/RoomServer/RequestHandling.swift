import RoomCore
import RoomProtocol
import RoomTransport

/// A connection's messages: media on the WebSocket fallback goes to the forwarder; everything else is rate
/// limited, decoded strictly (a bad message is answered with `error`, and only this connection pays), and
/// handed to the room.
extension ServerState {
    func received(_ payload: WebSocketPayload, on connection: WebSocketConnection) {
        if directory.isWatching(connection) {
            directory.received(payload, from: connection, now: currentTimestamp())
            return
        }
        guard let entry = connections.entry(for: connection), let roomName = entry.room, let peer = entry.peer else {
            return
        }
        // Media on the WebSocket fallback comes 50 times a second: it is not a request, so not rate limited.
        if case .binary(let bytes) = payload, let media {
            media.receivedBinary(bytes, from: peer, room: roomName)
            return
        }
        let now = currentTimestamp()
        guard entry.bucket.allow(nowMilliseconds: now) else {
            if !entry.throttled {
                entry.throttled = true
                log.warning("\(connection): \(peer) in \(roomName) is rate limited")
                entry.send(
                    ServerMessage(
                        .error(
                            code: .rateLimited,
                            message: "too many messages: this one and the next are dropped until the rate falls",
                            id: nil), seq: nil))
            }
            return
        }
        entry.throttled = false
        let message: ClientMessage
        switch payload {
        case .binary:
            entry.send(
                ServerMessage(
                    .error(code: .badRequest, message: "binary messages are reserved for media", id: nil), seq: nil))
            return
        case .text(let text):
            do {
                message = try ControlCodec.decodeClient(Array(text.utf8))
            } catch {
                if error.code == .unknownType, let media,
                    case .mediaPath(let path, let takesRED)? = try? MediaSignalCodec.decode(text)
                {
                    media.reportedPath(path, takesRED: takesRED, from: peer, room: roomName)
                    return
                }
                entry.send(ServerMessage(.error(code: error.code, message: error.message, id: error.id), seq: nil))
                return
            }
        }
        if let refusal = rooms.handle(message.request, from: peer, id: message.id, in: roomName, now: now) {
            entry.send(refusal)
        }
    }
}
