import Foundation
import Glibc
import Platform
import RedisClient
import Synchronization

/// One node's view of the cluster and the calls its runtime makes: the API a server's cluster rooms drive
/// (`ClusterServer`).
///
/// Threads: four Redis connections, each on a worker thread of its own (lease and membership, writes, the
/// event follower, the request reader), and a timer thread. Nothing here blocks the caller: every call
/// answers through `deliver`. Lease bookkeeping runs on the lease worker, so a busy runtime cannot delay
/// renewals; `owns(_:)` may be called from any thread.
public final class ClusterNode: Sendable {
    public let configuration: ClusterConfiguration
    let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void
    let notify: @Sendable (ClusterNotice) -> Void
    let leaseWorker: RedisWorker
    let writeWorker: RedisWorker
    let eventWorker: RedisWorker
    let requestWorker: RedisWorker
    let state = Mutex(NodeState())
    let running = Atomic<Bool>(false)
    let timerStopped = DispatchSemaphore(value: 0)

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
        /// The version of the cluster's bans as last read (its inner nil: none ever made); nil before the first
        /// read, so the first tick reads them.
        var bansVersion: String?? = nil
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

    func register() throws(ClusterError) {
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

    /// How long a node's lobby records outlive its last renewal: past its registration's lifetime, so they are
    /// never read without a live node behind them (readers keep only live nodes' records anyway).
    var lobbyTTLMilliseconds: Int { 2 * configuration.timing.nodeTTLMilliseconds }

    func post(_ notice: ClusterNotice) {
        let notify = self.notify
        deliver { notify(notice) }
    }

    func run<Value: Sendable>(
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
