import Foundation
import RoomCore
import RoomProtocol
import RoomTransport

/// The lobby's list of live rooms, and the connections watching it (`/rooms`).
///
/// The rooms' authorities report every change of a room's entry in their outcomes (`Outcome.listing`: a room
/// started or became listed, changed, ended, emptied or became unlisted); the directory keeps the list and tells
/// its watchers. Changes are gathered: the first change after a quiet spell goes out at once, and further
/// changes within the next 50 ms go out together at its end, one `rooms_changed` per watcher however many rooms
/// changed, so a busy server costs each watcher at most 20 messages a second. Each message is encoded once for
/// all watchers, and the whole list is kept encoded until it changes, so a new watcher (or a `list` request)
/// costs one send.
///
/// Loop thread only (like the rest of `ServerState`); its timer runs on the same loop.
final class RoomDirectory: OutcomeConsumer, @unchecked Sendable {
    /// How long changes are gathered after one went out.
    static let window: Int64 = 50
    /// A watcher's `list` requests: a burst of 5, then one a second.
    static let listBurst: Double = 5
    static let listPerSecond: Double = 1

    final class Watcher {
        let connection: WebSocketConnection
        var bucket = LeakyBucket(capacity: RoomDirectory.listBurst, drainPerSecond: RoomDirectory.listPerSecond)
        var throttled = false

        init(connection: WebSocketConnection) {
            self.connection = connection
        }
    }

    /// The live, listed rooms by name.
    private(set) var listings: [String: RoomListing] = [:]
    /// The number of the last message sent (or of the list as it stands).
    private(set) var seq: Int64 = 0
    private(set) var watchers: [Int: Watcher] = [:]
    let maxWatchers: Int
    let log: ServerLog
    /// The loop the gathering timer runs on, once known.
    var loop: EventLoop?
    private let clock: () -> Int64
    /// Rooms changed since the last message, in order, with what watchers saw before.
    private var pending: [(room: String, before: RoomListing?)] = []
    private var pendingIndex: [String: Int] = [:]
    /// Why each pending room arrived or left, from its latest change.
    private var reasons: [String: (arrival: ListingArrival, departure: ListingDeparture)] = [:]
    private var lastSent: Int64 = .min / 2
    private var flushScheduled = false
    private var cachedList: String?
    /// Counters for the log and the benchmark.
    private(set) var messagesSent = 0
    private(set) var changesSent = 0

    init(maxWatchers: Int, log: ServerLog, clock: @escaping () -> Int64 = monotonicMilliseconds) {
        self.maxWatchers = maxWatchers
        self.log = log
        self.clock = clock
    }

    // MARK: Rooms

    func consume(_ outcome: Outcome, in room: String) {
        guard let change = outcome.listing else { return }
        if pendingIndex[room] == nil {
            pendingIndex[room] = pending.count
            pending.append((room, listings[room]))
        }
        switch change {
        case .added(let listing, let arrival):
            listings[room] = listing
            reasons[room] = (arrival, reasons[room]?.departure ?? .ended)
        case .updated(let listing):
            listings[room] = listing
        case .removed(_, let departure):
            listings[room] = nil
            reasons[room] = (reasons[room]?.arrival ?? .started, departure)
        }
        cachedList = nil
        let now = clock()
        if now - lastSent >= Self.window {
            flush()
        } else if !flushScheduled, let loop {
            flushScheduled = true
            _ = loop.schedule(after: .milliseconds(Self.window - (now - lastSent))) { [self] in
                flushScheduled = false
                flush()
            }
        } else if loop == nil {
            flush()
        }
    }

    /// Sends what changed since the last message, as one message to every watcher.
    func flush() {
        let changes = pending.compactMap { entry -> ListingChange? in
            let why = reasons[entry.room] ?? (.started, .ended)
            return ListingChange.between(
                entry.before, listings[entry.room], room: entry.room, arrival: why.arrival, departure: why.departure)
        }
        pending = []
        pendingIndex = [:]
        reasons = [:]
        guard !changes.isEmpty else { return }
        seq += 1
        lastSent = clock()
        let text = String(decoding: DirectoryCodec.encode(.changed(changes, seq: seq)), as: UTF8.self)
        for watcher in watchers.values { watcher.connection.send(text: text) }
        messagesSent += watchers.count
        changesSent += changes.count
    }

    /// The whole list as it stands, most listeners first, encoded once until it changes.
    func listText() -> String {
        if let cachedList { return cachedList }
        let rooms = listings.values.sorted(by: RoomListing.lobbyOrder)
        let text = String(decoding: DirectoryCodec.encode(.rooms(rooms, seq: seq)), as: UTF8.self)
        cachedList = text
        return text
    }

    // MARK: Watchers

    /// Whether the directory can take one more watcher.
    var hasRoom: Bool { watchers.count < maxWatchers }

    /// A lobby connected: it gets the whole list, then every change.
    func watch(_ connection: WebSocketConnection) {
        watchers[connection.id] = Watcher(connection: connection)
        connection.send(text: listText())
        messagesSent += 1
    }

    func isWatching(_ connection: WebSocketConnection) -> Bool {
        watchers[connection.id] != nil
    }

    /// A watcher's message: `list` (answered with the whole list, within its rate), anything else refused.
    func received(_ payload: WebSocketPayload, from connection: WebSocketConnection, now: Int64) {
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
            case .list:
                connection.send(text: listText())
                messagesSent += 1
            }
        } catch {
            send(.error(code: error.code, message: error.message), to: connection)
        }
    }

    func closed(_ connection: WebSocketConnection) {
        watchers[connection.id] = nil
    }

    private func send(_ message: DirectoryMessage, to connection: WebSocketConnection) {
        connection.send(text: String(decoding: DirectoryCodec.encode(message), as: UTF8.self))
    }
}

/// Milliseconds on the monotonic clock, for intervals.
func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
