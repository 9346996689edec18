import Foundation
import Glibc
import Platform
import RedisClient
import Synchronization

/// How often a node talks to Redis and how long it trusts what it heard. The defaults are the production
/// timings of docs/cluster.md; tests shorten them.
public struct ClusterTiming: Sendable, Equatable {
    /// How long a room's lease lasts unless renewed.
    public var leaseMilliseconds = 5000
    /// How long after the send time of its last acknowledged renewal a node stops acting as a room's owner,
    /// measured on CLOCK_BOOTTIME (which keeps counting while the process is frozen or the machine sleeps).
    public var selfFenceMilliseconds = 4000
    /// How often the node refreshes its registration, renews its leases and checks the rooms it watches.
    public var tickMilliseconds = 1000
    /// How long a node's registration lasts unless refreshed.
    public var nodeTTLMilliseconds = 5000
    /// Longest random wait before trying to take a room whose owner is gone (so nodes do not all try at once).
    public var acquireJitterMilliseconds = 300
    /// After Redis comes back, how long nodes that did not own a room wait before taking it, so that its
    /// former owner, which holds its latest state, takes it back first.
    public var formerOwnerHeadStartMilliseconds = 2000
    /// How long a request may wait for Redis before it is answered "unavailable".
    public var requestDeadlineMilliseconds = 5000
    /// Longest wait for one Redis reply.
    public var commandTimeoutMilliseconds = 1000
    /// How long a follower's blocking read waits for new entries before asking again.
    public var readBlockMilliseconds = 500

    public init() {}
}

/// Who this node is and where its Redis is.
public struct ClusterConfiguration: Sendable {
    public var redis: RedisEndpoint
    public var node: String
    /// Random per process start unless given.
    public var incarnation: UInt64
    public var mediaAddress: String
    public var relayAddress: String
    /// The local address Redis connections come from (the node's own address).
    public var sourceAddress: String?
    public var timing: ClusterTiming
    public var retention: RetentionLimits

    public init(
        redis: RedisEndpoint, node: String, incarnation: UInt64 = UInt64.random(in: 1...UInt64(Int64.max)),
        mediaAddress: String, relayAddress: String, sourceAddress: String? = nil,
        timing: ClusterTiming = ClusterTiming(),
        retention: RetentionLimits = RetentionLimits()
    ) {
        self.redis = redis
        self.node = node
        self.incarnation = incarnation
        self.mediaAddress = mediaAddress
        self.relayAddress = relayAddress
        self.sourceAddress = sourceAddress
        self.timing = timing
        self.retention = retention
    }
}

/// What a node tells its runtime, on the runtime's thread (through `deliver`).
public enum ClusterNotice: Sendable, Equatable {
    /// This node now owns the room. With `reseed`, Redis lost the room's state (it restarted empty) and the
    /// runtime writes it again from its own copy with a reset entry (`ClusterNode.reseed`).
    case becameOwner(room: String, token: LeaseToken, reseed: Bool)
    /// This node must stop acting as the room's owner: its renewal was refused (`fenced`), or it heard no
    /// acknowledgement in time (`selfFenced`: Redis unreachable, or this process was frozen).
    case lostOwnership(room: String, token: LeaseToken, fenced: Bool)
    /// A node registered (or came back as a new incarnation).
    case nodeJoined(NodeRecord)
    /// A node's registration expired or was replaced by a new incarnation: its peers are gone.
    case nodeLeft(NodeRecord)
    /// Redis stopped answering; requests fail "unavailable" until it returns. Media is not affected.
    case redisUnavailable(String)
    case redisAvailable
    /// Redis came back without its data (its generation changed). Rooms this node owned are taken again and
    /// reported with `becameOwner(reseed: true)`.
    case redisLostData
    /// New entries of a followed room, in order, continuing the chain from where the follower was.
    case entries(room: String, [RoomEntry])
    /// A followed room's chain broke (entries trimmed, or reset by another owner): read its snapshot and
    /// follow again from the snapshot's last ID.
    case resync(room: String)
    /// Requests queued for a room this node serves as owner, in order.
    case requests(room: String, [RoomRequest])
    /// What the other live nodes say of the rooms they own, for the lobby (`publishLobby`): every node's
    /// records, sent whenever one of them changed or a node came or went.
    case lobby([LobbyRecords])
}

/// One node's view of the cluster and the calls its runtime makes: the API the room server drives.
///
/// Threads: four Redis connections, each on a worker thread of its own (lease and membership, writes, the
/// event follower, the request reader), and a timer thread. Nothing here blocks the caller: every call
/// answers through `deliver`. Lease bookkeeping runs on the lease worker, so a busy runtime cannot delay
/// renewals; `owns(_:)` may be called from any thread.
public final class ClusterNode: Sendable {
    public let configuration: ClusterConfiguration
    private let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let notify: @Sendable (ClusterNotice) -> Void
    private let leaseWorker: RedisWorker
    private let writeWorker: RedisWorker
    private let eventWorker: RedisWorker
    private let requestWorker: RedisWorker
    private let state = Mutex(NodeState())
    private let running = Atomic<Bool>(false)
    private let timerStopped = DispatchSemaphore(value: 0)

    struct HeldLease {
        var token: LeaseToken
        /// CLOCK_BOOTTIME (ms) when the last acknowledged acquire or renewal was sent.
        var confirmedAt: Int64
    }

    struct NodeState {
        var slot = 0
        var generation: String?
        var leases: [String: HeldLease] = [:]
        var watched: Set<String> = []
        var formerlyOwned: Set<String> = []
        var pendingAcquires: [String: Int64] = [:]
        var highestEpoch: [String: UInt64] = [:]
        var nodes: [String: NodeRecord] = [:]
        /// When each live node last refreshed its registration, as far as its key's TTL tells (CLOCK_BOOTTIME ms).
        var renewals: [String: Int64] = [:]
        var available = true
        var unavailableSince: Int64?
        var availableAgainAt: Int64 = 0
        var tickInFlight = false
        var nextTick: Int64 = 0
        var following: [String: EntryID] = [:]
        var followLoopRunning = false
        var serving: [String: String] = [:]
        var serveLoopRunning = false
        /// The other nodes' lobby records as last read, by node name, with the version read.
        var lobbies: [String: (version: String, records: LobbyRecords)] = [:]
    }

    /// Prepares the node; `start` connects. `deliver` runs a closure on the runtime's thread (its loop's
    /// `execute`); `notify` receives notices there.
    public init(
        configuration: ClusterConfiguration, deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        notify: @escaping @Sendable (ClusterNotice) -> Void
    ) {
        self.configuration = configuration
        self.deliver = deliver
        self.notify = notify
        let options = RedisOptions(
            connectTimeoutMilliseconds: configuration.timing.commandTimeoutMilliseconds,
            commandTimeoutMilliseconds: configuration.timing.commandTimeoutMilliseconds,
            sourceAddress: configuration.sourceAddress)
        var reading = options
        reading.commandTimeoutMilliseconds += configuration.timing.readBlockMilliseconds
        let inline: @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() }
        leaseWorker = RedisWorker(
            name: "cluster-lease", endpoint: configuration.redis, options: options, deliver: inline)
        writeWorker = RedisWorker(
            name: "cluster-write", endpoint: configuration.redis, options: options, deliver: deliver)
        eventWorker = RedisWorker(
            name: "cluster-events", endpoint: configuration.redis, options: reading, deliver: inline)
        requestWorker = RedisWorker(
            name: "cluster-request", endpoint: configuration.redis, options: reading, deliver: inline)
    }

    /// This node as the cluster knows it (its slot is known once started).
    public var record: NodeRecord {
        NodeRecord(
            name: configuration.node, incarnation: configuration.incarnation, slot: state.withLock { $0.slot },
            mediaAddress: configuration.mediaAddress, relayAddress: configuration.relayAddress)
    }

    /// The live nodes, as of the last tick (this one included).
    public var nodes: [NodeRecord] { state.withLock { $0.nodes.values.sorted { $0.name < $1.name } } }

    /// How many milliseconds ago the node `name` last refreshed its registration in Redis, as of the last tick
    /// (its key's remaining TTL says when it did); nil for a node not registered. A node that keeps refreshing
    /// is alive and reaches Redis.
    public func millisecondsSinceRenewal(of name: String) -> Int64? {
        let now = Self.now()
        return state.withLock { state in state.renewals[name].map { now - $0 } }
    }

    /// Connects, loads the function library and registers, on the calling thread (at start-up, before the
    /// runtime's loop has work). Fails with an error naming the Redis address when Redis cannot be reached.
    public func start() throws(ClusterError) {
        do throws(ClusterError) {
            try register()
        } catch {
            // A node that could not start keeps no threads.
            for worker in [leaseWorker, writeWorker, eventWorker, requestWorker] { worker.stop() }
            throw error
        }
        running.store(true, ordering: .releasing)
        startThread(named: "cluster-timer") { [self] in timerLoop() }
    }

    private func register() throws(ClusterError) {
        guard ClusterKeys.isValidName(configuration.node) else { throw .badName(configuration.node) }
        let connection = RedisConnection(
            endpoint: configuration.redis,
            options: RedisOptions(
                connectTimeoutMilliseconds: configuration.timing.commandTimeoutMilliseconds,
                commandTimeoutMilliseconds: configuration.timing.commandTimeoutMilliseconds,
                sourceAddress: configuration.sourceAddress))
        defer { connection.close() }
        do throws(RedisError) {
            try connection.connect()
        } catch {
            throw ClusterError(error)
        }
        let store = ClusterRedis(connection: connection, retention: configuration.retention)
        try store.loadFunctions()
        switch try store.register(
            record, ttlMilliseconds: configuration.timing.nodeTTLMilliseconds,
            generationCandidate: Self.newGeneration())
        {
        case .registered(let slot, let generation):
            state.withLock {
                $0.slot = slot
                $0.generation = generation
            }
        case .nameTaken(let holder): throw .nameTaken(node: configuration.node, by: holder)
        case .noFreeSlot, .slotLost: throw .noFreeSlot
        }
        // A node starting afresh owns nothing yet: whatever an earlier incarnation listed is gone.
        try store.clearLobby(node: configuration.node)
        let nodes = try store.liveNodes()
        state.withLock { state in
            for node in nodes { state.nodes[node.name] = node }
            state.nextTick = Self.now() + Int64(configuration.timing.tickMilliseconds)
        }
    }

    /// Gives up this node's leases and registration, then stops its threads.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        timerStopped.wait()
        let leases = state.withLock { state in
            defer { state.leases.removeAll() }
            return state.leases
        }
        let record = self.record
        let retention = configuration.retention
        let done = DispatchSemaphore(value: 0)
        leaseWorker.perform(
            deadlineMilliseconds: 1000,
            { connection throws(RedisError) in
                let store = ClusterRedis(connection: connection, retention: retention)
                for (room, lease) in leases { try? store.release(room, token: lease.token) }
                try? store.clearLobby(node: record.name)
                try? store.unregister(record)
            }, completion: { _ in done.signal() })
        _ = done.wait(timeout: .now() + 3)
        for worker in [leaseWorker, writeWorker, eventWorker, requestWorker] { worker.stop() }
    }

    /// Stops the node's threads without releasing anything, the way a crash would leave Redis (for tests of
    /// what other nodes do when a node dies).
    public func abandon() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        timerStopped.wait()
        for worker in [leaseWorker, writeWorker, eventWorker, requestWorker] { worker.stop() }
    }

    // MARK: Ownership

    /// The token under which this node owns `room` now, or `nil`: not held, or not confirmed recently enough
    /// to be trusted (self-fencing). Any thread.
    public func owns(_ room: String) -> LeaseToken? {
        let now = Self.now()
        let fence = Int64(configuration.timing.selfFenceMilliseconds)
        return state.withLock { state in
            guard let lease = state.leases[room], now - lease.confirmedAt < fence else { return nil }
            return lease.token
        }
    }

    /// Tries to own `room` now (a client joined a room nobody owns, say), and watches it: when its owner goes
    /// away later, this node tries to take it over.
    public func claim(_ room: String, completion: @escaping @Sendable (Result<AcquireResult, ClusterError>) -> Void) {
        guard ClusterKeys.isValidName(room) else {
            deliver { completion(.failure(.badName(room))) }
            return
        }
        state.withLock { _ = $0.watched.insert(room) }
        acquire(room, reseed: false) { [deliver] result in deliver { completion(result) } }
    }

    /// Watches a room this node serves without claiming it: it takes the room over when its owner goes away.
    public func watch(_ room: String) {
        guard ClusterKeys.isValidName(room) else { return }
        state.withLock { _ = $0.watched.insert(room) }
    }

    /// Stops watching a room and gives up its lease if held (the room emptied on this node, or ended).
    public func forget(_ room: String) {
        let lease = state.withLock { state -> HeldLease? in
            state.watched.remove(room)
            state.pendingAcquires[room] = nil
            state.formerlyOwned.remove(room)
            return state.leases.removeValue(forKey: room)
        }
        guard let lease else { return }
        let retention = configuration.retention
        leaseWorker.perform(
            { connection throws(RedisError) in
                try? ClusterRedis(connection: connection, retention: retention).release(room, token: lease.token)
            }, completion: { _ in })
    }

    private func acquire(
        _ room: String, reseed: Bool, completion: @escaping @Sendable (Result<AcquireResult, ClusterError>) -> Void
    ) {
        let configuration = self.configuration
        leaseWorker.perform(
            deadlineMilliseconds: configuration.timing.requestDeadlineMilliseconds,
            {
                [self] connection throws(RedisError) in
                let store = ClusterRedis(connection: connection, retention: configuration.retention)
                let floor = state.withLock { $0.highestEpoch[room] ?? 0 }
                let sent = Self.now()
                let result: Result<AcquireResult, ClusterError>
                do throws(ClusterError) {
                    result = .success(
                        try store.acquire(
                            room, node: configuration.node, incarnation: configuration.incarnation,
                            leaseMilliseconds: configuration.timing.leaseMilliseconds, epochFloor: floor))
                } catch {
                    result = .failure(error)
                }
                if case .success(.acquired(let token)) = result {
                    let isNew = state.withLock { state -> Bool in
                        let isNew = state.leases[room]?.token != token
                        state.leases[room] = HeldLease(token: token, confirmedAt: sent)
                        state.highestEpoch[room] = max(state.highestEpoch[room] ?? 0, token.epoch)
                        state.pendingAcquires[room] = nil
                        state.formerlyOwned.insert(room)
                        return isNew
                    }
                    if isNew || reseed { post(.becameOwner(room: room, token: token, reseed: reseed)) }
                }
                if case .success(.held(let holder, _)) = result {
                    state.withLock { $0.highestEpoch[room] = max($0.highestEpoch[room] ?? 0, holder.epoch) }
                }
                return result
            },
            completion: { result in
                switch result {
                case .success(let inner): completion(inner)
                case .failure(let error): completion(.failure(ClusterError(error)))
                }
            })
    }

    // MARK: Events

    /// Appends an entry to a room this node owns, with its state operations, fenced by the node's token.
    /// Retried while Redis is unavailable, up to the request deadline (the append is idempotent: a retry of
    /// an entry already written answers `duplicate`). Answers `notOwner` without writing when this node does
    /// not trust its lease.
    public func append(
        _ room: String, entry: RoomEntry, operations: [StateOperation] = [], requestCursor: String? = nil,
        completion: @escaping @Sendable (Result<AppendResult, ClusterError>) -> Void
    ) {
        append(room, entry: entry, operations: { operations }, requestCursor: requestCursor, completion: completion)
    }

    /// `append`, with state operations made on the write thread just before they are written (a checkpoint of a
    /// big room takes long to encode: the runtime's thread does not wait for it).
    public func append(
        _ room: String, entry: RoomEntry, operations makeOperations: @escaping @Sendable () -> [StateOperation],
        requestCursor: String? = nil, completion: @escaping @Sendable (Result<AppendResult, ClusterError>) -> Void
    ) {
        let configuration = self.configuration
        let deadline = Self.now() + Int64(configuration.timing.requestDeadlineMilliseconds)
        writeWorker.perform(
            deadlineMilliseconds: configuration.timing.requestDeadlineMilliseconds,
            {
                [self] connection throws(RedisError) -> Result<AppendResult, ClusterError> in
                let store = ClusterRedis(connection: connection, retention: configuration.retention)
                let operations = makeOperations()
                while true {
                    guard let token = owns(room) else { return .failure(.notOwner(room: room)) }
                    var written = entry
                    written.epoch = token.epoch
                    do throws(ClusterError) {
                        let result = try store.append(
                            room, entry: written, token: token, operations: operations, requestCursor: requestCursor,
                            at: Self.wallClockMilliseconds())
                        if case .fenced = result { dropLease(room, token: token, fenced: true) }
                        return .success(result)
                    } catch {
                        guard error.isUnavailable, Self.now() + 50 < deadline else { return .failure(error) }
                        usleep(50_000)
                    }
                }
            },
            completion: { result in
                switch result {
                case .success(let inner): completion(inner)
                case .failure(let error): completion(.failure(ClusterError(error)))
                }
            })
    }

    /// Writes a room's state again after Redis lost it: one reset entry carrying the whole snapshot, after
    /// `snapshot.lastID` (`.zero` in an emptied Redis), with the given ID.
    public func reseed(
        _ room: String, snapshot: RoomSnapshot, id: EntryID, body: [UInt8],
        completion: @escaping @Sendable (Result<AppendResult, ClusterError>) -> Void
    ) {
        let entry = RoomEntry(id: id, prev: .zero, kind: .reset, body: body)
        append(
            room, entry: entry, operations: snapshot.operations, requestCursor: snapshot.requestCursor,
            completion: completion)
    }

    /// The room's state and last entry ID, read together.
    public func snapshot(_ room: String, completion: @escaping @Sendable (Result<RoomSnapshot, ClusterError>) -> Void) {
        run(on: writeWorker, { store throws(ClusterError) in try store.snapshot(room) }, completion: completion)
    }

    /// Entries after `after` (to catch up before following).
    public func entries(
        _ room: String, after: EntryID, completion: @escaping @Sendable (Result<[RoomEntry], ClusterError>) -> Void
    ) {
        run(
            on: writeWorker, { store throws(ClusterError) in try store.entries(room, after: after) },
            completion: completion)
    }

    /// Delivers the room's entries after `after` as they are written (`entries` notices), until `unfollow`.
    public func follow(_ room: String, after: EntryID) {
        guard ClusterKeys.isValidName(room) else { return }
        let start = state.withLock { state -> Bool in
            state.following[room] = after
            defer { state.followLoopRunning = true }
            return !state.followLoopRunning
        }
        if start { followLoop() }
    }

    public func unfollow(_ room: String) {
        state.withLock { _ = $0.following.removeValue(forKey: room) }
    }

    private func followLoop() {
        let configuration = self.configuration
        eventWorker.perform(
            deadlineMilliseconds: Int.max / 4,
            { [self] connection throws(RedisError) in
                let positions = state.withLock { state -> [(room: String, after: EntryID)] in
                    state.following.map { (room: $0.key, after: $0.value) }
                }
                guard running.load(ordering: .acquiring), !positions.isEmpty else {
                    state.withLock { $0.followLoopRunning = false }
                    return false
                }
                let store = ClusterRedis(connection: connection, retention: configuration.retention)
                do throws(ClusterError) {
                    let found = try store.waitForEntries(
                        positions, blockMilliseconds: configuration.timing.readBlockMilliseconds)
                    for (room, entries) in found where !entries.isEmpty {
                        let notice = state.withLock { state -> ClusterNotice? in
                            guard let position = state.following[room] else { return nil }
                            if entries[0].prev != position, entries[0].kind != .reset {
                                state.following[room] = nil
                                return .resync(room: room)
                            }
                            state.following[room] = entries[entries.count - 1].id
                            let highest = entries.map(\.epoch).max() ?? 0
                            state.highestEpoch[room] = max(state.highestEpoch[room] ?? 0, highest)
                            return .entries(room: room, entries)
                        }
                        if let notice { post(notice) }
                    }
                } catch {
                    usleep(100_000)
                }
                return true
            },
            completion: { [self] result in
                if case .success(true) = result { followLoop() }
                if case .failure = result { state.withLock { $0.followLoopRunning = false } }
            })
    }

    // MARK: Requests

    /// Queues a request for the room's owner (from this node's client). Not retried: a request whose answer
    /// was lost may or may not be queued, and the client asks again under the same request ID.
    public func submit(
        _ room: String, body: [UInt8], completion: @escaping @Sendable (Result<String, ClusterError>) -> Void
    ) {
        let node = configuration.node
        run(
            on: writeWorker, { store throws(ClusterError) in try store.submitRequest(room, from: node, body: body) },
            completion: completion)
    }

    /// Delivers the room's requests after `cursor` (`requests` notices) while this node serves it as owner.
    public func serveRequests(_ room: String, after cursor: String) {
        guard ClusterKeys.isValidName(room) else { return }
        let start = state.withLock { state -> Bool in
            state.serving[room] = cursor
            defer { state.serveLoopRunning = true }
            return !state.serveLoopRunning
        }
        if start { serveLoop() }
    }

    public func stopServingRequests(_ room: String) {
        state.withLock { _ = $0.serving.removeValue(forKey: room) }
    }

    private func serveLoop() {
        let configuration = self.configuration
        requestWorker.perform(
            deadlineMilliseconds: Int.max / 4,
            { [self] connection throws(RedisError) in
                let rooms = state.withLock { $0.serving }
                guard running.load(ordering: .acquiring), !rooms.isEmpty else {
                    state.withLock { $0.serveLoopRunning = false }
                    return false
                }
                let store = ClusterRedis(connection: connection, retention: configuration.retention)
                let block = max(10, configuration.timing.readBlockMilliseconds / max(1, rooms.count))
                for (room, cursor) in rooms.sorted(by: { $0.key < $1.key }) {
                    guard let requests = try? store.requests(room, after: cursor, blockMilliseconds: block),
                        !requests.isEmpty
                    else { continue }
                    let deliverIt = state.withLock { state -> Bool in
                        guard state.serving[room] == cursor else { return false }
                        state.serving[room] = requests[requests.count - 1].id
                        return true
                    }
                    if deliverIt { post(.requests(room: room, requests)) }
                }
                return true
            },
            completion: { [self] result in
                if case .success(true) = result { serveLoop() }
                if case .failure = result { state.withLock { $0.serveLoopRunning = false } }
            })
    }

    // MARK: The lobby

    /// How long a node's lobby records outlive its last renewal: past its registration's lifetime, so they are
    /// never read without a live node behind them (readers keep only live nodes' records anyway).
    var lobbyTTLMilliseconds: Int { 2 * configuration.timing.nodeTTLMilliseconds }

    /// Replaces what this node says of the rooms it owns (room to the runtime's entry) with `entries`;
    /// `completion` (on the runtime's thread) says whether Redis has it.
    public func publishLobby(_ entries: [String: [UInt8]], completion: @escaping @Sendable (Bool) -> Void) {
        let node = configuration.node
        let ttl = lobbyTTLMilliseconds
        let version = Self.newGeneration()
        run(
            on: writeWorker,
            { store throws(ClusterError) in
                try store.replaceLobby(node: node, entries: entries, version: version, ttlMilliseconds: ttl)
            }, completion: { result in completion((try? result.get()) != nil) })
    }

    /// Reads the lobby records of the live nodes whose version changed since the last read; posts them all
    /// when anything changed (a node's records, or a node coming or going).
    private func readLobbies(_ store: ClusterRedis, live: [NodeRecord]) throws(ClusterError) {
        try store.refreshLobby(node: configuration.node, ttlMilliseconds: lobbyTTLMilliseconds)
        let others = live.filter { $0.name != configuration.node }
        let versions = try store.lobbyVersions(of: others.map(\.name))
        let known = state.withLock { $0.lobbies }
        var lobbies: [String: (version: String, records: LobbyRecords)] = [:]
        var changed = Set(known.keys) != Set(others.filter { versions[$0.name] != nil }.map(\.name))
        for node in others {
            guard let version = versions[node.name] else { continue }
            if let old = known[node.name], old.version == version, old.records.incarnation == node.incarnation {
                lobbies[node.name] = old
                continue
            }
            let entries = try store.lobby(of: node.name)
            lobbies[node.name] = (
                version, LobbyRecords(node: node.name, incarnation: node.incarnation, entries: entries)
            )
            if known[node.name]?.records.entries != entries || known[node.name]?.records.incarnation != node.incarnation
            {
                changed = true
            }
        }
        state.withLock { $0.lobbies = lobbies }
        if changed { post(.lobby(lobbies.values.map(\.records).sorted { $0.node < $1.node })) }
    }

    // MARK: The timer and the tick

    private func timerLoop() {
        while running.load(ordering: .acquiring) {
            usleep(20_000)
            let now = Self.now()
            let fence = Int64(configuration.timing.selfFenceMilliseconds)
            let (expired, dueAcquires, tickDue) = state.withLock { state in
                let expired = state.leases.filter { now - $0.value.confirmedAt >= fence }
                for room in expired.keys { state.leases[room] = nil }
                let due = state.pendingAcquires.filter { $0.value <= now }.map(\.key)
                for room in due { state.pendingAcquires[room] = nil }
                var tickDue = false
                if now >= state.nextTick, !state.tickInFlight {
                    state.tickInFlight = true
                    state.nextTick = now + Int64(configuration.timing.tickMilliseconds)
                    tickDue = true
                }
                return (expired, due, tickDue)
            }
            for (room, lease) in expired.sorted(by: { $0.key < $1.key }) {
                post(.lostOwnership(room: room, token: lease.token, fenced: false))
            }
            for room in dueAcquires.sorted() { acquire(room, reseed: false) { _ in } }
            if tickDue { tick() }
        }
        timerStopped.signal()
    }

    /// One round of membership, renewals and owner checks, on the lease worker.
    private func tick() {
        let configuration = self.configuration
        leaseWorker.perform(
            deadlineMilliseconds: configuration.timing.tickMilliseconds,
            {
                [self] connection throws(RedisError) in
                defer { state.withLock { $0.tickInFlight = false } }
                let store = ClusterRedis(connection: connection, retention: configuration.retention)
                do throws(ClusterError) {
                    try tickBody(store)
                    markAvailable(true, reason: "")
                } catch {
                    if error.isUnavailable { markAvailable(false, reason: error.description) }
                }
            },
            completion: { [self] result in
                if case .failure(let error) = result {
                    state.withLock { $0.tickInFlight = false }
                    markAvailable(false, reason: error.description)
                }
            })
    }

    private func tickBody(_ store: ClusterRedis) throws(ClusterError) {
        let timing = configuration.timing
        let wanted = state.withLock { $0.slot }
        var node = record
        node.slot = wanted
        let registration = try store.register(
            node, ttlMilliseconds: timing.nodeTTLMilliseconds, generationCandidate: Self.newGeneration())
        var lostData = false
        switch registration {
        case .registered(let slot, let generation):
            lostData = state.withLock { state -> Bool in
                defer {
                    state.slot = slot
                    state.generation = generation
                }
                return state.generation != nil && state.generation != generation
            }
        case .nameTaken, .slotLost, .noFreeSlot:
            // Another incarnation under this name, or this node was gone long enough to lose its slot: it can
            // no longer trust any lease.
            let dropped = state.withLock { state -> [String: HeldLease] in
                defer { state.leases.removeAll() }
                return state.leases
            }
            for (room, lease) in dropped.sorted(by: { $0.key < $1.key }) {
                post(.lostOwnership(room: room, token: lease.token, fenced: true))
            }
        }
        if lostData {
            post(.redisLostData)
            let owned = state.withLock { state -> [String: HeldLease] in
                defer { state.leases.removeAll() }
                return state.leases
            }
            for (room, lease) in owned.sorted(by: { $0.key < $1.key }) {
                reacquireAfterDataLoss(room, lost: lease.token, store: store)
            }
        }
        let held = state.withLock { $0.leases }
        for (room, lease) in held.sorted(by: { $0.key < $1.key }) {
            let sent = Self.now()
            if try store.renew(room, token: lease.token, leaseMilliseconds: timing.leaseMilliseconds) {
                state.withLock { state in
                    if state.leases[room]?.token == lease.token { state.leases[room]?.confirmedAt = sent }
                }
            } else {
                dropLease(room, token: lease.token, fenced: true)
            }
        }
        let listed = try store.liveNodesWithTTL()
        let live = listed.map(\.record)
        let readAt = Self.now()
        let ttl = Int64(timing.nodeTTLMilliseconds)
        let (joined, left) = state.withLock { state -> ([NodeRecord], [NodeRecord]) in
            state.renewals = Dictionary(
                listed.map { ($0.record.name, readAt - max(0, ttl - Int64($0.ttlMilliseconds))) },
                uniquingKeysWith: max)
            var joined: [NodeRecord] = []
            var left: [NodeRecord] = []
            let byName = Dictionary(uniqueKeysWithValues: live.map { ($0.name, $0) })
            for (name, old) in state.nodes where byName[name]?.incarnation != old.incarnation { left.append(old) }
            for (name, new) in byName where state.nodes[name]?.incarnation != new.incarnation { joined.append(new) }
            state.nodes = byName
            return (joined, left)
        }
        for node in left.sorted(by: { $0.name < $1.name }) where node.name != configuration.node {
            post(.nodeLeft(node))
        }
        for node in joined.sorted(by: { $0.name < $1.name }) where node.name != configuration.node {
            post(.nodeJoined(node))
        }
        try readLobbies(store, live: live)
        let now = Self.now()
        let (watched, leases, headStartUntil, formerly) = state.withLock {
            (
                $0.watched, $0.leases, $0.availableAgainAt + Int64(timing.formerOwnerHeadStartMilliseconds),
                $0.formerlyOwned
            )
        }
        for room in watched.sorted() where leases[room] == nil {
            guard try store.owner(room) == nil else { continue }
            let jitter = Int64.random(in: 0...Int64(max(0, timing.acquireJitterMilliseconds)))
            let due = formerly.contains(room) ? now : max(now + jitter, headStartUntil + jitter)
            state.withLock { state in
                if state.pendingAcquires[room] == nil { state.pendingAcquires[room] = due }
            }
        }
    }

    /// Takes a room this node owned back after Redis lost its data; when another node was quicker, says that
    /// the old lease is gone (`lostOwnership`), so the runtime stops acting as the room's owner.
    private func reacquireAfterDataLoss(_ room: String, lost: LeaseToken, store: ClusterRedis) {
        let floor = state.withLock { $0.highestEpoch[room] ?? 0 }
        let sent = Self.now()
        guard
            case .acquired(let token) = try? store.acquire(
                room, node: configuration.node, incarnation: configuration.incarnation,
                leaseMilliseconds: configuration.timing.leaseMilliseconds, epochFloor: floor)
        else {
            post(.lostOwnership(room: room, token: lost, fenced: true))
            return
        }
        state.withLock { state in
            state.leases[room] = HeldLease(token: token, confirmedAt: sent)
            state.highestEpoch[room] = token.epoch
        }
        post(.becameOwner(room: room, token: token, reseed: true))
    }

    private func dropLease(_ room: String, token: LeaseToken, fenced: Bool) {
        let dropped = state.withLock { state -> Bool in
            guard state.leases[room]?.token == token else { return false }
            state.leases[room] = nil
            return true
        }
        if dropped { post(.lostOwnership(room: room, token: token, fenced: fenced)) }
    }

    private func markAvailable(_ available: Bool, reason: String) {
        let changed = state.withLock { state -> Bool in
            guard state.available != available else { return false }
            state.available = available
            if available { state.availableAgainAt = Self.now() } else { state.unavailableSince = Self.now() }
            return true
        }
        if changed { post(available ? .redisAvailable : .redisUnavailable(reason)) }
    }

    // MARK: Helpers

    private func post(_ notice: ClusterNotice) {
        let notify = self.notify
        deliver { notify(notice) }
    }

    private func run<Value: Sendable>(
        on worker: RedisWorker, _ body: @escaping @Sendable (ClusterRedis) throws(ClusterError) -> Value,
        completion: @escaping @Sendable (Result<Value, ClusterError>) -> Void
    ) {
        let retention = configuration.retention
        worker.perform(
            deadlineMilliseconds: configuration.timing.requestDeadlineMilliseconds,
            {
                connection throws(RedisError) -> Result<Value, ClusterError> in
                do throws(ClusterError) {
                    return .success(try body(ClusterRedis(connection: connection, retention: retention)))
                } catch {
                    return .failure(error)
                }
            },
            completion: { result in
                switch result {
                case .success(let inner): completion(inner)
                case .failure(let error): completion(.failure(ClusterError(error)))
                }
            })
    }

    static func newGeneration() -> String { String(UInt64.random(in: 1...UInt64.max), radix: 16) }

    /// CLOCK_BOOTTIME in milliseconds: monotonic, and counting through a frozen process or a suspended machine.
    static func now() -> Int64 {
        MonotonicClock.bootMilliseconds()
    }

    static func wallClockMilliseconds() -> Int64 {
        WallClock.milliseconds()
    }
}
