import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: Inputs to the owner

/// This node's inputs on their way to the room's owner, and the owner deciding its queue one input at a time:
/// decided on a copy, appended to the room's event stream, only then carried out.
extension ClusterRooms {
    /// Hands one of this node's inputs to the room's owner: decided here when this node owns the room, else
    /// queued in the room's request stream.
    func send(_ input: ClusterInput, in roomName: String) {
        if redisDown, input.kind != .leave {
            refuse(input, in: roomName, because: redisAway)
            return
        }
        let room = want(roomName)
        switch room.phase {
        case .loading:
            room.waiting.append(input)
        case .owner:
            room.queue.append(Pending(input: input, cursor: nil))
            drain(roomName)
        case .replica:
            if room.ready {
                submit(input, in: roomName)
            } else {
                room.waiting.append(input)
            }
        }
    }

    /// Why an input is refused when it could not be sealed (random bytes failed).
    static let unsealable = ClusterError.redis(.server("the input could not be sealed for the cluster"))

    func submit(_ input: ClusterInput, in roomName: String) {
        requestSequence += 1
        let body: [UInt8]
        do {
            body = try seal.sealRequest(
                input.encoded(), room: roomName, node: cluster.configuration.node, sequence: requestSequence)
        } catch {
            log.error("room \(roomName): a request cannot be sealed for the cluster: \(error)")
            refuse(input, in: roomName, because: Self.unsealable)
            return
        }
        markSent(input, in: roomName)
        cluster.submit(roomName, body: body) { [self] result in
            if case .failure(let error) = result { refuse(input, in: roomName, because: error) }
        }
    }

    /// How long this node waits for the owner's decision on one of its requests once it may have reached Redis,
    /// before it answers `unconfirmed`: twice the request deadline (10 s), time for a new owner to take the room
    /// over and decide what the old one left.
    var awaitMilliseconds: Int { 2 * cluster.configuration.timing.requestDeadlineMilliseconds }

    /// A request of this node's may reach Redis from now on: its requester will hear the owner's decision, or
    /// `unconfirmed` after `awaitMilliseconds`.
    func markSent(_ input: ClusterInput, in roomName: String) {
        guard input.kind == .request, input.node == nodeName, let room = rooms[roomName],
            let index = room.awaited.firstIndex(where: { $0.matches(input) }), !room.awaited[index].sent
        else { return }
        room.awaited[index].sent = true
        let serial = room.awaited[index].serial
        loop?.schedule(after: .milliseconds(awaitMilliseconds)) { [self] in unconfirmed(serial, in: roomName) }
    }

    /// Sends one of this node's requests that may have reached Redis again in a moment, while its requester
    /// still waits: the owner applies its id once, so a copy that did arrive is answered `already_applied`.
    func resendLater(_ input: ClusterInput, in roomName: String) {
        guard let serial = rooms[roomName]?.awaited.first(where: { $0.matches(input) })?.serial else { return }
        loop?.schedule(after: .milliseconds(500)) { [self] in
            guard rooms[roomName]?.awaited.contains(where: { $0.serial == serial }) == true else { return }
            send(input, in: roomName)
        }
    }

    /// The owner's decision on one of this node's requests arrived (in the stream): nothing more to wait for.
    func decided(_ input: ClusterInput, in roomName: String) {
        guard input.kind == .request, input.node == nodeName, let room = rooms[roomName],
            let index = room.awaited.firstIndex(where: { $0.matches(input) })
        else { return }
        room.awaited.remove(at: index)
    }

    /// No decision on a request that may have reached Redis: its requester hears that it may or may not have
    /// taken effect, and that sending it again under the same id is safe.
    func unconfirmed(_ serial: UInt64, in roomName: String) {
        guard let room = rooms[roomName], let index = room.awaited.firstIndex(where: { $0.serial == serial }) else {
            return
        }
        let input = room.awaited.remove(at: index).input
        guard let peer = input.peer else { return }
        // Decided where this node did not see the entry (its copy started again from a checkpoint after it): the
        // copy knows the decision. One that took effect, the client saw in the room; a refusal it is told now.
        if let id = input.requestID, let decided = room.copy?.authority.applied.decision(id, from: peer) {
            if let refusal = decided.refusal {
                var answer = Outcome()
                answer.deliveries = [Delivery(to: .peer(peer), refusal)]
                publish(answer, in: roomName)
            }
            return
        }
        log.warning(
            "room \(roomName): no decision on a request of \(peer) within \(awaitMilliseconds / 1000) s; "
                + "its client is told it is unconfirmed")
        tell(
            peer, .unconfirmed,
            "the cluster could not confirm this request: it may still take effect"
                + (input.requestID == nil ? "" : "; sending it again with the same id is safe"),
            id: input.requestID, in: roomName)
    }

    /// Answers `peer` alone (unnumbered): an error for its request `id`.
    func tell(_ peer: PeerID, _ code: ErrorCode, _ message: String, id: RequestID?, in roomName: String) {
        var notice = Outcome()
        notice.deliveries = [
            Delivery(to: .peer(peer), ServerMessage(.error(code: code, message: message, id: id), seq: nil))
        ]
        publish(notice, in: roomName)
    }

    /// An input that could not reach the owner: the requester is told to try again (when it surely changed
    /// nothing; else the node waits on for the owner's decision, see `Awaited`); a join is closed for the
    /// client to reconnect; a departure is sent again later, so nobody stays in the room for good.
    func refuse(_ input: ClusterInput, in roomName: String, because error: ClusterError) {
        guard let room = rooms[roomName] else { return }
        switch input.kind {
        case .join:
            if let peer = input.peer { media?.release(peer, room: roomName) }
            room.joins.removeValue(forKey: input.connection)?.answer(.unavailable)
        case .request:
            // Answered `unconfirmed` already: its requester knows it may take effect.
            guard let peer = input.peer, let index = room.awaited.firstIndex(where: { $0.matches(input) }) else {
                return
            }
            if room.awaited[index].sent {
                if !room.awaited[index].toldUnknown {
                    room.awaited[index].toldUnknown = true
                    log.warning(
                        "room \(roomName): a request of \(peer) may or may not have reached the owner (\(error)); "
                            + "waiting for the owner's decision"
                            + (input.requestID == nil ? "" : ", sending it again meanwhile"))
                }
                // Without an id the room cannot tell a second copy from a new request: it is not sent again.
                if input.requestID != nil { resendLater(input, in: roomName) }
                return
            }
            room.awaited.remove(at: index)
            let banRefusal = Self.banRefusal(input, error)
            if let banRefusal { log.warning("room \(roomName): \(peer) was told \(banRefusal)") }
            tell(
                peer, .internal,
                banRefusal ?? (error.isUnavailable ? "\(error)" : "unavailable, try again: \(error)"),
                id: input.requestID, in: roomName)
        case .leave, .streamGaveUp:
            // A stream given up must not stay live in the room either.
            loop?.schedule(after: .milliseconds(500)) { [self] in send(input, in: roomName) }
        case .levels, .nodeGone, .expireInvitations, .recorderProblem, .networkQuality:
            break
        }
    }

    /// The owner decides its queued inputs one at a time: on a copy of the room, committed by the append.
    func drain(_ roomName: String) {
        guard let room = rooms[roomName], case .owner = room.phase, room.ready, !room.appending,
            var copy = room.copy, !room.queue.isEmpty
        else { return }
        var pending = room.queue.removeFirst()
        pending.input.now = max(currentTimestamp(), pending.input.now)
        let applied = copy.apply(pending.input)
        let seq = UInt64(max(0, copy.authority.seq))
        let id =
            seq > room.position.seq
            ? EntryID(seq: seq) : EntryID(seq: room.position.seq, part: room.position.part + 1)
        let weight = Self.checkpointWeight(of: pending.input.kind)
        let wroteCheckpoint = room.sinceCheckpoint + weight >= Self.checkpointInterval * Self.checkpointParts
        var entry = RoomEntry(id: id, prev: room.position, requestID: pending.cursor ?? "", body: [])
        let banOperations: [StateOperation]
        do {
            entry.body = try seal.sealEntry(pending.input.encoded(), room: roomName, entry: entry)
            banOperations = try self.banOperations(applied, now: pending.input.now)
        } catch {
            log.error("room \(roomName): an entry cannot be sealed for the cluster: \(error)")
            if pending.cursor == nil { refuse(pending.input, in: roomName, because: Self.unsealable) }
            drain(roomName)
            return
        }
        room.appending = true
        let generation = room.generation
        let decided = copy
        let input = pending
        // The checkpoint (the whole room: about 200 ms at 10,000 peers) is encoded on the cluster's write thread,
        // not here on the loop, which serves every connection meanwhile.
        let seal = seal
        let operations: @Sendable () -> [StateOperation] = {
            banOperations
                + (wroteCheckpoint ? Self.checkpointOperations(decided, at: id, room: roomName, seal: seal) : [])
        }
        if pending.cursor == nil { markSent(pending.input, in: roomName) }
        cluster.append(roomName, entry: entry, operations: operations, requestCursor: pending.cursor) {
            [self] result in
            appended(
                result, input, applied: applied, decided: decided, id: id, generation: generation,
                wroteCheckpoint: wroteCheckpoint, in: roomName)
        }
    }

    func appended(
        _ result: Result<AppendResult, ClusterError>, _ pending: Pending, applied: ReplicatedRoom.Applied,
        decided: ReplicatedRoom, id: EntryID, generation: Int, wroteCheckpoint: Bool, in roomName: String
    ) {
        guard let room = rooms[roomName] else { return }
        room.appending = false
        if pending.input.kind == .expireInvitations { room.expiryQueued = false }
        switch result {
        case .success(.appended), .success(.duplicate):
            guard room.generation == generation, case .owner = room.phase else {
                // Ownership was lost meanwhile: the entry is in the stream, and the copy gets it from there.
                return
            }
            room.copy = decided
            room.position = id
            room.sinceCheckpoint =
                wroteCheckpoint ? 0 : room.sinceCheckpoint + Self.checkpointWeight(of: pending.input.kind)
            carryOut(pending.input, applied, in: roomName)
            if case .outcome(let outcome) = applied, !outcome.changes.isEmpty {
                persistence.commit(outcome, in: roomName) { _ in }
            }
            if case .joined(.joined(_, let outcome, _)) = applied, !outcome.changes.isEmpty {
                persistence.commit(outcome, in: roomName) { _ in }
            }
            drain(roomName)
        case .success(.fenced), .success(.gap), .failure(.notOwner):
            if case .failure(.notOwner) = result, case .owner = room.phase {
                log.warning("room \(roomName): this node no longer owns it (its lease lapsed or was taken)")
            }
            // Another node owns the room, or this one's view is behind Redis: the input is not written. This
            // node's own input goes to whoever owns the room now; another node's stays in the request stream
            // for the new owner.
            if pending.cursor == nil, pending.input.kind != .expireInvitations {
                room.waiting.insert(pending.input, at: 0)
            }
            if case .success(.gap) = result, case .owner(let token) = room.phase {
                becomeOwner(roomName, token: token, reseed: false)
            } else {
                lostOwnership(roomName)
            }
        case .failure(let error):
            log.warning("room \(roomName): could not write to the cluster: \(error)")
            if pending.cursor == nil { refuse(pending.input, in: roomName, because: error) }
            drain(roomName)
        }
    }

    /// How much an entry of `kind` brings the room's next checkpoint closer, in `checkpointParts`: a whole entry
    /// for everything but network quality, which changes no state a checkpoint carries and may come from every
    /// node twice a second, and counts one part (so 256 of them alone make a checkpoint, which bounds what a copy
    /// starting late reads after it).
    static func checkpointWeight(of kind: ClusterInput.Kind) -> Int {
        kind == .networkQuality ? 1 : checkpointParts
    }

    /// The room's checkpoint at entry `id`, sealed; none when it cannot be sealed now (the next one will be).
    static func checkpointOperations(
        _ copy: ReplicatedRoom, at id: EntryID, room: String, seal: ClusterSeal
    ) -> [StateOperation] {
        guard let sealed = try? seal.sealCheckpoint(copy.encoded(), room: room, at: id) else { return [] }
        return [.setMeta("checkpoint", sealed), .setMeta("checkpointAt", Array(id.description.utf8))]
    }
}
