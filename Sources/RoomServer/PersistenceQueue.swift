import Dispatch
import RoomCore
import RoomPersistence
import RoomProtocol

/// The rooms' database: an outcome's changes are written in order on a serial queue of their own, so a slow
/// disk never stalls the rooms; a room's saved state is read when the room is loaded.
///
/// This is also the one place where RoomCore's values meet the database's records (`RoomPersistence` knows
/// nothing of RoomCore).
final class PersistenceQueue: OutcomeConsumer, Sendable {
    let database: RoomDatabase
    let log: ServerLog
    /// Database writes, in order, off the event loop.
    private let writes = DispatchQueue(label: "clubroom.server.database")

    init(database: RoomDatabase, log: ServerLog) {
        self.database = database
        self.log = log
    }

    /// What a room held when the server last had it.
    struct SavedRoom {
        var topic = ""
        var ended = false
        var chat: [ChatMessage] = []
        var listed = true
    }

    /// Opens a room's record (creating it when new) and reads its topic, whether it ended, and its recent chat.
    /// A database failure is logged and the room starts empty: one bad row must not keep people out.
    func load(_ room: String, now: Timestamp) -> SavedRoom {
        var saved = SavedRoom()
        do {
            let record = try database.openRoom(room, at: now)
            saved.topic = record.topic
            saved.ended = record.isEnded
            saved.chat = try database.recentChat(room: room, limit: ControlLimits.chatHistory).map(Self.message)
            saved.listed = try database.isListed(room)
        } catch {
            log.error("room \(room): could not load from the database: \(error)")
        }
        return saved
    }

    /// The role an identity held when it left the room less than the reconnect grace ago, if the database
    /// remembers one (a server restarted since).
    func recentRole(of id: PeerID, in room: String, now: Timestamp) -> RoleName? {
        let role = try? database.recentRole(
            room: room, identity: id.rawValue, within: RoomAuthority.reconnectGrace, now: now)
        return role.map(RoleName.init(rawValue:))
    }

    func consume(_ outcome: Outcome, in room: String) {
        guard !outcome.changes.isEmpty else { return }
        let changes = outcome.changes
        writes.async { [self] in
            for change in changes {
                do {
                    try store(change, room: room)
                } catch {
                    log.error("room \(room): could not save \(change): \(error)")
                }
            }
        }
    }

    /// Waits for the writes queued so far.
    func flush() {
        writes.sync {}
    }

    private func store(_ change: StoreChange, room: String) throws(DatabaseError) {
        let now = currentTimestamp()
        switch change {
        case .topic(let topic): _ = try database.setTopic(room, topic: topic, at: now)
        case .ended(let reason): _ = try database.endRoom(room, reason: reason, at: now)
        case .reopened: _ = try database.reopenRoom(room, at: now)
        case .chat(let message):
            try database.appendChat(
                room: room, at: message.sentAt, fromIdentity: message.from.rawValue, fromName: message.fromName,
                audience: Self.record(message.to), text: message.text)
        case .audit(let entry):
            try database.appendAudit(
                room: room, at: entry.at, actor: entry.actor.rawValue, action: entry.action,
                target: entry.target?.rawValue, detail: entry.detail.isEmpty ? nil : entry.detail)
        case .departed(let id, let role, let at):
            try database.rememberRole(room: room, identity: id.rawValue, role: role.rawValue, leftAt: at)
        case .listed(let listed): try database.setListed(room, listed: listed, at: now)
        }
    }

    static func record(_ audience: ChatAudience) -> ChatAudienceRecord {
        switch audience {
        case .everyone: .everyone
        case .peer(let id): .peer(id.rawValue)
        case .role(let role): .role(role.rawValue)
        }
    }

    static func message(_ record: ChatRecord) -> ChatMessage {
        let audience: ChatAudience =
            switch record.audience {
            case .everyone: .everyone
            case .peer(let id): .peer(PeerID(id))
            case .role(let role): .role(RoleName(role))
            }
        return ChatMessage(
            from: PeerID(record.fromIdentity), fromName: record.fromName, text: record.text, to: audience,
            sentAt: record.at)
    }
}
