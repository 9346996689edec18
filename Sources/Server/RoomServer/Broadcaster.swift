import RoomCore
import RoomProtocol
import RoomTransport

/// Sends an outcome's messages to the connections they are for, then closes the connections it closes.
///
/// A message for many (the room, all but one, a list) is framed once and queued on each connection to be
/// written on the loop's next turns (`sendLater`), not written to every socket before anything else can run: in
/// a big room a crowd leaving at once costs the loop only the copying per member, and the writes are spread over
/// its turns with the other requests answered between them (`docs/limits.md`). A message for one peer is
/// written at once, after whatever waits for that peer, so each peer hears everything in order.
///
/// Joins are gathered: a room filling quickly sends one `peers_joined` per 50 ms window instead of one
/// `peer_joined` per joiner to every member. Anything else sent to the room first announces the gathered joins,
/// so the order of events is kept.
///
/// Loop thread only, which makes the unchecked sendability safe: its timers run on the same loop.
final class Broadcaster: OutcomeConsumer, @unchecked Sendable {
    /// How long joins are gathered before they are announced together.
    static let joinAnnouncementWindow: Duration = .milliseconds(50)

    let connections: Connections
    /// The loop everything here runs on, once known; joins are announced on its timers.
    var loop: EventLoop?
    /// Joins not yet announced, per room, in order; see `queueJoin`.
    private var pendingJoins: [String: [ServerMessage]] = [:]
    private var joinFlushScheduled: Set<String> = []

    init(connections: Connections) {
        self.connections = connections
    }

    package func consume(_ outcome: Outcome, in room: String) {
        let members = connections.members(of: room)
        for delivery in outcome.deliveries {
            if case .peerJoined = delivery.message.event {
                queueJoin(delivery.message, in: room)
                continue
            }
            if pendingJoins[room] != nil { flushJoins(in: room) }
            let text = String(decoding: ControlCodec.encode(delivery.message), as: UTF8.self)
            switch delivery.to {
            case .everyone:
                let prepared = PreparedMessage(text: text)
                for entry in members.values { entry.connection.sendLater(prepared) }
            case .everyoneExcept(let excluded):
                let prepared = PreparedMessage(text: text)
                for (id, entry) in members where id != excluded { entry.connection.sendLater(prepared) }
            case .peer(let id):
                members[id]?.connection.send(text: text)
            case .peers(let ids):
                let prepared = PreparedMessage(text: text)
                for id in ids { members[id]?.connection.sendLater(prepared) }
            }
        }
        for (peer, reason) in outcome.closes {
            connections.detach(peer, from: room)?.close(reason)
        }
    }

    /// Gathers a join's announcement with the others of the next 50 ms.
    private func queueJoin(_ message: ServerMessage, in room: String) {
        pendingJoins[room, default: []].append(message)
        guard !joinFlushScheduled.contains(room) else { return }
        guard let loop else {
            flushJoins(in: room)
            return
        }
        joinFlushScheduled.insert(room)
        loop.schedule(after: Self.joinAnnouncementWindow) { [self] in
            joinFlushScheduled.remove(room)
            flushJoins(in: room)
        }
    }

    /// Announces the gathered joins of a room: one `peer_joined` to the others when there is one, else one
    /// `peers_joined` to everyone.
    private func flushJoins(in room: String) {
        guard let pending = pendingJoins.removeValue(forKey: room), let last = pending.last else { return }
        let members = connections.members(of: room)
        let peers = pending.compactMap { message -> AnnouncedPeer? in
            if case .peerJoined(let peer) = message.event { return peer }
            return nil
        }
        if peers.count == 1 {
            let prepared = PreparedMessage(text: String(decoding: ControlCodec.encode(last), as: UTF8.self))
            for (id, entry) in members where id != peers[0].peer.id { entry.connection.sendLater(prepared) }
        } else {
            let prepared = PreparedMessage(
                text: String(
                    decoding: ControlCodec.encode(ServerMessage(.peersJoined(peers), seq: last.seq)), as: UTF8.self))
            for entry in members.values { entry.connection.sendLater(prepared) }
        }
    }
}
