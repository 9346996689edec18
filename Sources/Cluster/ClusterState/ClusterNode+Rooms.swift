import Foundation
import Glibc
import Platform
import RedisClient
import Synchronization

/// A room's ownership, its event stream and its request stream, as the node's runtime uses them.
extension ClusterNode {
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

    func acquire(
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
        if startsLoop(\.followLoopRunning, { $0.following[room] = after }) { followLoop() }
    }

    public func unfollow(_ room: String) {
        state.withLock { _ = $0.following.removeValue(forKey: room) }
    }

    func followLoop() {
        let block = configuration.timing.readBlockMilliseconds
        loop(
            on: eventWorker, mark: \.followLoopRunning,
            { state in state.following.map { (room: $0.key, after: $0.value) } }
        ) { [self] store, positions in
            do throws(ClusterError) {
                let found = try store.waitForEntries(positions, blockMilliseconds: block)
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
        }
    }

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
        if startsLoop(\.serveLoopRunning, { $0.serving[room] = cursor }) { serveLoop() }
    }

    public func stopServingRequests(_ room: String) {
        state.withLock { _ = $0.serving.removeValue(forKey: room) }
    }

    func serveLoop() {
        let readBlock = configuration.timing.readBlockMilliseconds
        loop(on: requestWorker, mark: \.serveLoopRunning, { $0.serving }) { [self] store, rooms in
            let block = max(10, readBlock / max(1, rooms.count))
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
        }
    }

    /// Notes what a long-poll loop is to poll (`update`) and marks the loop running; true when it was not, and
    /// the caller must start it.
    private func startsLoop(
        _ mark: WritableKeyPath<NodeState, Bool>, _ update: (inout NodeState) -> Void
    ) -> Bool {
        state.withLock { state in
            update(&state)
            defer { state[keyPath: mark] = true }
            return !state[keyPath: mark]
        }
    }

    /// A long-poll loop on `worker`: each turn reads what to poll from the state (`polled`) and runs `turn` on it,
    /// then the next turn is queued; when there is nothing to poll, the node stopped or a turn's job failed, the
    /// loop ends and clears its `mark`, so that the next start begins it again.
    private func loop<Polled: Collection & Sendable>(
        on worker: RedisWorker, mark: WritableKeyPath<NodeState, Bool> & Sendable,
        _ polled: @escaping @Sendable (inout NodeState) -> Polled,
        turn: @escaping @Sendable (ClusterRedis, Polled) -> Void
    ) {
        let retention = configuration.retention
        worker.perform(
            deadlineMilliseconds: Int.max / 4,
            { [self] connection throws(RedisError) in
                let polling = state.withLock { polled(&$0) }
                guard running.load(ordering: .acquiring), !polling.isEmpty else {
                    state.withLock { $0[keyPath: mark] = false }
                    return false
                }
                turn(ClusterRedis(connection: connection, retention: retention), polling)
                return true
            },
            completion: { [self] result in
                if case .success(true) = result { loop(on: worker, mark: mark, polled, turn: turn) }
                if case .failure = result { state.withLock { $0[keyPath: mark] = false } }
            })
    }
}
