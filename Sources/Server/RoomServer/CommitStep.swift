import RoomCore
import RoomProtocol

/// The commit step of a room's pipeline (check → act → commit → publish): makes an outcome durable before
/// anything of it is announced, so that whatever a client is told has happened survives a crash of the server.
///
/// Alone, the server commits to its store (`PersistenceQueue`: the change journal, then SQLite). A cluster
/// commits an owned room's outcome by appending it to the room's Redis stream instead; "durable" means
/// "committed by the store", whichever store that is.
protocol OutcomeCommitter: AnyObject {
    /// Commits `outcome`'s `changes`, after everything committed before, and calls `then` on the loop thread, in
    /// the order of the commits, once the store holds them (or has refused them). Never blocks the loop. Called
    /// only for outcomes with changes.
    func commit(_ outcome: Outcome, in room: String, then: @escaping (CommitResult) -> Void)

    /// Saves `changes` that promise nothing to anyone (the room's age), after everything committed before,
    /// without anything waiting for them. A store that keeps none of them ignores them.
    func save(_ changes: [SavedChange], in room: String)
}

extension OutcomeCommitter {
    func save(_ changes: [SavedChange], in room: String) {}
}

/// What the commit step says about an outcome.
public enum CommitResult: Sendable, Equatable {
    /// The store holds it.
    case committed
    /// The store could not take it now (`problem` says why, e.g. "the server's disk is full"). The room goes on
    /// (everyone has seen the room change, and undoing it would be worse), and the requester is told, with a
    /// `not_saved` error, that it is not saved: it is lost if the server stops before the store recovers.
    case notSaved(problem: String)
}

/// Where a room's saved state comes from when it is first wanted.
protocol RoomLoader: AnyObject {
    /// Reads what the store holds of `room` off the loop and calls `then` on the loop thread. A room the store
    /// never had is made (`create`), or answered as not there (`SavedRoom.exists` false).
    func load(
        _ room: String, now: Timestamp, create: Bool, then: @escaping (Result<SavedRoom, RoomLoadError>) -> Void)
}

/// What a room held when the server last had it.
package struct SavedRoom: Sendable, Equatable {
    package var topic = ""
    package var ended = false
    package var chat: [ChatMessage] = []
    /// Peers who left less than the reconnect grace ago (or were in the room when the server stopped), with
    /// their roles.
    package var departed: [PeerID: (role: RoleName, at: Timestamp)] = [:]
    /// The invitations to speak still pending, by invitee.
    package var invitations: [PeerID: Invitation] = [:]
    /// Whether the room shows in the lobby (its host decides; every room does until unlisted).
    package var listed = true
    /// Whether people may raise hands in the room (a host or moderator decides; on until turned off).
    package var handsAllowed = true
    /// Peers someone else moved down, with the role they were moved to (see `RoomAuthority.loweredByOthers`).
    package var demotions: [PeerID: RoleName] = [:]
    /// The raised hands of the peers in `departed`, with when each went up.
    package var hands: [PeerID: Timestamp] = [:]
    /// Since when the room had people in it when the server last had it, or nil when it was empty.
    package var liveSince: Timestamp?
    /// The room's deadline when the server last had it (a handover due, or its end), if one waited.
    package var deadline: RoomDeadline?
    /// Whether the store had the room (false only for a room looked for without `create`).
    package var exists = true

    /// An empty room (the defaults above), filled in by the store.
    package init() {}

    package static func == (lhs: SavedRoom, rhs: SavedRoom) -> Bool {
        lhs.topic == rhs.topic && lhs.ended == rhs.ended && lhs.chat == rhs.chat && lhs.invitations == rhs.invitations
            && lhs.listed == rhs.listed && lhs.handsAllowed == rhs.handsAllowed && lhs.demotions == rhs.demotions
            && lhs.hands == rhs.hands && lhs.liveSince == rhs.liveSince && lhs.deadline == rhs.deadline
            && lhs.departed.mapValues(\.role) == rhs.departed.mapValues(\.role)
            && lhs.departed.mapValues(\.at) == rhs.departed.mapValues(\.at)
    }
}

/// Why a room could not be loaded: the store's failure, in words for the log.
package struct RoomLoadError: Error, Sendable {
    package var problem: String
}

/// The outcomes of each room waiting to be carried out: each waits for its own commit and for every outcome
/// the room decided before it, so that clients see events in the order of their numbers. Loop thread only.
struct CarryOutQueue {
    final class Step {
        var result: CommitResult?
        let carryOut: (CommitResult) -> Void

        init(_ carryOut: @escaping (CommitResult) -> Void) {
            self.carryOut = carryOut
        }
    }

    private var waiting: [String: FIFO<Step>] = [:]

    /// Whether `room` has outcomes waiting.
    func isWaiting(_ room: String) -> Bool { waiting[room] != nil }

    /// Queues an outcome's carrying out behind the room's earlier ones; returns its step, whose `result` the
    /// commit sets.
    mutating func append(_ room: String, _ carryOut: @escaping (CommitResult) -> Void) -> Step {
        let step = Step(carryOut)
        waiting[room, default: FIFO()].append(step)
        return step
    }

    /// The next step of `room` whose commit is done, if it is the first waiting.
    mutating func next(in room: String) -> Step? {
        guard var queue = waiting[room], let first = queue.first, first.result != nil else { return nil }
        waiting[room] = nil
        _ = queue.removeFirst()
        if !queue.isEmpty { waiting[room] = queue }
        return first
    }
}

/// A first-in first-out queue with constant-time removal from the front.
package struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    package init() {}

    package var isEmpty: Bool { head == storage.count }
    package var count: Int { storage.count - head }
    package var first: Element? { isEmpty ? nil : storage[head] }

    package mutating func append(_ element: Element) {
        storage.append(element)
    }

    package mutating func removeFirst() -> Element {
        let element = storage[head]
        head += 1
        if head > 64, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
