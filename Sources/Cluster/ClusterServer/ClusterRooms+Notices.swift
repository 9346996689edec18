import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: What the cluster says

/// The cluster's notices (ownership won and lost, entries, requests, nodes, Redis) and what this node does of
/// them.
extension ClusterRooms {
    /// What the cluster tells this node.
    func notice(_ notice: ClusterNotice) {
        switch notice {
        case .becameOwner(let roomName, let token, let reseed):
            guard rooms[roomName] != nil else { return }
            log.info("room \(roomName): this node owns it now (epoch \(token.epoch))")
            becomeOwner(roomName, token: token, reseed: reseed)
        case .lostOwnership(let roomName, let token, let fenced):
            guard let room = rooms[roomName], case .owner(let held) = room.phase, held == token else { return }
            log.warning(
                "room \(roomName): this node no longer owns it (\(fenced ? "another node took it" : "no renewal in time"))"
            )
            lostOwnership(roomName)
        case .entries(let roomName, let entries):
            guard let room = rooms[roomName], case .replica = room.phase, room.ready else { return }
            apply(entries, in: roomName, generation: room.generation)
        case .resync(let roomName):
            guard let room = rooms[roomName], case .replica = room.phase else { return }
            becomeReplica(roomName)
        case .requests(let roomName, let requests):
            guard let room = rooms[roomName], case .owner = room.phase else { return }
            for request in requests {
                guard let (plain, sequence) = seal.openRequest(request.body, room: roomName, node: request.node) else {
                    log.warning(
                        "room \(roomName): refused request \(request.id) said to be from node \(request.node): it is not "
                            + "sealed under this cluster's secret (written to Redis by someone else, or by a node with "
                            + "another secret)")
                    continue
                }
                let input: ClusterInput
                do throws(ClusterFormatError) {
                    input = try ClusterInput(decoding: plain)
                } catch {
                    log.warning(
                        "room \(roomName): queued request \(request.id) from \(request.node) cannot be read (\(error)); "
                            + "skipped")
                    continue
                }
                guard input.node.hasPrefix(request.node + "/") else {
                    log.warning(
                        "room \(roomName): refused request \(request.id) said to be from node \(request.node): it names "
                            + "node \(input.node); skipped")
                    continue
                }
                guard sequence > room.requestSequences[input.node, default: 0] else {
                    log.warning(
                        "room \(roomName): refused request \(request.id) from node \(input.node): its number \(sequence) "
                            + "was seen before (a copy of an earlier request)")
                    continue
                }
                room.requestSequences[input.node] = sequence
                room.queue.append(Pending(input: input, cursor: request.id))
            }
            drain(roomName)
        case .nodeJoined(let record):
            log.info("node \(record.name) joined the cluster (slot \(record.slot))")
            for roomName in rooms.keys.sorted() { updateRemoteNodes(roomName) }
        case .nodeLeft(let record):
            let identity = Self.identity(name: record.name, incarnation: record.incarnation)
            whenSurelyGone(identity) { [self] in nodeGone(identity, name: record.name) }
        case .redisUnavailable(let reason):
            log.warning(
                "the cluster's Redis is unavailable: \(reason); audio goes on, requests are answered 'unavailable, try again'"
            )
            redisDown = true
            for roomName in rooms.keys.sorted() { refuseWaiting(roomName) }
        case .redisAvailable:
            log.info("the cluster's Redis is available again")
            redisDown = false
            redisBackAt = currentTimestamp()
            lobbyWritten = false
            // Silence counts only while Redis answers: the other nodes may have taken this node for gone, and
            // start sending to it again only once it is back.
            relay?.restartSilence()
        case .redisLostData:
            log.warning("the cluster's Redis lost its data: the rooms this node owns are written again")
            lobbyWritten = false
            // The bans went with the data: the nodes bring theirs back.
            bansCarried = false
        case .lobby(let records):
            directory.replaceRemote(Self.lobbyEntries(records, log: log))
        case .bans(let bans):
            received(bans)
        }
    }

    /// While Redis does not answer: the inputs waiting for the room's owner are answered "unavailable, try
    /// again" (departures wait on, to be sent when it is back).
    func refuseWaiting(_ roomName: String) {
        guard let room = rooms[roomName] else { return }
        let waiting = room.waiting
        room.waiting = waiting.filter { $0.kind == .leave }
        for input in waiting where input.kind != .leave {
            refuse(input, in: roomName, because: redisAway)
        }
    }

    /// Why a request is refused while Redis does not answer.
    var redisAway: ClusterError {
        .unavailable(
            .timedOut(
                endpoint: "\(cluster.configuration.redis)",
                milliseconds: cluster.configuration.timing.commandTimeoutMilliseconds))
    }

    /// Runs `then` once the node `identity` is surely gone: at once, except just after Redis came back, when
    /// every registration had lapsed and a node missing from the list may only be late to register again; then
    /// after two more ticks, if it is still missing.
    func whenSurelyGone(_ identity: String, then: @escaping @Sendable () -> Void) {
        let timing = cluster.configuration.timing
        let settle = Timestamp(timing.nodeTTLMilliseconds + 2 * timing.tickMilliseconds)
        guard redisDown || currentTimestamp() - redisBackAt < settle, let loop else {
            then()
            return
        }
        loop.schedule(after: .milliseconds(Int(2 * timing.tickMilliseconds + 500))) { [self] in
            let live = cluster.nodes.contains { Self.identity(name: $0.name, incarnation: $0.incarnation) == identity }
            if !live { then() }
        }
    }

    /// A node is gone: the rooms this node owns take its people out.
    func nodeGone(_ gone: String, name: String) {
        log.info("node \(name) left the cluster: its people leave its rooms")
        for (roomName, room) in rooms {
            guard case .owner = room.phase else { continue }
            room.queue.append(Pending(input: .nodeGone(gone, now: currentTimestamp()), cursor: nil))
            drain(roomName)
        }
    }

    /// After taking a room over: the people of nodes that are gone leave it.
    func leaveGoneNodes(_ roomName: String) {
        guard let room = rooms[roomName], let copy = room.copy else { return }
        let live = Set(cluster.nodes.map { Self.identity(name: $0.name, incarnation: $0.incarnation) })
        let gone = Set(copy.homes.values.map(\.node)).subtracting(live).subtracting([nodeName])
        for node in gone.sorted() {
            whenSurelyGone(node) { [self] in
                guard let room = rooms[roomName], case .owner = room.phase else { return }
                room.queue.append(Pending(input: .nodeGone(node, now: currentTimestamp()), cursor: nil))
                drain(roomName)
            }
        }
    }
}
