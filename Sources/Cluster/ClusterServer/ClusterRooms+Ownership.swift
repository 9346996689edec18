import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: Loading and owning

/// A room claimed, owned (from the stream, or new from this node's database), written again after Redis lost it,
/// and given up.
extension ClusterRooms {
    /// The room, known from now on: it is claimed (owned if nobody owns it, else followed).
    func want(_ roomName: String) -> Room {
        if let room = rooms[roomName] { return room }
        let room = Room()
        rooms[roomName] = room
        cluster.claim(roomName) { [self] result in
            guard let room = rooms[roomName], case .loading = room.phase else { return }
            switch result {
            case .success(.acquired(let token)):
                // Usually the `becameOwner` notice, which comes first, has taken it over already.
                becomeOwner(roomName, token: token, reseed: false)
            case .success(.held):
                becomeReplica(roomName)
            case .failure(let error):
                log.error("room \(roomName): the cluster cannot serve it now: \(error)")
                for ticket in room.joins.values { ticket.answer(.unavailable) }
                rooms[roomName] = nil
            }
        }
        return room
    }

    /// Takes the room over: reads it from Redis, applies every entry this node has not seen, then decides.
    func becomeOwner(_ roomName: String, token: LeaseToken, reseed: Bool) {
        guard let room = rooms[roomName] else { return }
        cluster.unfollow(roomName)
        room.phase = .owner(token)
        room.ready = false
        room.generation += 1
        let generation = room.generation
        if reseed, let copy = room.copy {
            // Redis restarted empty: the room is written again from this node's copy, as one reset entry.
            let (renumbered, id) = Self.renumbered(copy, after: room.position)
            rewrite(roomName, copy: renumbered, id: id, cursor: "0-0", generation: generation)
            return
        }
        cluster.snapshot(roomName) { [self] result in
            guard let room = rooms[roomName], room.generation == generation else { return }
            switch result {
            case .failure(let error):
                log.warning("room \(roomName): cannot read it from the cluster: \(error); trying again")
                retry(roomName, generation: generation) { [self] in becomeOwner(roomName, token: token, reseed: false) }
            case .success(let snapshot):
                if let copy = room.copy, snapshot.lastID == .zero || room.position > snapshot.lastID {
                    // Redis lost the room, or its last entries (a restart from an append-only file a second
                    // old): this node's copy, which its clients have seen, is written again.
                    let (renumbered, id) = Self.renumbered(copy, after: room.position)
                    rewrite(
                        roomName, copy: renumbered, id: id, cursor: snapshot.requestCursor, generation: generation)
                } else if snapshot.lastID == .zero {
                    // A room new to the cluster: its saved state comes from this node's database.
                    startNew(roomName, generation: generation)
                } else {
                    catchUp(roomName, snapshot: snapshot, generation: generation) { [self] in
                        guard let room = rooms[roomName], room.generation == generation else { return }
                        room.ready = true
                        // From the committed cursor, requests seen in an earlier stint come again, rightly.
                        room.requestSequences = [:]
                        cluster.serveRequests(roomName, after: snapshot.requestCursor)
                        leaveGoneNodes(roomName)
                        flushWaiting(roomName)
                    }
                }
            }
        }
    }

    /// The copy, to be written again after Redis lost the room: its numbers continue from the clock (ms × 1000),
    /// above anything any node's clients have seen, and so does the reset entry's ID, above every copy's position.
    static func renumbered(_ copy: ReplicatedRoom, after position: EntryID) -> (ReplicatedRoom, EntryID) {
        var copy = copy
        copy.authority.seq = max(copy.authority.seq, currentTimestamp() * 1000)
        return (copy, EntryID(seq: max(position.seq + 1, UInt64(max(0, copy.authority.seq)))))
    }

    /// A new room: loaded from this node's database, then written to Redis as the stream's first entry.
    func startNew(_ roomName: String, generation: Int) {
        let now = currentTimestamp()
        persistence.load(roomName, now: now, create: true) { [self] result in
            guard let room = rooms[roomName], room.generation == generation else { return }
            let saved: SavedRoom
            switch result {
            case .success(let loaded): saved = loaded
            case .failure(let error):
                log.error("room \(roomName): could not load it from the database: \(error.problem)")
                saved = SavedRoom()
            }
            var authority = RoomAuthority(
                name: roomName, roles: roles, topic: saved.topic, ended: saved.ended, seq: now * 1000,
                chat: saved.chat, departed: saved.departed, demotions: saved.demotions, maxPeers: maxPeers,
                listed: saved.listed)
            authority.handsAllowed = saved.handsAllowed
            if let deadline = saved.deadline { authority.restore(deadline, now: now) }
            authority.streamDestinations = streamDestinations
            rewrite(
                roomName, copy: ReplicatedRoom(authority: authority), id: EntryID(seq: UInt64(now * 1000)),
                cursor: "0-0", generation: generation)
        }
    }

    /// Writes the room from `copy` as one reset entry (a new room, or Redis lost it), then decides.
    func rewrite(_ roomName: String, copy: ReplicatedRoom, id: EntryID, cursor: String, generation: Int) {
        let plain = copy.encoded()
        let body: [UInt8]
        let checkpoint: [UInt8]
        do {
            body = try seal.sealEntry(
                plain, room: roomName, entry: RoomEntry(id: id, prev: .zero, kind: .reset, body: []))
            checkpoint = try seal.sealCheckpoint(plain, room: roomName, at: id)
        } catch {
            log.error("room \(roomName): it cannot be sealed for the cluster: \(error); trying again")
            retry(roomName, generation: generation) { [self] in
                rewrite(roomName, copy: copy, id: id, cursor: cursor, generation: generation)
            }
            return
        }
        let snapshot = ClusterState.RoomSnapshot(
            meta: ["checkpoint": checkpoint, "checkpointAt": Array(id.description.utf8)], requestCursor: cursor)
        cluster.reseed(roomName, snapshot: snapshot, id: id, body: body) { [self] result in
            guard let room = rooms[roomName], room.generation == generation else { return }
            switch result {
            case .success(.appended), .success(.duplicate):
                directory.follow(roomName, reported: copy.authority.reportedListing)
                room.copy = copy
                room.position = id
                room.sinceCheckpoint = 0
                room.ready = true
                room.requestSequences = [:]
                cluster.serveRequests(roomName, after: cursor)
                flushWaiting(roomName)
            case .success(.gap), .success(.fenced), .failure(.notOwner):
                // Someone wrote the room first: follow it.
                lostOwnership(roomName)
            case .failure(let error):
                log.warning("room \(roomName): cannot write it to the cluster: \(error); trying again")
                retry(roomName, generation: generation) { [self] in
                    rewrite(roomName, copy: copy, id: id, cursor: cursor, generation: generation)
                }
            }
        }
    }

    /// This node stops deciding for the room and follows whoever owns it now; its own undecided inputs go to
    /// that owner.
    func lostOwnership(_ roomName: String) {
        guard let room = rooms[roomName] else { return }
        cluster.stopServingRequests(roomName)
        var mine: [ClusterInput] = []
        while !room.queue.isEmpty {
            let pending = room.queue.removeFirst()
            // Letting invitations lapse is the owner's to decide, from its own clock.
            if pending.cursor == nil, pending.input.kind != .expireInvitations { mine.append(pending.input) }
        }
        room.expiryQueued = false
        room.waiting = mine + room.waiting
        // Cut off from Redis (self-fenced): what this node's people asked meanwhile cannot reach a new owner.
        if redisDown { refuseWaiting(roomName) }
        becomeReplica(roomName)
    }
}
