import RoomCore
import RoomProtocol
import RoomTransport

/// The state of one open connection; loop thread only.
final class ConnectionEntry {
    let connection: WebSocketConnection
    /// The room and peer this connection speaks for; nil once it was replaced, removed or closed by the room.
    var room: String?
    var peer: PeerID?
    var bucket: LeakyBucket
    /// Set after a dropped message was answered with `rate_limited`, so a flood gets one answer per burst.
    var throttled = false

    init(connection: WebSocketConnection, room: String, peer: PeerID, bucket: LeakyBucket) {
        self.connection = connection
        self.room = room
        self.peer = peer
        self.bucket = bucket
    }

    /// Sends a server message.
    func send(_ message: ServerMessage) {
        connection.send(text: String(decoding: ControlCodec.encode(message), as: UTF8.self))
    }

    /// Forgets the room and closes the connection for a room's reason.
    func close(_ reason: CloseReason) {
        room = nil
        peer = nil
        connection.close(code: WebSocketCloseCode(reason.code), reason: ServerClose.reason(reason))
    }
}

/// Every open connection, and the one each peer of each room speaks through; loop thread only.
final class Connections {
    private var entries: [Int: ConnectionEntry] = [:]
    private var members: [String: [PeerID: ConnectionEntry]] = [:]

    /// The entry of an admitted connection.
    func entry(for connection: WebSocketConnection) -> ConnectionEntry? {
        entries[connection.id]
    }

    /// The connections of a room's peers.
    func members(of room: String) -> [PeerID: ConnectionEntry] {
        members[room] ?? [:]
    }

    /// Makes `entry` the connection of its peer, and returns the one it takes over from, if any.
    func admit(_ entry: ConnectionEntry) -> ConnectionEntry? {
        guard let room = entry.room, let peer = entry.peer else { return nil }
        entries[entry.connection.id] = entry
        let previous = members[room]?[peer]
        members[room, default: [:]][peer] = entry
        return previous
    }

    /// Forgets a closed connection; returns its entry when it still spoke for a peer of a room.
    func closed(_ connection: WebSocketConnection) -> ConnectionEntry? {
        guard let entry = entries.removeValue(forKey: connection.id) else { return nil }
        guard let room = entry.room, let peer = entry.peer, members[room]?[peer] === entry else { return nil }
        members[room]?[peer] = nil
        return entry
    }

    /// Takes a peer's connection out of its room, for the room to close it.
    func detach(_ peer: PeerID, from room: String) -> ConnectionEntry? {
        members[room]?.removeValue(forKey: peer)
    }
}

/// Close codes the server uses for its own reasons, and the sentences that go with them (see
/// `docs/protocol.md`).
enum ServerClose {
    static let tokenMissing = (code: UInt16(4000), reason: "No token: send it as Authorization: Bearer or ?token=.")
    static let identityUnusable = (code: UInt16(4001), reason: "The token's identity is empty or too long.")
    static let notListed = (code: UInt16(4014), reason: "No live room by that name is listed on this server.")
    static let guestKeyMissing = (
        code: UInt16(4015), reason: "An invite needs a Clubroom client that sends its guest key."
    )
    static let notServerInvite = (
        code: UInt16(4016), reason: "This token opens one room; the lobby needs a server invite."
    )
    static let lobbyFull = (
        code: UInt16(4017), reason: "The lobby has as many watchers as this server allows; try again later."
    )

    static func reason(_ close: CloseReason) -> String {
        switch close {
        case .left: "left"
        case .roomEnded: "The room has ended."
        case .roomFull: "The room is full."
        case .replaced: "The same identity connected again elsewhere."
        case .removed: "You were removed from this room."
        }
    }
}
