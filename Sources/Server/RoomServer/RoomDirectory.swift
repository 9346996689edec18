import Foundation
import Platform
import RoomCore
import RoomProtocol
import RoomTransport

/// What the directory needs of a lobby's connection: a `WebSocketConnection` in the server, a stand-in in tests.
protocol DirectoryWatcher: AnyObject, CustomStringConvertible {
    var id: Int { get }
    /// Whether bytes sent earlier still wait for the peer to read them.
    var isBacklogged: Bool { get }
    func send(_ prepared: PreparedMessage)
    /// Calls back once nothing sent waits any more (at once if nothing does).
    func whenDrained(_ callback: @escaping () -> Void)
}

extension WebSocketConnection: DirectoryWatcher {}

/// Rooms changed since some message, in the order they first changed, with what was shown of each before and
/// why it last arrived or left.
struct PendingListings {
    private(set) var rooms: [(room: String, before: RoomListing?)] = []
    private var index: Set<String> = []
    /// The latest reason seen for each room's arrival and departure; nil where none was seen.
    private var reasons: [String: (arrival: ListingArrival?, departure: ListingDeparture?)] = [:]

    var isEmpty: Bool { rooms.isEmpty }

    /// Notes `change` to `room`, which showed `before` before the first change noted.
    mutating func note(_ change: ListingChange, before: RoomListing?) {
        let room = change.room
        if index.insert(room).inserted { rooms.append((room, before)) }
        switch change {
        case .added(_, let arrival): reasons[room, default: (nil, nil)].arrival = arrival
        case .updated: break
        case .removed(_, let departure): reasons[room, default: (nil, nil)].departure = departure
        }
    }

    /// Takes in changes noted after these: each room keeps the first `before`, and the latest reasons win.
    mutating func fold(_ later: PendingListings) {
        for (room, before) in later.rooms where index.insert(room).inserted { rooms.append((room, before)) }
        for (room, why) in later.reasons {
            if let arrival = why.arrival { reasons[room, default: (nil, nil)].arrival = arrival }
            if let departure = why.departure { reasons[room, default: (nil, nil)].departure = departure }
        }
    }

    /// What a watcher that saw each room's `before` must be told to see `listings`: nothing for a room that is
    /// as it was (changed and changed back, or started and ended unseen).
    func changes(to listings: [String: RoomListing]) -> [ListingChange] {
        rooms.compactMap { entry in
            let why = reasons[entry.room]
            return ListingChange.between(
                entry.before, listings[entry.room], room: entry.room, arrival: why?.arrival ?? .started,
                departure: why?.departure ?? .ended)
        }
    }
}

/// The lobby's list of live rooms, and the connections watching it (`/rooms`).
///
/// The rooms' authorities report every change of a room's entry in their outcomes (`Outcome.listing`: a room
/// started or became listed, changed, ended, emptied or became unlisted); the directory keeps the list and tells
/// its watchers. Changes are gathered: the first change after a quiet spell goes out at once, and further
/// changes within the next 50 ms go out together at its end, one `rooms_changed` per watcher however many rooms
/// changed, so a busy server costs each watcher at most 20 messages a second. Each message is encoded and framed
/// once for all watchers, and the whole list is kept framed until it changes, so a new watcher (or a `list`
/// request) costs one send.
///
/// A watcher that reads more slowly than the list changes (what was sent to it earlier still waits to be written)
/// is sent nothing more until it has read all of that. Meanwhile the rooms that change are noted for it, and once
/// it has caught up it gets one `rooms_changed` with each of those rooms as it is then (`since` names the last
/// message it got), never the changes in between. So a slow lobby costs the server one note per change, not a
/// queue of messages.
///
/// Loop thread only (like the rest of `ServerState`); its timer runs on the same loop.
package final class RoomDirectory: OutcomeConsumer, @unchecked Sendable {
    /// How long changes are gathered after one went out.
    static let window: Int64 = 50
    /// A watcher's `list` requests: a burst of 5, then one a second.
    static let listBurst: Double = 5
    static let listPerSecond: Double = 1

    final class Watcher {
        let connection: any DirectoryWatcher
        var bucket = LeakyBucket(capacity: RoomDirectory.listBurst, drainPerSecond: RoomDirectory.listPerSecond)
        var throttled = false
        /// The number of the last message sent to this watcher.
        var seq: Int64 = 0
        /// Rooms changed since that message, while the watcher reads too slowly to be sent each change.
        var behind: PendingListings?

        init(connection: any DirectoryWatcher) {
            self.connection = connection
        }
    }

    /// The live, listed rooms by name.
    private(set) var listings: [String: RoomListing] = [:]
    /// The rooms this server keeps a copy of (alone, every room it serves): their entries come from their
    /// outcomes. In a cluster, the other rooms' entries come from the nodes that own them (`replaceRemote`).
    private var followed: Set<String> = []
    /// What the other nodes of a cluster last said of the rooms they own, listed or not.
    private(set) var remote: [String: ListingChange] = [:]
    /// The number of the last message sent (or of the list as it stands).
    private(set) var seq: Int64 = 0
    private(set) var watchers: [Int: Watcher] = [:]
    let maxWatchers: Int
    let log: ServerLog
    /// The loop the gathering timer runs on, once known.
    var loop: EventLoop?
    private let clock: () -> Int64
    /// Rooms changed since the last message.
    private var pending = PendingListings()
    private var lastSent: Int64 = .min / 2
    private var flushScheduled = false
    private var cachedList: PreparedMessage?
    /// Carries out a watcher's `open_room` (name, topic, id); set by the server, which knows the credentials.
    var openRoom: ((String, String, String, any DirectoryWatcher) -> Void)?
    /// Counters for the log and the benchmark.
    private(set) var messagesSent = 0
    private(set) var changesSent = 0
    /// Messages not sent to a watcher that was behind, its rooms noted instead.
    private(set) var messagesFolded = 0

    init(maxWatchers: Int, log: ServerLog, clock: @escaping () -> Int64 = MonotonicClock.milliseconds) {
        self.maxWatchers = maxWatchers
        self.log = log
        self.clock = clock
    }

    // MARK: Rooms

    package func consume(_ outcome: Outcome, in room: String) {
        followed.insert(room)
        guard let change = outcome.listing else { return }
        pending.note(change, before: listings[room])
        switch change {
        case .added(let listing, _), .updated(let listing): listings[room] = listing
        case .removed: listings[room] = nil
        }
        changed(deferred: false)
    }

    /// This server takes a copy of `room`, whose lobbies it takes to have been told `reported` (nil: nothing):
    /// from now on its own outcomes say what the room's entry is, not the node that owns it. The list shows
    /// `reported` until the copy's first change, which comes next; so that a watcher sees only the difference
    /// between the owner's word and the copy's, nothing goes out before the loop's next turn.
    package func follow(_ room: String, reported: RoomListing?) {
        guard followed.insert(room).inserted, listings[room] != reported else { return }
        let change = ListingChange.between(
            listings[room], reported, room: room, arrival: .started, departure: .unlisted)
        if let change { pending.note(change, before: listings[room]) }
        listings[room] = reported
        changed(deferred: true)
    }

    /// What the other nodes of a cluster say of the rooms they own now (read by the cluster's rooms), each room
    /// as a lobby that knew nothing of it would be told: `added` while listed (with why it arrived), `removed`
    /// for a while after it left (with why). Rooms this server follows keep their own entries; the others change
    /// to match, and a room no node speaks of any more leaves the list as ended.
    package func replaceRemote(_ entries: [String: ListingChange]) {
        var touched = false
        for room in Set(remote.keys).union(entries.keys).sorted() where !followed.contains(room) {
            let before = listings[room]
            var after: RoomListing?
            var arrival = ListingArrival.started
            var departure = ListingDeparture.ended
            switch entries[room] {
            case .added(let listing, let why)?:
                after = listing
                arrival = why
            case .updated(let listing)?: after = listing
            case .removed(_, let why)?: departure = why
            case nil: break
            }
            guard
                let change = ListingChange.between(
                    before, after, room: room, arrival: arrival, departure: departure)
            else { continue }
            pending.note(change, before: before)
            listings[room] = after
            touched = true
        }
        remote = entries
        if touched { changed(deferred: false) }
    }

    /// The list changed: the first change after a quiet spell goes out at once (unless `deferred`), the others
    /// at the end of the window.
    private func changed(deferred: Bool) {
        cachedList = nil
        let now = clock()
        if !deferred, now - lastSent >= Self.window {
            flush()
        } else if !flushScheduled, let loop {
            flushScheduled = true
            _ = loop.schedule(after: .milliseconds(max(1, Self.window - (now - lastSent)))) { [self] in
                flushScheduled = false
                flush()
            }
        } else if loop == nil, !deferred {
            flush()
        }
    }

    /// Sends what changed since the last message, as one message to every watcher that keeps up; a watcher that
    /// is behind has the rooms noted for when it catches up.
    func flush() {
        let batch = pending
        pending = PendingListings()
        let changes = batch.changes(to: listings)
        guard !changes.isEmpty else { return }
        seq += 1
        cachedList = nil
        lastSent = clock()
        let message = PreparedMessage(
            text: String(decoding: DirectoryCodec.encode(.changed(changes, seq: seq)), as: UTF8.self))
        for watcher in watchers.values {
            if watcher.behind == nil && !watcher.connection.isBacklogged {
                watcher.connection.send(message)
                watcher.seq = seq
                messagesSent += 1
            } else {
                fallBehind(watcher, batch)
            }
        }
        changesSent += changes.count
    }

    /// Notes `batch` for a watcher that has not read what it was sent, and has it told once it has.
    private func fallBehind(_ watcher: Watcher, _ batch: PendingListings) {
        messagesFolded += 1
        if watcher.behind != nil {
            watcher.behind?.fold(batch)
            return
        }
        watcher.behind = batch
        let id = watcher.connection.id
        watcher.connection.whenDrained { [weak self, weak watcher] in
            guard let self, let watcher, watchers[id] === watcher else { return }
            catchUp(watcher)
        }
    }

    /// Tells a watcher that has caught up how each room it missed is now, in one message numbered as the
    /// directory's latest (`since` its last).
    private func catchUp(_ watcher: Watcher) {
        guard let behind = watcher.behind else { return }
        watcher.behind = nil
        guard watcher.seq != seq else { return }
        let message = DirectoryMessage.changed(behind.changes(to: listings), seq: seq, since: watcher.seq)
        watcher.connection.send(PreparedMessage(text: String(decoding: DirectoryCodec.encode(message), as: UTF8.self)))
        watcher.seq = seq
        messagesSent += 1
    }

    /// The whole list as it stands, most listeners first, framed once until it changes.
    func listMessage() -> PreparedMessage {
        if let cachedList { return cachedList }
        let rooms = listings.values.sorted(by: RoomListing.lobbyOrder)
        let message = PreparedMessage(
            text: String(decoding: DirectoryCodec.encode(.rooms(rooms, seq: seq)), as: UTF8.self))
        cachedList = message
        return message
    }

    /// Sends the whole list: it holds every room as it is, so whatever the watcher was behind on is moot.
    private func sendList(to watcher: Watcher) {
        watcher.connection.send(listMessage())
        watcher.seq = seq
        watcher.behind = nil
        messagesSent += 1
    }

    // MARK: Watchers

    /// Whether the directory can take one more watcher.
    var hasRoom: Bool { watchers.count < maxWatchers }

    /// A lobby connected: it gets `welcome` (what its link lets it do), the whole list, then every change.
    func watch(_ connection: some DirectoryWatcher, welcome: DirectoryMessage? = nil) {
        let watcher = Watcher(connection: connection)
        watchers[connection.id] = watcher
        if let welcome { send(welcome, to: connection) }
        sendList(to: watcher)
    }

    func isWatching(_ connection: some DirectoryWatcher) -> Bool {
        watchers[connection.id] != nil
    }

    /// A watcher's message: `list` (answered with the whole list, within its rate), anything else refused.
    func received(_ payload: WebSocketPayload, from connection: some DirectoryWatcher, now: Int64) {
        guard let watcher = watchers[connection.id] else { return }
        guard watcher.bucket.allow(nowMilliseconds: now) else {
            if !watcher.throttled {
                watcher.throttled = true
                log.warning("\(connection): lobby requests too fast; dropping them until the rate falls")
                send(
                    .error(
                        code: .rateLimited,
                        message: "too many requests: this one and the next are dropped until the rate falls"),
                    to: connection)
            }
            return
        }
        watcher.throttled = false
        guard case .text(let text) = payload else {
            send(.error(code: .badRequest, message: "the directory takes text messages only"), to: connection)
            return
        }
        do {
            switch try DirectoryCodec.decodeRequest(Array(text.utf8)) {
            case .list: sendList(to: watcher)
            case .openRoom(let name, let topic, let id):
                guard let openRoom else {
                    send(
                        .refused(code: .forbidden, message: "This server does not open rooms.", id: id), to: connection)
                    return
                }
                openRoom(name, topic, id, connection)
            }
        } catch {
            send(.error(code: error.code, message: error.message), to: connection)
        }
    }

    /// Answers one watcher's request, if it still watches.
    func answer(_ message: DirectoryMessage, to connection: some DirectoryWatcher) {
        guard watchers[connection.id] != nil else { return }
        send(message, to: connection)
    }

    func closed(_ connection: some DirectoryWatcher) {
        watchers[connection.id] = nil
    }

    private func send(_ message: DirectoryMessage, to connection: some DirectoryWatcher) {
        connection.send(PreparedMessage(text: String(decoding: DirectoryCodec.encode(message), as: UTF8.self)))
    }
}
