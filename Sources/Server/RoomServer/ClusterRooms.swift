import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomTransport

/// The paths a connection's joins, requests, departures and audio levels take into the rooms: `LocalRooms`
/// alone, `ClusterRooms` in a cluster.
protocol RoomPaths: AnyObject {
    var loop: EventLoop? { get set }
    func consumeFirst(_ consumer: OutcomeConsumer)
    func join(_ ticket: JoinTicket, room roomName: String)
    func handle(
        _ request: ClientRequest, from peer: PeerID, id: RequestID?, in roomName: String, now: Timestamp
    )
        -> ServerMessage?
    func leave(_ peer: PeerID, reason: LeaveReason, from roomName: String)
    func updateLevels(_ levels: [PeerID: Int], in roomName: String)
    /// Network quality measured by the media path for this node's peers of the room.
    func updateQuality(_ measured: [PeerQuality], in roomName: String)
    /// Lets the pending invitations whose lifetime ended by `now` lapse, in every room with one due.
    func expireInvitations(now: Timestamp)
    /// Sends the clients of rooms cut off from the other nodes' media to reconnect (every second).
    func dropSilentRooms()
    /// The role `peer` holds in this node's copy of `room`, if they are in it.
    func role(of peer: PeerID, in roomName: String) -> RoleName?
}

extension LocalRooms: RoomPaths {
    /// A server alone relays to no one: no room of it is ever silent.
    func dropSilentRooms() {}

    func role(of peer: PeerID, in roomName: String) -> RoleName? {
        rooms[roomName]?.peers[peer]?.role
    }
}

/// The rooms of a node of a cluster: each room has one owner node at a time (a fenced Redis lease), which alone
/// decides; every node serving the room keeps a copy of it and applies the owner's decisions in stream order.
///
/// - **Owner.** Its inputs (its own clients' joins, requests, departures and levels, and those the other nodes
///   queue in the room's request stream) are decided one at a time on a copy of the room; the input, with the
///   owner's time, is appended to the room's event stream (fenced by the lease's epoch, with the request
///   stream's cursor in the same atomic step); only once Redis has it does the copy become the room and the
///   outcome get published (gates, then local deliveries, then closes).
/// - **Other nodes.** Their clients' inputs go to the room's request stream. They follow the event stream and
///   apply each entry to their copy (`ReplicatedRoom.apply`), which gives the same outcome, with the same
///   numbers, that the owner published; each publishes it to its own clients.
///
/// A copy starts from the checkpoint the owner keeps in Redis (every `checkpointInterval` entries) and the
/// entries after it. A node that becomes owner (the old one died, froze, or its lease lapsed) first applies
/// every entry it has not seen, then serves the request stream from the cursor the last entry committed, so
/// every request takes effect once.
///
/// Loop thread only, like `LocalRooms`; `ClusterNode` hands everything back through the loop.
final class ClusterRooms: RoomPaths, @unchecked Sendable {
    func role(of peer: PeerID, in roomName: String) -> RoleName? {
        rooms[roomName]?.copy?.authority.peers[peer]?.role
    }

    /// How many entries the owner writes between two checkpoints of the room in Redis.
    static let checkpointInterval = 32
    /// How long departures are gathered before they go to the owner together.
    static let departureWindow: Duration = .milliseconds(50)

    let roles: RoleTable
    let maxPeers: Int
    let cluster: ClusterNode
    /// This node's name and incarnation (`name/incarnation`), as inputs and peers' homes name it: a restarted
    /// node is another node, whose connections are not the old one's.
    let nodeName: String
    /// The node's own database: new rooms are loaded from it, and owned rooms' changes are archived to it.
    let persistence: PersistenceQueue
    let connections: Connections
    let log: ServerLog
    /// Seals what this node writes to Redis and opens what it reads (see `ClusterSeal`).
    let seal: ClusterSeal
    /// The sequence number of this node's last request to any room's owner (sealed with the request).
    private var requestSequence: UInt64 = 0
    private(set) var consumers: [OutcomeConsumer]
    /// This node's lobby list: its own rooms from their outcomes, the others' from the nodes that own them.
    let directory: RoomDirectory
    var loop: EventLoop? {
        didSet { if oldValue == nil, loop != nil { scheduleLobbyPublishing() } }
    }
    /// The node's media, when it serves audio: SSRCs for joins, remote speakers and the relay's nodes.
    var media: ServerMedia?

    enum Phase {
        /// Reading the room from Redis (or deciding who owns it).
        case loading
        /// Following the owner's entries.
        case replica
        /// Owning the room under `token`.
        case owner(LeaseToken)
    }

    struct Pending {
        var input: ClusterInput
        /// The request stream ID, for inputs another node queued.
        var cursor: String?
    }

    final class Room {
        var phase = Phase.loading
        /// Whether the copy is up to date with Redis and may decide or apply (false while catching up).
        var ready = false
        var copy: ReplicatedRoom?
        var position = EntryID.zero
        /// The owner's undecided inputs, in order.
        var queue = FIFO<Pending>()
        var appending = false
        /// This node's inputs while the room is loading, in order.
        var waiting: [ClusterInput] = []
        var sinceCheckpoint = 0
        /// Bumped whenever the room starts loading again, so that answers to older reads are dropped.
        var generation = 0
        /// Joins of this node's connections waiting for the room's answer, by connection number.
        var joins: [UInt64: JoinTicket] = [:]
        /// The connection number each of this node's peers joined with.
        var local: [PeerID: UInt64] = [:]
        /// Departures gathered for the next `leave` input, each with the number of the connection that closed,
        /// taken when it closed: a newer connection of the same identity, joined meanwhile, is not its to remove.
        var departures: [(Departure, connection: UInt64)] = []
        var departureTimer = false
        /// Whether the owner has queued an `expireInvitations` input not yet written.
        var expiryQueued = false
        /// The highest request sequence number the owner took from each node (`name/incarnation`) since it began
        /// serving the room's requests (from the committed cursor): a request copied back into the stream is
        /// refused.
        var requestSequences: [String: UInt64] = [:]
        /// This node's requests not decided yet, oldest first.
        var awaited: [Awaited] = []
    }

    /// One of this node's requests on its way to the owner. Once it may have reached Redis (submitted, or
    /// appended by this node as owner), its requester is never told it changed nothing: the node waits for the
    /// owner's decision on it, and past `awaitMilliseconds` answers `unconfirmed` (a retry under the same id is
    /// safe: the room applies an identity's request id once).
    struct Awaited {
        var serial: UInt64
        var input: ClusterInput
        /// Whether it may have reached Redis.
        var sent = false
        /// Whether the log said already that its outcome is unknown (once per request, not per copy sent again).
        var toldUnknown = false

        func matches(_ other: ClusterInput) -> Bool {
            other.kind == .request && other.peer == input.peer && other.requestID == input.requestID
                && other.request == input.request
        }
    }

    private var rooms: [String: Room] = [:]
    private var nextConnection: UInt64 = 1
    private var nextAwaited: UInt64 = 1
    /// Whether Redis answers, as the cluster last said: while it does not, requests are answered "unavailable,
    /// try again" at once instead of waiting for it.
    private var redisDown = false
    /// When Redis last came back (ms, this node's clock): every registration lapsed while it was away, so for a
    /// while a node missing from the list may only be late to register again.
    private var redisBackAt: Timestamp = 0
    /// What this node last meant its lobby records to say (room to entry), and whether Redis has exactly that.
    private var lobbyRecords: [String: DirectoryCodec.ClusterEntry] = [:]
    private var lobbyWritten = false
    private var lobbyWriting = false

    init(
        roles: RoleTable, maxPeers: Int, cluster: ClusterNode, persistence: PersistenceQueue,
        connections: Connections, consumers: [OutcomeConsumer], directory: RoomDirectory, log: ServerLog,
        seal: ClusterSeal
    ) {
        self.seal = seal
        self.roles = roles
        self.maxPeers = maxPeers
        self.cluster = cluster
        nodeName = Self.identity(name: cluster.configuration.node, incarnation: cluster.configuration.incarnation)
        self.persistence = persistence
        self.connections = connections
        self.consumers = consumers
        self.directory = directory
        self.log = log
    }

    static func identity(name: String, incarnation: UInt64) -> String { "\(name)/\(incarnation)" }

    func consumeFirst(_ consumer: OutcomeConsumer) {
        consumers.insert(consumer, at: 0)
    }

    // MARK: What this node's connections do

    func join(_ ticket: JoinTicket, room roomName: String) {
        let number = nextConnection
        nextConnection += 1
        let room = want(roomName)
        room.joins[number] = ticket
        let ssrc = media?.reserveSSRC(for: ticket.id, room: roomName)
        send(
            .join(
                node: nodeName, connection: number, peer: ticket.id, name: ticket.name, role: ticket.role,
                ssrc: ssrc, now: ticket.now), in: roomName)
    }

    func handle(
        _ request: ClientRequest, from peer: PeerID, id: RequestID?, in roomName: String, now: Timestamp
    ) -> ServerMessage? {
        guard let room = rooms[roomName], room.local[peer] != nil else { return nil }
        flushDepartures(in: roomName)
        // A repeat of a request this copy of the room saw decided: answered here, whether or not Redis answers.
        if let id, AppliedRequests.isDeduplicated(request),
            let decided = room.copy?.authority.applied.decision(id, from: peer)
        {
            return decided.refusal ?? AppliedRequests.repeated(id)
        }
        let input = ClusterInput.request(node: nodeName, peer: peer, id: id, request, now: now)
        // A repeat of a request on its way already (the client retried): the owner's decision on the first copy,
        // or `unconfirmed`, answers both.
        if id != nil, room.awaited.contains(where: { $0.matches(input) }) { return nil }
        room.awaited.append(Awaited(serial: nextAwaited, input: input))
        nextAwaited += 1
        send(input, in: roomName)
        return nil
    }

    /// The connection that speaks for `peer` here closed: its departure goes to the owner with the departures of
    /// the next 50 ms, naming that connection's number, so that it can only ever take out that connection (a
    /// client reconnecting through this node at once joins with a new number before the departure is sent).
    func leave(_ peer: PeerID, reason: LeaveReason, from roomName: String) {
        guard let room = rooms[roomName], let connection = room.local.removeValue(forKey: peer) else { return }
        room.departures.append((Departure(peer, reason), connection))
        guard let loop else {
            flushDepartures(in: roomName)
            return
        }
        guard !room.departureTimer else { return }
        room.departureTimer = true
        loop.schedule(after: Self.departureWindow) { [self] in
            rooms[roomName]?.departureTimer = false
            flushDepartures(in: roomName)
        }
    }

    /// Not announced in a cluster yet: the scores would have to travel to the room's owner like levels do
    /// (docs/media.md).
    func updateQuality(_ measured: [PeerQuality], in roomName: String) {}

    func updateLevels(_ levels: [PeerID: Int], in roomName: String) {
        guard let room = rooms[roomName], room.copy != nil else { return }
        let mine = levels.filter { room.local[$0.key] != nil }
        guard !mine.isEmpty else { return }
        send(.levels(node: nodeName, mine, now: currentTimestamp()), in: roomName)
    }

    /// How long a room's other nodes may be silent (no relayed media, no keepalive) before this node sends the
    /// room's clients to reconnect.
    static let relaySilenceMilliseconds: Int64 = 3000
    /// Rooms whose clients were sent away for silence, until the room is heard from again: a client that comes
    /// back through this node while it is still cut off stays (the room goes on without the other nodes' audio).
    private var silenced: Set<String> = []
    /// Rooms this node had people in at the last check: a room that has people here again counts its silence
    /// from then (the other nodes send to a node only while it has people in the room).
    private var served: Set<String> = []

    /// Every second: a room whose other nodes have all been silent for 3 s, while Redis answers this node and
    /// says at least one of them refreshed its registration in the last two ticks and two ticks or more after
    /// it was last heard here (so it is alive and reaches Redis, and only the media between it and this node is
    /// cut), has its clients here closed with 1001, so that they reconnect (through another node, where the
    /// client knows one). A room this node alone serves relays to no one and is never silent; a node that died
    /// is silent too, but it refreshed no later than its last keepalive period, and the cluster takes its people
    /// out instead (`nodeLeft`); while Redis does not answer this node, nothing is dropped (its view of the
    /// others is stale). See docs/cluster.md, "Silence between nodes".
    func dropSilentRooms() {
        guard let media else { return }
        let servedNow = Set(rooms.filter { !$0.value.local.isEmpty }.keys)
        for roomName in servedNow.subtracting(served).sorted() { media.restartSilence(room: roomName) }
        served = servedNow
        let silent = media.silentRooms(forMilliseconds: Self.relaySilenceMilliseconds)
        silenced.formIntersection(silent.map(\.room))
        guard !redisDown else { return }
        let recent = Int64(2 * cluster.configuration.timing.tickMilliseconds)
        for silence in silent where !silenced.contains(silence.room) {
            let (roomName, nodes) = (silence.room, silence.nodes)
            guard let room = rooms[roomName], !room.local.isEmpty else { continue }
            // Alive in Redis: refreshed within two ticks. Proof that the silence is a cut, not a death: one of
            // them refreshed two ticks or more after this node last heard it (a node that died refreshed at most
            // for its last keepalive period, and any lag, after its last keepalive).
            let renewals = nodes.compactMap { name in cluster.millisecondsSinceRenewal(of: name).map { (name, $0) } }
            let alive = renewals.filter { $0.1 <= recent }
            let heardAlive = alive.contains { name, renewed in
                (silence.quietMilliseconds[name] ?? 0) - renewed >= recent
            }
            guard heardAlive else { continue }
            let aliveNames = alive.map(\.0)
            silenced.insert(roomName)
            let members = connections.members(of: roomName).filter { room.local[$0.key] != nil }
            log.warning(
                "room \(roomName): nothing from node\(nodes.count == 1 ? "" : "s") \(nodes.joined(separator: ", ")) for "
                    + "\(Self.relaySilenceMilliseconds / 1000) s though \(aliveNames.joined(separator: ", ")) "
                    + "\(aliveNames.count == 1 ? "is" : "are") alive in Redis: the media between the nodes is cut; "
                    + "\(members.count == 1 ? "its 1 client here is" : "its \(members.count) clients here are") "
                    + "sent to reconnect")
            for (_, entry) in members.sorted(by: { $0.key < $1.key }) {
                entry.connection.close(code: .goingAway, reason: ServerClose.cutOff)
            }
        }
    }

    /// Only the owner lets invitations lapse (and announces reactions held back), with an input carrying its
    /// clock, so that every copy lapses the same ones at the same point of the stream.
    func expireInvitations(now: Timestamp) {
        for (roomName, room) in rooms {
            guard case .owner = room.phase, room.ready, !room.expiryQueued,
                let due = room.copy?.authority.nextTimedWork, due <= now
            else { continue }
            room.expiryQueued = true
            room.queue.append(Pending(input: .expireInvitations(node: nodeName, now: now), cursor: nil))
            drain(roomName)
        }
    }

    /// Sends this node's departures gathered so far as one input, each with the number of the connection that
    /// closed.
    private func flushDepartures(in roomName: String) {
        guard let room = rooms[roomName], !room.departures.isEmpty else { return }
        let gathered = room.departures
        room.departures = []
        send(.leave(node: nodeName, gathered, now: currentTimestamp()), in: roomName)
    }

    // MARK: Inputs to the owner

    /// Hands one of this node's inputs to the room's owner: decided here when this node owns the room, else
    /// queued in the room's request stream.
    private func send(_ input: ClusterInput, in roomName: String) {
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
    private static let unsealable = ClusterError.redis(.server("the input could not be sealed for the cluster"))

    private func submit(_ input: ClusterInput, in roomName: String) {
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
    private func markSent(_ input: ClusterInput, in roomName: String) {
        guard input.kind == .request, input.node == nodeName, let room = rooms[roomName],
            let index = room.awaited.firstIndex(where: { $0.matches(input) }), !room.awaited[index].sent
        else { return }
        room.awaited[index].sent = true
        let serial = room.awaited[index].serial
        loop?.schedule(after: .milliseconds(awaitMilliseconds)) { [self] in unconfirmed(serial, in: roomName) }
    }

    /// Sends one of this node's requests that may have reached Redis again in a moment, while its requester
    /// still waits: the owner applies its id once, so a copy that did arrive is answered `already_applied`.
    private func resendLater(_ input: ClusterInput, in roomName: String) {
        guard let serial = rooms[roomName]?.awaited.first(where: { $0.matches(input) })?.serial else { return }
        loop?.schedule(after: .milliseconds(500)) { [self] in
            guard rooms[roomName]?.awaited.contains(where: { $0.serial == serial }) == true else { return }
            send(input, in: roomName)
        }
    }

    /// The owner's decision on one of this node's requests arrived (in the stream): nothing more to wait for.
    private func decided(_ input: ClusterInput, in roomName: String) {
        guard input.kind == .request, input.node == nodeName, let room = rooms[roomName],
            let index = room.awaited.firstIndex(where: { $0.matches(input) })
        else { return }
        room.awaited.remove(at: index)
    }

    /// No decision on a request that may have reached Redis: its requester hears that it may or may not have
    /// taken effect, and that sending it again under the same id is safe.
    private func unconfirmed(_ serial: UInt64, in roomName: String) {
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
        var notice = Outcome()
        notice.deliveries = [
            Delivery(
                to: .peer(peer),
                ServerMessage(
                    .error(
                        code: .unconfirmed,
                        message: "the cluster could not confirm this request: it may still take effect"
                            + (input.requestID == nil ? "" : "; sending it again with the same id is safe"),
                        id: input.requestID), seq: nil))
        ]
        publish(notice, in: roomName)
    }

    /// An input that could not reach the owner: the requester is told to try again (when it surely changed
    /// nothing; else the node waits on for the owner's decision, see `Awaited`); a join is closed for the
    /// client to reconnect; a departure is sent again later, so nobody stays in the room for good.
    private func refuse(_ input: ClusterInput, in roomName: String, because error: ClusterError) {
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
            var notice = Outcome()
            notice.deliveries = [
                Delivery(
                    to: .peer(peer),
                    ServerMessage(
                        .error(
                            code: .internal,
                            message: error.isUnavailable ? "\(error)" : "unavailable, try again: \(error)",
                            id: input.requestID),
                        seq: nil))
            ]
            publish(notice, in: roomName)
        case .leave:
            loop?.schedule(after: .milliseconds(500)) { [self] in send(input, in: roomName) }
        case .levels, .nodeGone, .expireInvitations:
            break
        }
    }

    /// The owner decides its queued inputs one at a time: on a copy of the room, committed by the append.
    private func drain(_ roomName: String) {
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
        let wroteCheckpoint = room.sinceCheckpoint + 1 >= Self.checkpointInterval
        var entry = RoomEntry(id: id, prev: room.position, requestID: pending.cursor ?? "", body: [])
        do {
            entry.body = try seal.sealEntry(pending.input.encoded(), room: roomName, entry: entry)
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
            wroteCheckpoint ? Self.checkpointOperations(decided, at: id, room: roomName, seal: seal) : []
        }
        if pending.cursor == nil { markSent(pending.input, in: roomName) }
        cluster.append(roomName, entry: entry, operations: operations, requestCursor: pending.cursor) {
            [self] result in
            appended(
                result, input, applied: applied, decided: decided, id: id, generation: generation,
                wroteCheckpoint: wroteCheckpoint, in: roomName)
        }
    }

    private func appended(
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
            room.sinceCheckpoint = wroteCheckpoint ? 0 : room.sinceCheckpoint + 1
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

    /// The room's checkpoint at entry `id`, sealed; none when it cannot be sealed now (the next one will be).
    static func checkpointOperations(
        _ copy: ReplicatedRoom, at id: EntryID, room: String, seal: ClusterSeal
    ) -> [StateOperation] {
        guard let sealed = try? seal.sealCheckpoint(copy.encoded(), room: room, at: id) else { return [] }
        return [.setMeta("checkpoint", sealed), .setMeta("checkpointAt", Array(id.description.utf8))]
    }

    // MARK: Carrying out

    /// Carries out an applied input on this node: the joiner of this node gets its snapshot, this node's
    /// clients hear the outcome.
    private func carryOut(_ input: ClusterInput, _ applied: ReplicatedRoom.Applied, in roomName: String) {
        guard let room = rooms[roomName] else { return }
        switch applied {
        case .joined(let result):
            let ticket = input.node == nodeName ? room.joins.removeValue(forKey: input.connection) : nil
            switch result {
            case .refused(let reason):
                if ticket != nil, let peer = input.peer { media?.release(peer, room: roomName) }
                ticket?.answer(.refused(reason))
            case .joined(let snapshot, let outcome, let replaced):
                guard let peer = input.peer else { return }
                // Gates first: a speaker of another node is heard here from now on, if it may publish.
                if input.node != nodeName, let ssrc = input.ssrc {
                    let open = outcome.gates.last { $0.peer == peer }?.open ?? false
                    media?.addRemoteSpeaker(
                        peer, ssrc: ssrc, node: Self.name(of: input.node), room: roomName, open: open)
                } else if input.node == nodeName {
                    media?.removeRemoteSpeaker(peer, room: roomName)
                }
                updateRemoteNodes(roomName)
                if input.node != nodeName, room.local.removeValue(forKey: peer) != nil {
                    // The same identity joined through another node: its connection here no longer speaks for it.
                    connections.detach(peer, from: roomName)?.close(.replaced)
                    media?.moved(peer, room: roomName)
                }
                if let ticket {
                    if ticket.isWanted() {
                        room.local[peer] = input.connection
                        ticket.answer(.accepted(replaced: replaced))
                        ticket.answer(.admitted(snapshot: snapshot, outcome: outcome, replaced: replaced))
                    } else {
                        send(
                            .leave(
                                node: nodeName, [(Departure(peer, .disconnected), input.connection)],
                                now: currentTimestamp()), in: roomName)
                    }
                }
                publish(outcome, in: roomName)
            }
        case .outcome(let outcome):
            decided(input, in: roomName)
            for (peer, _) in outcome.closes { room.local[peer] = nil }
            publish(outcome, in: roomName)
            // The cluster took this node for gone (it was frozen, or cut off from Redis): its people are out of
            // the room, and their connections go, so that their clients reconnect and join again.
            if input.kind == .nodeGone, input.node == nodeName { handBack(roomName) }
            // A departure names its connection and takes out no other; should the room still have stopped
            // counting a connection of this node's people, that connection goes too.
            if input.kind == .leave, let departures = input.departures {
                handBack(roomName, among: departures.map(\.peer))
            }
            if input.kind == .leave || input.kind == .nodeGone || !outcome.closes.isEmpty {
                updateRemoteNodes(roomName)
            }
            if let error = outcome.error, input.node == nodeName, let peer = input.peer {
                var notice = Outcome()
                notice.deliveries = [Delivery(to: .peer(peer), error)]
                publish(notice, in: roomName)
            }
        }
    }

    /// Tells the relay which other nodes have people in the room (its speakers' packets go to each once).
    private func updateRemoteNodes(_ roomName: String) {
        guard let media, let copy = rooms[roomName]?.copy else { return }
        let homes = Set(copy.homes.values.map(\.node)).subtracting([nodeName])
        let nodes = cluster.nodes.compactMap { record -> RelayNode? in
            guard homes.contains(Self.identity(name: record.name, incarnation: record.incarnation)),
                let address = Self.udpAddress(record.relayAddress)
            else { return nil }
            return RelayNode(name: record.name, incarnation: record.incarnation, address: address)
        }
        media.setRemoteNodes(nodes, room: roomName)
    }

    /// Registers every speaker of other nodes the copy holds (after the copy started from a checkpoint).
    private func syncRemoteSpeakers(_ roomName: String) {
        guard let media, let copy = rooms[roomName]?.copy else { return }
        for (peer, home) in copy.homes where home.node != nodeName {
            guard let ssrc = home.ssrc else { continue }
            media.addRemoteSpeaker(
                peer, ssrc: ssrc, node: Self.name(of: home.node), room: roomName,
                open: copy.authority.mayPublish(peer))
        }
        updateRemoteNodes(roomName)
    }

    /// The node name of a `name/incarnation` identity.
    static func name(of identity: String) -> String {
        String(identity.split(separator: "/").first ?? "")
    }

    static func udpAddress(_ text: String) -> UDPAddress? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        return UDPAddress(host: String(text[..<colon]), port: port)
    }

    /// Closes the connections of this node's people (of `peers`, when given) that the room does not hold as
    /// connected here, through that very connection (close 1001, which clients answer by reconnecting): a
    /// connection the room no longer counts never stays open, hearing the room's messages while nobody sees it.
    private func handBack(_ roomName: String, among peers: [PeerID]? = nil) {
        guard let room = rooms[roomName], let copy = room.copy else { return }
        let stale = room.local.filter { peer, connection in
            guard peers?.contains(peer) ?? true else { return false }
            guard let home = copy.homes[peer] else { return true }
            return home.node != nodeName || home.connection != connection
        }
        guard !stale.isEmpty else { return }
        log.warning("room \(roomName): \(stale.count) people of this node are no longer in it; their clients reconnect")
        for peer in stale.keys.sorted() {
            room.local[peer] = nil
            guard let entry = connections.detach(peer, from: roomName) else { continue }
            entry.room = nil
            entry.peer = nil
            entry.connection.close(code: .goingAway, reason: ServerClose.handedBack)
        }
    }

    private func publish(_ outcome: Outcome, in roomName: String) {
        for consumer in consumers { consumer.consume(outcome, in: roomName) }
    }

    // MARK: Loading, owning and following

    /// The room, known from now on: it is claimed (owned if nobody owns it, else followed).
    private func want(_ roomName: String) -> Room {
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
                guard let input = try? ClusterInput(decoding: plain), input.node.hasPrefix(request.node + "/") else {
                    log.warning("room \(roomName): a queued request from \(request.node) cannot be read; skipped")
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
            media?.restartSilence()
        case .redisLostData:
            log.warning("the cluster's Redis lost its data: the rooms this node owns are written again")
            lobbyWritten = false
        case .lobby(let records):
            directory.replaceRemote(Self.lobbyEntries(records, log: log))
        }
    }

    /// While Redis does not answer: the inputs waiting for the room's owner are answered "unavailable, try
    /// again" (departures wait on, to be sent when it is back).
    private func refuseWaiting(_ roomName: String) {
        guard let room = rooms[roomName] else { return }
        let waiting = room.waiting
        room.waiting = waiting.filter { $0.kind == .leave }
        for input in waiting where input.kind != .leave {
            refuse(input, in: roomName, because: redisAway)
        }
    }

    /// Why a request is refused while Redis does not answer.
    private var redisAway: ClusterError {
        .unavailable(
            .timedOut(
                endpoint: "\(cluster.configuration.redis)",
                milliseconds: cluster.configuration.timing.commandTimeoutMilliseconds))
    }

    /// Runs `then` once the node `identity` is surely gone: at once, except just after Redis came back, when
    /// every registration had lapsed and a node missing from the list may only be late to register again; then
    /// after two more ticks, if it is still missing.
    private func whenSurelyGone(_ identity: String, then: @escaping @Sendable () -> Void) {
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
    private func nodeGone(_ gone: String, name: String) {
        log.info("node \(name) left the cluster: its people leave its rooms")
        for (roomName, room) in rooms {
            guard case .owner = room.phase else { continue }
            room.queue.append(Pending(input: .nodeGone(gone, now: currentTimestamp()), cursor: nil))
            drain(roomName)
        }
    }

    /// Takes the room over: reads it from Redis, applies every entry this node has not seen, then decides.
    private func becomeOwner(_ roomName: String, token: LeaseToken, reseed: Bool) {
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
    private func startNew(_ roomName: String, generation: Int) {
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
            rewrite(
                roomName, copy: ReplicatedRoom(authority: authority), id: EntryID(seq: UInt64(now * 1000)),
                cursor: "0-0", generation: generation)
        }
    }

    /// Writes the room from `copy` as one reset entry (a new room, or Redis lost it), then decides.
    private func rewrite(_ roomName: String, copy: ReplicatedRoom, id: EntryID, cursor: String, generation: Int) {
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
    private func lostOwnership(_ roomName: String) {
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

    /// Follows the room: a copy from Redis's checkpoint and the entries after it, then every new entry.
    private func becomeReplica(_ roomName: String) {
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
    private func catchUp(
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
        cluster.entries(roomName, after: position) { [self] result in
            guard let room = rooms[roomName], room.generation == generation else { return }
            switch result {
            case .failure(let error):
                log.warning("room \(roomName): cannot read its entries: \(error); trying again")
                retry(roomName, generation: generation) { [self] in
                    catchUp(roomName, snapshot: snapshot, generation: generation, then: then)
                }
            case .success(let entries):
                let continues =
                    entries.first.map { $0.prev == position || $0.kind == .reset } ?? (position == snapshot.lastID)
                guard continues else {
                    restore(roomName, snapshot: snapshot, generation: generation, then: then)
                    return
                }
                if apply(entries, in: roomName, generation: generation) { then() }
            }
        }
    }

    /// Starts the copy again from the room's checkpoint in Redis, then applies the entries after it.
    private func restore(
        _ roomName: String, snapshot: ClusterState.RoomSnapshot, generation: Int, then: @escaping @Sendable () -> Void
    ) {
        guard let room = rooms[roomName] else { return }
        let checkpointAt = snapshot.meta["checkpointAt"].flatMap { EntryID(String(decoding: $0, as: UTF8.self)) }
        guard let sealed = snapshot.meta["checkpoint"], let checkpointAt,
            let bytes = seal.openCheckpoint(sealed, room: roomName, at: checkpointAt),
            let copy = try? ReplicatedRoom(name: roomName, roles: roles, maxPeers: maxPeers, decoding: bytes)
        else {
            log.error(
                "room \(roomName): its checkpoint in the cluster cannot be read (or is not sealed under this node's "
                    + "cluster secret: do all nodes have the same --cluster-secret-file?)")
            retry(roomName, generation: generation) { [self] in becomeReplica(roomName) }
            return
        }
        replaceCopy(of: room, with: copy, in: roomName)
        room.position = checkpointAt
        cluster.entries(roomName, after: checkpointAt) { [self] result in
            guard let room = rooms[roomName], room.generation == generation else { return }
            switch result {
            case .failure(let error):
                log.warning("room \(roomName): cannot read its entries: \(error); trying again")
                retry(roomName, generation: generation) { [self] in
                    restore(roomName, snapshot: snapshot, generation: generation, then: then)
                }
            case .success(let entries):
                if apply(entries, in: roomName, generation: generation) {
                    // What this node missed may have taken its people out of the room.
                    handBack(roomName)
                    syncRemoteSpeakers(roomName)
                    then()
                }
            }
        }
    }

    /// Puts a whole new copy of the room in place (a checkpoint, a reset entry), and tells this node's lobbies
    /// what changed in the room's listing since they last heard of it, through the old copy.
    private func replaceCopy(of room: Room, with new: ReplicatedRoom, in roomName: String) {
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

    /// Applies entries in order; false (and a new start) when the chain is broken.
    @discardableResult
    private func apply(_ entries: [RoomEntry], in roomName: String, generation: Int) -> Bool {
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
                guard
                    let copy = try? ReplicatedRoom(
                        name: roomName, roles: roles, maxPeers: maxPeers, decoding: body)
                else { continue }
                replaceCopy(of: room, with: copy, in: roomName)
                room.position = entry.id
                continue
            }
            guard entry.prev == room.position, var copy = room.copy,
                let input = try? ClusterInput(decoding: body)
            else {
                log.warning("room \(roomName): its stream does not continue from \(room.position); reading it again")
                if case .replica = room.phase { becomeReplica(roomName) }
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

    /// After taking a room over: the people of nodes that are gone leave it.
    private func leaveGoneNodes(_ roomName: String) {
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

    /// The inputs this node held while the room was loading, to the owner now.
    private func flushWaiting(_ roomName: String) {
        guard let room = rooms[roomName] else { return }
        let waiting = room.waiting
        room.waiting = []
        for input in waiting { send(input, in: roomName) }
        drain(roomName)
    }

    // MARK: The cluster's lobby

    /// How long a room that left the list stays in this node's records, so that the other lobbies hear why.
    static let lobbyDepartureMilliseconds: Timestamp = 30_000

    private func scheduleLobbyPublishing() {
        guard let loop else { return }
        loop.schedule(after: .milliseconds(cluster.configuration.timing.tickMilliseconds)) { [self] in
            publishLobby()
            scheduleLobbyPublishing()
        }
    }

    /// Writes what the other nodes' lobbies should show of the rooms this node owns, when it changed (or Redis
    /// may not have it): each listed room's entry, and for a while each room that left the list, with why.
    /// Rooms this node no longer owns drop out; the node that owns them now speaks for them.
    func publishLobby() {
        guard !lobbyWriting else { return }
        let now = currentTimestamp()
        var records: [String: DirectoryCodec.ClusterEntry] = [:]
        for (roomName, room) in rooms {
            guard case .owner(let token) = room.phase, room.ready, let authority = room.copy?.authority else {
                continue
            }
            let before = lobbyRecords[roomName]
            if let listing = authority.listing {
                var arrival = ListingArrival.started
                switch before?.change {
                case .added(_, let why)?: arrival = why
                case .removed(_, .unlisted)?: arrival = .listed
                default: break
                }
                records[roomName] = .init(change: .added(listing, arrival), epoch: token.epoch, at: now)
            } else if let before, case .added = before.change {
                let departure: ListingDeparture =
                    authority.ended ? .ended : authority.peers.isEmpty ? .empty : .unlisted
                records[roomName] = .init(
                    change: .removed(room: roomName, departure), epoch: token.epoch, at: now)
            } else if let before, case .removed = before.change, now - before.at < Self.lobbyDepartureMilliseconds {
                records[roomName] = before
            }
        }
        let unchanged =
            records.count == lobbyRecords.count
            && records.allSatisfy { room, entry in
                guard let old = lobbyRecords[room] else { return false }
                return old.change == entry.change && old.epoch == entry.epoch
            }
        if unchanged, lobbyWritten { return }
        if !unchanged { lobbyRecords = records }
        lobbyWriting = true
        let written = lobbyRecords
        cluster.publishLobby(written.mapValues { DirectoryCodec.encode($0) }) { [self] stored in
            lobbyWriting = false
            lobbyWritten = stored && written == lobbyRecords
        }
    }

    /// The other nodes' records, one entry per room: the one written under the highest lease epoch (an owner
    /// that just lost a room may still name it). Entries that cannot be read, or name another room, are skipped.
    static func lobbyEntries(_ records: [LobbyRecords], log: ServerLog) -> [String: ListingChange] {
        var best: [String: DirectoryCodec.ClusterEntry] = [:]
        for node in records {
            for (roomName, bytes) in node.entries {
                guard let entry = try? DirectoryCodec.decodeEntry(bytes), entry.change.room == roomName else {
                    log.warning("node \(node.node)'s lobby entry for room \(roomName) cannot be read; skipped")
                    continue
                }
                if let held = best[roomName], held.epoch >= entry.epoch { continue }
                best[roomName] = entry
            }
        }
        return best.mapValues(\.change)
    }

    private func retry(_ roomName: String, generation: Int, _ again: @escaping @Sendable () -> Void) {
        guard let loop else { return }
        loop.schedule(after: .milliseconds(100)) { [self] in
            guard let room = rooms[roomName], room.generation == generation else { return }
            again()
        }
    }
}
