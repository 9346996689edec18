import RoomCore
import RoomProtocol
import RoomTransport
import WebSocket

/// Newcomers held at the door of a locked room: connected, told they wait, shown nothing of the room, until one
/// of its hosts or moderators lets them in (`admit`) or turns them away (`deny`), they go, or `timeout` passes.
/// Those who may decide, connected through this node, hear of each newcomer and of what became of them (`knock`).
/// Bounded: at most `maxPerRoom` wait at one room; past it a newcomer is refused as before (4022).
///
/// Loop thread only (like the rest of `ServerState`).
final class WaitingRoom: OutcomeConsumer, @unchecked Sendable {
    struct Waiter {
        let connection: WebSocketConnection
        let peer: PeerID
        let name: String
        let since: Int64
        /// Carries on with the join once a host lets them in.
        let enter: () -> Void
    }

    /// The most newcomers waiting at one room's door.
    static let maxPerRoom = 20
    /// How long a newcomer waits for an answer, in milliseconds (five minutes).
    static let timeout: Int64 = 5 * 60_000

    let connections: Connections
    let log: ServerLog
    /// Whether this server is alone: then every waiter of a room is here, and an answer naming no one says so.
    let alone: Bool
    /// The role a peer holds in a room, from the node's copy of it.
    var role: (PeerID, String) -> RoleName? = { _, _ in nil }
    let roles: RoleTable
    private var waiting: [String: [Waiter]] = [:]

    init(connections: Connections, roles: RoleTable, log: ServerLog, alone: Bool) {
        self.connections = connections
        self.roles = roles
        self.log = log
        self.alone = alone
    }

    /// Holds a newcomer at `room`'s door: false when as many wait already (the caller refuses them).
    func hold(_ waiter: Waiter, room: String) -> Bool {
        guard waiting[room, default: []].count < Self.maxPerRoom else { return false }
        waiting[room, default: []].append(waiter)
        waiter.connection.send(
            text: String(decoding: ControlCodec.encode(ServerMessage(.waiting(room: room), seq: nil)), as: UTF8.self))
        log.info("\(waiter.connection): \(waiter.peer) waits at the door of locked room \(room)")
        tell(room, Knock(peer: waiter.peer, name: waiter.name, state: .waiting))
        return true
    }

    /// The newcomers waiting at `room`'s door, oldest first.
    func waiters(of room: String) -> [Waiter] { waiting[room] ?? [] }

    /// Someone who may decide arrived through this node: they hear of everyone waiting.
    func arrived(_ entry: ConnectionEntry, as role: RoleName, in room: String) {
        guard roles.can(role, .remove) else { return }
        for waiter in waiting[room] ?? [] {
            entry.send(
                ServerMessage(
                    .knock(room: room, Knock(peer: waiter.peer, name: waiter.name, state: .waiting)), seq: nil))
        }
    }

    package func consume(_ outcome: Outcome, in room: String) {
        for answer in outcome.doorAnswers { carryOut(answer) }
    }

    private func carryOut(_ answer: DoorAnswer) {
        let room = answer.room
        let wanted = answer.waiter.lowercased()
        guard
            let index = waiting[room]?.firstIndex(where: { $0.peer.rawValue == answer.waiter })
                ?? waiting[room]?.firstIndex(where: { $0.name.lowercased() == wanted })
        else {
            if alone {
                connections.members(of: room)[answer.peer]?.send(
                    ServerMessage(
                        .error(
                            code: .notFound, message: "no one called \(answer.waiter) is waiting to come in",
                            id: answer.requestID),
                        seq: nil))
            }
            return
        }
        let waiter = waiting[room]!.remove(at: index)
        if waiting[room]?.isEmpty == true { waiting[room] = nil }
        tell(
            room,
            Knock(peer: waiter.peer, name: waiter.name, state: answer.admit ? .admitted : .denied, by: answer.peer))
        if answer.admit {
            log.info("\(waiter.connection): \(answer.peer) let \(waiter.peer) into locked room \(room)")
            waiter.enter()
        } else {
            log.info("\(waiter.connection): \(answer.peer) turned \(waiter.peer) away from locked room \(room)")
            waiter.connection.close(
                code: WebSocketCloseCode(ServerClose.waitDenied.code), reason: ServerClose.waitDenied.reason)
        }
    }

    /// A connection closed: if it was waiting, it waits no more.
    func closed(_ connection: WebSocketConnection) {
        for (room, list) in waiting {
            guard let index = list.firstIndex(where: { $0.connection === connection }) else { continue }
            let waiter = waiting[room]!.remove(at: index)
            if waiting[room]?.isEmpty == true { waiting[room] = nil }
            tell(room, Knock(peer: waiter.peer, name: waiter.name, state: .left))
            return
        }
    }

    /// Sends away the newcomers who waited `timeout` by `now` (milliseconds).
    func expire(now: Int64) {
        for room in waiting.keys.sorted() {
            let (due, kept) = (waiting[room] ?? []).reduce(into: ([Waiter](), [Waiter]())) { split, waiter in
                if now - waiter.since >= Self.timeout { split.0.append(waiter) } else { split.1.append(waiter) }
            }
            guard !due.isEmpty else { continue }
            waiting[room] = kept.isEmpty ? nil : kept
            for waiter in due {
                log.info("\(waiter.connection): no one let \(waiter.peer) into locked room \(room) in time")
                tell(room, Knock(peer: waiter.peer, name: waiter.name, state: .timedOut))
                waiter.connection.close(
                    code: WebSocketCloseCode(ServerClose.waitTimedOut.code), reason: ServerClose.waitTimedOut.reason)
            }
        }
    }

    /// Tells the room's hosts and moderators connected through this node.
    private func tell(_ room: String, _ knock: Knock) {
        let message = ServerMessage(.knock(room: room, knock), seq: nil)
        for (peer, entry) in connections.members(of: room) {
            guard let held = role(peer, room), roles.can(held, .remove) else { continue }
            entry.send(message)
        }
    }
}
