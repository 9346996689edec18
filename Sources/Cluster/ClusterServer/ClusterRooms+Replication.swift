import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: Following

/// A copy of a room kept in step with its owner: read from the checkpoint and the entries after it, then each
/// entry applied as it comes.
extension ClusterRooms {
    /// Follows the room: a copy from Redis's checkpoint and the entries after it, then every new entry.
    func becomeReplica(_ roomName: String) {
        guard let room = rooms[roomName] else { return }
        room.phase = .replica
        room.ready = false
        room.generation += 1
        let generation = room.generation
        cluster.unfollow(roomName)
        cluster.snapshot(roomName) { [self] result in
            guard let room = rooms[roomName], room.generation == generation else { return }
            switch result {
            case .failure(let error):
                log.warning("room \(roomName): cannot read it from the cluster: \(error); trying again")
                retry(roomName, generation: generation) { [self] in becomeReplica(roomName) }
            case .success(let snapshot) where snapshot.meta["checkpoint"] == nil:
                // Its owner has not written it yet.
                retry(roomName, generation: generation) { [self] in becomeReplica(roomName) }
            case .success(let snapshot):
                catchUp(roomName, snapshot: snapshot, generation: generation) { [self] in
                    guard let room = rooms[roomName], room.generation == generation else { return }
                    room.ready = true
                    cluster.follow(roomName, after: room.position)
                    flushWaiting(roomName)
                }
            }
        }
    }

    /// Brings the copy up to the stream's end: the entries after the copy's position when the stream still
    /// continues from it, else the checkpoint and the entries after that.
    func catchUp(
        _ roomName: String, snapshot: ClusterState.RoomSnapshot, generation: Int, then: @escaping @Sendable () -> Void
    ) {
        guard let room = rooms[roomName] else { return }
        guard room.copy != nil else {
            restore(roomName, snapshot: snapshot, generation: generation, then: then)
            return
        }
        guard room.position <= snapshot.lastID else {
            // Redis lost entries this copy has (it restarted from an append-only file a second old, or empty):
            // the copy stays, and the room's owner writes the room again as a reset entry numbered above every
            // copy's position.
            then()
            return
        }
        let position = room.position
        readEntries(
            roomName, after: position, generation: generation,
            again: { [self] in catchUp(roomName, snapshot: snapshot, generation: generation, then: then) }
        ) { [self] entries in
            let continues =
                entries.first.map { $0.prev == position || $0.kind == .reset } ?? (position == snapshot.lastID)
            guard continues else {
                restore(roomName, snapshot: snapshot, generation: generation, then: then)
                return
            }
            if apply(entries, in: roomName, generation: generation) { then() }
        }
    }

    /// Starts the copy again from the room's checkpoint in Redis, then applies the entries after it.
    func restore(
        _ roomName: String, snapshot: ClusterState.RoomSnapshot, generation: Int, then: @escaping @Sendable () -> Void
    ) {
        guard let room = rooms[roomName] else { return }
        let checkpointAt = snapshot.meta["checkpointAt"].flatMap { EntryID(String(decoding: $0, as: UTF8.self)) }
        guard let sealed = snapshot.meta["checkpoint"], let checkpointAt,
            let bytes = seal.openCheckpoint(sealed, room: roomName, at: checkpointAt)
        else {
            log.error(
                "room \(roomName): its checkpoint in the cluster cannot be read (or is not sealed under this node's "
                    + "cluster secret: do all nodes have the same --cluster-secret-file?)")
            retry(roomName, generation: generation) { [self] in becomeReplica(roomName) }
            return
        }
        let copy: ReplicatedRoom
        do throws(ClusterFormatError) {
            copy = try replica(of: roomName, decoding: bytes)
        } catch {
            log.error("room \(roomName): its checkpoint in the cluster cannot be read: \(error)")
            retry(roomName, generation: generation) { [self] in becomeReplica(roomName) }
            return
        }
        replaceCopy(of: room, with: copy, in: roomName)
        room.position = checkpointAt
        readEntries(
            roomName, after: checkpointAt, generation: generation,
            again: { [self] in restore(roomName, snapshot: snapshot, generation: generation, then: then) }
        ) { [self] entries in
            if apply(entries, in: roomName, generation: generation) {
                // What this node missed may have taken its people out of the room.
                handBack(roomName)
                syncRemoteSpeakers(roomName)
                then()
            }
        }
    }

    /// Reads the room's entries after `position` and gives them to `read` on the loop, unless the room started
    /// loading again meanwhile; a read that fails is logged and `again` runs a little later.
    func readEntries(
        _ roomName: String, after position: EntryID, generation: Int, again: @escaping @Sendable () -> Void,
        then read: @escaping @Sendable ([RoomEntry]) -> Void
    ) {
        cluster.entries(roomName, after: position) { [self] result in
            guard rooms[roomName]?.generation == generation else { return }
            switch result {
            case .failure(let error):
                log.warning("room \(roomName): cannot read its entries: \(error); trying again")
                retry(roomName, generation: generation, again)
            case .success(let entries):
                read(entries)
            }
        }
    }

    /// Puts a whole new copy of the room in place (a checkpoint, a reset entry), and tells this node's lobbies
    /// what changed in the room's listing since they last heard of it, through the old copy.
    func replaceCopy(of room: Room, with new: ReplicatedRoom, in roomName: String) {
        var copy = new
        let reported = room.copy?.authority.reportedListing
        let change = copy.authority.announceListing(after: reported)
        directory.follow(roomName, reported: reported)
        room.copy = copy
        if let change {
            var outcome = Outcome()
            outcome.listing = change
            publish(outcome, in: roomName)
        }
    }

    /// A copy of `roomName` read from a checkpoint (the room's in Redis, or a reset entry's body), under this
    /// node's role table, size limit and stream destinations.
    func replica(of roomName: String, decoding bytes: [UInt8]) throws(ClusterFormatError) -> ReplicatedRoom {
        try ReplicatedRoom(
            name: roomName, roles: roles, maxPeers: maxPeers, streamDestinations: streamDestinations, decoding: bytes)
    }

    /// Applies entries in order; false (and a new start) when the chain is broken.
    @discardableResult
    func apply(_ entries: [RoomEntry], in roomName: String, generation: Int) -> Bool {
        guard let room = rooms[roomName] else { return false }
        for entry in entries where entry.id > room.position {
            // Redis stores and orders the entries; only the owner, under the cluster's secret, writes them.
            guard let body = seal.openEntry(entry, room: roomName) else {
                log.warning(
                    "room \(roomName): refused entry \(entry.id): it is not sealed under this cluster's secret "
                        + "(written to Redis by someone else, or by a node with another secret)")
                continue
            }
            if entry.kind == .reset {
                let copy: ReplicatedRoom
                do throws(ClusterFormatError) {
                    copy = try replica(of: roomName, decoding: body)
                } catch {
                    unreadable(entry, in: roomName, because: error)
                    return false
                }
                replaceCopy(of: room, with: copy, in: roomName)
                room.position = entry.id
                continue
            }
            guard entry.prev == room.position, var copy = room.copy else {
                log.warning("room \(roomName): its stream does not continue from \(room.position); reading it again")
                if case .replica = room.phase { becomeReplica(roomName) }
                return false
            }
            let input: ClusterInput
            do throws(ClusterFormatError) {
                input = try ClusterInput(decoding: body)
            } catch {
                unreadable(entry, in: roomName, because: error)
                return false
            }
            let applied = copy.apply(input)
            room.copy = copy
            room.position = entry.id
            carryOut(input, applied, in: roomName)
            guard room.generation == generation else { return false }
        }
        return true
    }

    /// An entry sealed by the room's owner that this node cannot read (written by a node of another version, say):
    /// never skipped, since every later entry builds on it. The log says so, and a copy that follows the room
    /// is read again from the room's checkpoint (docs/cluster.md, "What crosses Redis").
    func unreadable(_ entry: RoomEntry, in roomName: String, because error: ClusterFormatError) {
        log.error(
            "room \(roomName): entry \(entry.id) cannot be read (\(error)); reading the room again from its checkpoint")
        if let room = rooms[roomName], case .replica = room.phase { becomeReplica(roomName) }
    }

    /// The inputs this node held while the room was loading, to the owner now.
    func flushWaiting(_ roomName: String) {
        guard let room = rooms[roomName] else { return }
        let waiting = room.waiting
        room.waiting = []
        for input in waiting { send(input, in: roomName) }
        drain(roomName)
    }
}
