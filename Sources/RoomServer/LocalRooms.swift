import RoomCore
import RoomProtocol

/// Something that carries out part of what a room decided. Consumers read only the outcome (never the room),
/// so the same outcome can be applied wherever it arrives.
protocol OutcomeConsumer: AnyObject {
    func consume(_ outcome: Outcome, in room: String)
}

/// The rooms this server owns, and the one path every change of a room takes.
///
/// Each room's `RoomAuthority` is the only place that checks a request and then acts on it; it numbers the
/// events it emits (`seq`). Everything else consumes its `Outcome`, in a fixed order: the media gates, then the
/// broadcast of messages and closes, then the database writes. Nothing else changes a room.
///
/// This is the seam for rooms shared across machines: a room owned by another node would take the same
/// requests, but instead of `authority.handle` followed by `publish` here, the request would be appended to
/// the owner's request stream, and `publish` would run when the owner's outcome comes back from its event
/// stream. Loop thread only.
final class LocalRooms {
    let roles: RoleTable
    let maxPeers: Int
    let persistence: PersistenceQueue
    let broadcaster: Broadcaster
    let log: ServerLog
    /// The media gates, when the server serves audio (set once, before the first connection).
    var media: ServerMedia?
    private(set) var rooms: [String: RoomAuthority] = [:]

    init(roles: RoleTable, maxPeers: Int, persistence: PersistenceQueue, broadcaster: Broadcaster, log: ServerLog) {
        self.roles = roles
        self.maxPeers = maxPeers
        self.persistence = persistence
        self.broadcaster = broadcaster
        self.log = log
    }

    /// A room's authority, loaded from the database the first time it is asked for.
    func authority(_ name: String, now: Timestamp) -> RoomAuthority {
        if let room = rooms[name] { return room }
        let saved = persistence.load(name, now: now)
        // Sequence numbers start from the clock so they never go back after a restart (clients ignore older ones).
        let room = RoomAuthority(
            name: name, roles: roles, topic: saved.topic, ended: saved.ended, seq: now * 1000, chat: saved.chat,
            maxPeers: maxPeers)
        rooms[name] = room
        log.info("room \(name) loaded\(saved.ended ? " (ended)" : "")")
        return room
    }

    /// A peer with a verified token asks to join. The result's outcome is not carried out yet: the caller first
    /// makes the joiner's connection the peer's and sends it the snapshot, then `publish`es the outcome.
    func join(_ id: PeerID, name: String, role: RoleName, room roomName: String, now: Timestamp) -> JoinResult {
        var room = authority(roomName, now: now)
        var remembered: RoleName?
        if room.departed[id] == nil, room.peers[id] == nil {
            remembered = persistence.recentRole(of: id, in: roomName, now: now)
        }
        let result = room.join(id: id, name: name, role: role, now: now, remembered: remembered)
        rooms[roomName] = room
        return result
    }

    /// A request from a peer of a room: checked and acted on by the room, then carried out. The refusal, if
    /// any, is the caller's to send to the requester.
    func handle(
        _ request: ClientRequest, from peer: PeerID, id: RequestID?, in roomName: String, now: Timestamp
    ) -> Outcome? {
        guard var room = rooms[roomName] else { return nil }
        let outcome = room.handle(request, from: peer, id: id, now: now)
        rooms[roomName] = room
        publish(outcome, in: roomName)
        return outcome
    }

    /// A peer's connection went away.
    func leave(_ peer: PeerID, reason: LeaveReason, from roomName: String, now: Timestamp) {
        guard var room = rooms[roomName] else { return }
        let outcome = room.leave(peer, reason: reason, now: now)
        rooms[roomName] = room
        publish(outcome, in: roomName)
    }

    /// Audio levels (0–100) measured by the media path; those that changed are announced.
    func updateLevels(_ levels: [PeerID: Int], in roomName: String) {
        guard var room = rooms[roomName] else { return }
        let outcome = room.updateLevels(levels)
        rooms[roomName] = room
        publish(outcome, in: roomName)
    }

    /// Lets the invitations that waited their lifetime lapse, in every room that has one due.
    func expireInvitations(now: Timestamp) {
        for (name, room) in rooms where (room.nextInvitationExpiry ?? .max) <= now {
            var room = room
            let outcome = room.expireInvitations(now: now)
            rooms[name] = room
            publish(outcome, in: name)
        }
    }

    /// Carries out an outcome: gates first, so a demoted or muted speaker is cut off before anyone hears of the
    /// change; then the messages and closes; then the database writes.
    func publish(_ outcome: Outcome, in room: String) {
        media?.consume(outcome, in: room)
        broadcaster.consume(outcome, in: room)
        persistence.consume(outcome, in: room)
    }
}
