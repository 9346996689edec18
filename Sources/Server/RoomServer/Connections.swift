import RoomCore
import RoomProtocol
import RoomTransport
import WebSocket

/// The state of one open connection; loop thread only.
package final class ConnectionEntry {
    package let connection: WebSocketConnection
    /// The room and peer this connection speaks for; nil once a newer connection of the same identity took over,
    /// or the room closed it.
    package var room: String?
    package var peer: PeerID?
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
    package func close(_ reason: CloseReason) {
        room = nil
        peer = nil
        connection.close(code: WebSocketCloseCode(reason.code), reason: ServerClose.reason(reason))
    }
}

/// Every open connection, the one that speaks for each peer of each room, and the ones that receive each room's
/// messages; loop thread only.
///
/// A connection speaks for its peer from the moment the room accepts its join (its requests count, and its
/// close is the peer's departure), and receives the room's messages once its join is admitted: after the join is
/// committed and the snapshot sent, so it never hears of anything older than its snapshot.
package final class Connections {
    private var entries: [Int: ConnectionEntry] = [:]
    private var speakers: [String: [PeerID: ConnectionEntry]] = [:]
    private var members: [String: [PeerID: ConnectionEntry]] = [:]

    /// The entry of an open connection that asked to join.
    func entry(for connection: WebSocketConnection) -> ConnectionEntry? {
        entries[connection.id]
    }

    /// The connections that receive a room's messages, by peer.
    package func members(of room: String) -> [PeerID: ConnectionEntry] {
        members[room] ?? [:]
    }

    /// Keeps a connection whose join the room is still to decide.
    func register(_ entry: ConnectionEntry) {
        entries[entry.connection.id] = entry
    }

    /// Whether `entry` is still open and waiting for its join.
    func isOpen(_ entry: ConnectionEntry) -> Bool {
        entries[entry.connection.id] === entry
    }

    /// The room accepted `entry`'s join: it speaks for its peer from now on. Returns the connection it takes
    /// over from, which no longer speaks for the peer (its close is no departure) and is closed once `entry` is
    /// admitted.
    func accepted(_ entry: ConnectionEntry) -> ConnectionEntry? {
        guard let room = entry.room, let peer = entry.peer else { return nil }
        let previous = speakers[room]?[peer]
        speakers[room, default: [:]][peer] = entry
        guard let previous, previous !== entry else { return nil }
        previous.room = nil
        previous.peer = nil
        return previous
    }

    /// `entry`'s join is carried out: it receives the room's messages from now on. False when it no longer speaks
    /// for its peer (closed, or taken over by a newer connection meanwhile).
    func admit(_ entry: ConnectionEntry) -> Bool {
        guard let room = entry.room, let peer = entry.peer, speakers[room]?[peer] === entry else { return false }
        members[room, default: [:]][peer] = entry
        return true
    }

    /// Forgets a closed connection; returns its entry when it spoke for a peer of a room (its close is then
    /// that peer's departure).
    func closed(_ connection: WebSocketConnection) -> ConnectionEntry? {
        guard let entry = entries.removeValue(forKey: connection.id) else { return nil }
        guard let room = entry.room, let peer = entry.peer, speakers[room]?[peer] === entry else { return nil }
        forget(peer, in: room)
        return entry
    }

    /// Takes a peer's connection out of its room, for the room to close it.
    package func detach(_ peer: PeerID, from room: String) -> ConnectionEntry? {
        let entry = speakers[room]?[peer]
        forget(peer, in: room)
        return entry
    }

    private func forget(_ peer: PeerID, in room: String) {
        speakers[room]?[peer] = nil
        if speakers[room]?.isEmpty == true { speakers[room] = nil }
        members[room]?[peer] = nil
        if members[room]?.isEmpty == true { members[room] = nil }
    }
}

/// Close codes the server uses for its own reasons, and the sentences that go with them (see
/// `docs/protocol.md`).
package enum ServerClose {
    /// The query (`?token=`) is still accepted, for browsers, but not advertised: a token in a URL ends up in
    /// proxies' access logs and browser histories (docs/protocol.md).
    static let tokenMissing = (code: UInt16(4000), reason: "No token: send it as Authorization: Bearer.")
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
    static let linkWithdrawn = (
        code: UInt16(4018), reason: "This invite was withdrawn by the room's host or the server's operator."
    )
    static let linkUsedUp = (code: UInt16(4019), reason: "This invite has admitted as many people as it may.")
    static let tooManyJoins = (
        code: UInt16(4020), reason: "Too many people joined from here or with this invite just now; try again later."
    )
    static let linkFull = (
        code: UInt16(4021), reason: "This invite has as many people in rooms as it may have at once."
    )
    static let roomLocked = (
        code: UInt16(4022), reason: "This room is locked: its hosts let no one new in with a link just now."
    )
    static let waitersFull = (
        code: UInt16(4022),
        reason: "This room is locked and as many people as it allows already wait for a host to let them in."
    )
    static let waitDenied = (code: UInt16(4023), reason: "A host of this room did not let you in.")
    static let waitTimedOut = (
        code: UInt16(4024), reason: "No host let you in within five minutes; ask them, or try again later."
    )
    static let banned = (code: UInt16(4025), reason: "You are banned from this server's rooms.")
    static let startedByUnreadable = (
        code: UInt16(4026), reason: "The recorder's X-Clubroom-Started-By or X-Clubroom-Stream cannot be read."
    )
    static let roomUnavailable = (code: UInt16(1011), reason: "The server could not load this room. Try again.")
    /// Close 1001 to a client of a cluster node that the cluster took for gone: it reconnects and joins again.
    package static let handedBack = "This server lost its place in the room. Reconnect."
    /// Close 1001 to a client of a cluster node that hears nothing from the room's other nodes, though Redis
    /// says they are alive: it reconnects, through another node where it knows one.
    package static let cutOff = "This server is cut off from the room's other servers. Reconnect."

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
