import Dispatch
import RoomCore
import RoomPersistence
import RoomProtocol

/// The rooms' store on this machine, as the commit step and the loader of rooms: an outcome's changes are
/// committed to the change journal (`SavedRooms`), and applied to SQLite from there, off the loop; a room's saved
/// state is read off the loop too, through a connection of its own that never waits for a writer.
///
/// This is also the one place where RoomCore's values meet the database's records (`RoomPersistence` knows
/// nothing of RoomCore).
package final class PersistenceQueue: OutcomeCommitter, RoomLoader, Sendable {
    let store: SavedRooms
    let log: ServerLog
    /// The loop that commit results and loaded rooms are handed back to.
    let loop: LoopReference
    private let reads = DispatchQueue(label: "clubroom.server.reads")

    init(store: SavedRooms, loop: LoopReference, log: ServerLog) {
        self.store = store
        self.loop = loop
        self.log = log
    }

    func save(_ changes: [SavedChange], in room: String) {
        store.commit(changes.map { Self.record($0, room: room) }) { _ in }
    }

    package func commit(_ outcome: Outcome, in room: String, then: @escaping (CommitResult) -> Void) {
        let changes = outcome.changes.map { Self.record($0, room: room) }
        let then = LoopOnly(then)
        let loop = loop
        store.commit(changes) { status in
            let result: CommitResult =
                switch status {
                case .committed: .committed
                case .notSaved(let problem): .notSaved(problem: problem.summary)
                }
            loop.execute { then.value(result) }
        }
    }

    package func load(
        _ room: String, now: Timestamp, create: Bool, then: @escaping (Result<SavedRoom, RoomLoadError>) -> Void
    ) {
        let then = LoopOnly(then)
        reads.async { [self] in
            let result: Result<SavedRoom, RoomLoadError>
            do throws(DatabaseError) {
                let stored = try store.database.load(
                    room: room, chatLimit: ControlLimits.chatHistory, rolesSince: now - RoomAuthority.reconnectGrace,
                    heldRolesReleasedAt: store.unfinishedStart)
                var saved = SavedRoom()
                if stored.record == nil {
                    // A new room gets its row, through the journal like every other change.
                    if create { store.commit([.openRoom(room: room, at: now)]) { _ in } } else { saved.exists = false }
                }
                saved.topic = stored.record?.topic ?? ""
                saved.ended = stored.record?.isEnded ?? false
                saved.chat = stored.chat.map(Self.message)
                saved.listed = stored.listed
                saved.handsAllowed = stored.handsAllowed
                saved.liveSince = stored.liveSince
                saved.deadline = stored.deadline.map {
                    RoomDeadline(
                        handoverDue: $0.handoverDue, endsAt: $0.endsAt, lastHost: $0.lastHost.map { PeerID($0) },
                        lastHostName: $0.lastHostName)
                }
                for role in stored.roles {
                    saved.departed[PeerID(role.identity)] = (RoleName(role.role), role.at)
                }
                for demotion in stored.demotions {
                    saved.demotions[PeerID(demotion.identity)] = RoleName(demotion.role)
                }
                // A hand comes back only with its owner's place (a role kept for a return).
                for hand in stored.hands where saved.departed[PeerID(hand.identity)] != nil {
                    saved.hands[PeerID(hand.identity)] = hand.raisedAt
                }
                for invitation in stored.invitations {
                    saved.invitations[PeerID(invitation.invitee)] = Invitation(
                        by: PeerID(invitation.inviter), at: invitation.at)
                }
                result = .success(saved)
            } catch {
                result = .failure(RoomLoadError(problem: error.description))
            }
            loop.execute { then.value(result) }
        }
    }

    /// Waits (up to `timeout`) for the store to write what it was given, then closes it.
    func close(timeout: Duration) {
        store.close(timeout: timeout)
    }

    /// Logs what the store reports, one line each.
    static func log(_ event: StoreEvent, to log: ServerLog) {
        switch event {
        case .commitsFailing(let problem):
            log.error(
                "changes cannot be saved: \(problem); they are kept in memory and saved once the journal can be "
                    + "written, and people are told that what they do is not saved")
        case .commitsRecovered(let saved):
            log.info("changes are saved again (\(saved) waiting changes saved)")
        case .startFinished(let entries, let released):
            log.info(
                "the data folder takes writes again: the server is no longer read-only (saved changes applied to the "
                    + "database: \(entries); roles held at the start released: \(released))")
        case .heldCommitsDropped(let count):
            log.error("too many unsaved changes are waiting: \(count) dropped")
        case .applyFailing(let problem):
            log.warning(
                "the database does not take changes now: \(problem); they are safe in the journal and applied when "
                    + "it does")
        case .applyRecovered:
            log.info("the database took the changes that were waiting in the journal")
        case .entryRejected(let seq, let problem):
            log.error("journal entry \(seq) was refused by the database and skipped: \(problem)")
        case .closed(let unapplied, let unsaved):
            if unapplied > 0 {
                log.warning("\(unapplied) changes wait in the journal; they are applied at the next start")
            }
            if unsaved > 0 { log.error("\(unsaved) changes could not be saved before stopping and are lost") }
        }
    }

    static func record(_ change: SavedChange, room: String) -> DatabaseChange {
        switch change {
        case .topic(let topic): return .setTopic(room: room, topic: topic, at: currentTimestamp())
        case .ended(let reason): return .endRoom(room: room, reason: reason, at: currentTimestamp())
        case .reopened: return .reopenRoom(room: room, at: currentTimestamp())
        case .chat(let message):
            return .appendChat(
                room: room, at: message.sentAt, fromIdentity: message.from.rawValue, fromName: message.fromName,
                audience: record(message.to), text: message.text)
        case .audit(let entry):
            return .appendAudit(
                room: room, at: entry.at, actor: entry.actor.rawValue, action: entry.action,
                target: entry.target?.rawValue, detail: entry.detail.isEmpty ? nil : entry.detail)
        case .departed(let id, let role, let at):
            return .releaseRole(room: room, identity: id.rawValue, role: role.rawValue, at: at)
        case .roleHeld(let id, let role, let at):
            return .holdRole(room: room, identity: id.rawValue, role: role.rawValue, at: at)
        case .roleForgotten(let id):
            return .forgetRole(room: room, identity: id.rawValue)
        case .invited(let invitee, let inviter, let at):
            return .invite(room: room, invitee: invitee.rawValue, inviter: inviter.rawValue, at: at)
        case .invitationEnded(let invitee):
            return .endInvitation(room: room, invitee: invitee.rawValue)
        case .listed(let listed): return .setListed(room: room, listed: listed, at: currentTimestamp())
        case .handsAllowed(let allowed):
            return .setHandsAllowed(room: room, allowed: allowed, at: currentTimestamp())
        case .demoted(let id, let role, let at):
            return .demote(room: room, identity: id.rawValue, role: role.rawValue, at: at)
        case .demotionEnded(let id):
            return .endDemotion(room: room, identity: id.rawValue)
        case .hand(let id, let raisedAt): return .setHand(room: room, identity: id.rawValue, raisedAt: raisedAt)
        case .live(let since): return .setLive(room: room, since: since)
        case .deadline(let deadline):
            return .setDeadline(
                room: room,
                deadline: deadline.map {
                    DeadlineRecord(
                        handoverDue: $0.handoverDue, endsAt: $0.endsAt, lastHost: $0.lastHost?.rawValue,
                        lastHostName: $0.lastHostName)
                })
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

/// A value used only on the server's loop thread, carried through another thread untouched (a continuation
/// handed back with `loop.execute`).
struct LoopOnly<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
