import Foundation
import Glibc
import Platform
import RedisClient
import Synchronization

/// The node's timer: every tick renews its registration and leases, reads the other nodes and their lobby
/// records, and tells the runtime what changed; and this node's own lobby records.
extension ClusterNode {
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
    func readLobbies(_ store: ClusterRedis, live: [NodeRecord]) throws(ClusterError) {
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

    func timerLoop() {
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
    func tick() {
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

    func tickBody(_ store: ClusterRedis) throws(ClusterError) {
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
            forgetBansVersion()
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
        try readBans(store)
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
    func reacquireAfterDataLoss(_ room: String, lost: LeaseToken, store: ClusterRedis) {
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

    func dropLease(_ room: String, token: LeaseToken, fenced: Bool) {
        let dropped = state.withLock { state -> Bool in
            guard state.leases[room]?.token == token else { return false }
            state.leases[room] = nil
            return true
        }
        if dropped { post(.lostOwnership(room: room, token: token, fenced: fenced)) }
    }

    func markAvailable(_ available: Bool, reason: String) {
        let changed = state.withLock { state -> Bool in
            guard state.available != available else { return false }
            state.available = available
            if available { state.availableAgainAt = Self.now() } else { state.unavailableSince = Self.now() }
            return true
        }
        if changed { post(available ? .redisAvailable : .redisUnavailable(reason)) }
    }
}
