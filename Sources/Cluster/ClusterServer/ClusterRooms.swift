import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomServer
import RoomTransport

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
    package func role(of peer: PeerID, in roomName: String) -> RoleName? {
        rooms[roomName]?.copy?.authority.peers[peer]?.role
    }

    /// The owner gave up the recorder of a stream (it runs them): every copy stops streaming there, in order.
    package func streamGaveUp(_ name: String, in roomName: String, reason: String) {
        send(.streamGaveUp(node: nodeName, stream: name, reason: reason, now: currentTimestamp()), in: roomName)
    }

    /// The owner's recorder of a room could not start or was given up: its hosts on every node are told, in order.
    package func recorderProblem(_ sentence: String, in roomName: String) {
        send(.recorderProblem(node: nodeName, sentence: sentence, now: currentTimestamp()), in: roomName)
    }

    package func decides(for roomName: String) -> Bool {
        guard case .owner = rooms[roomName]?.phase else { return false }
        return true
    }

    /// How many entries the owner writes between two checkpoints of the room in Redis.
    static let checkpointInterval = 32
    /// The parts an entry is counted in towards the next checkpoint (`checkpointWeight(of:)`).
    static let checkpointParts = 8
    /// How long departures are gathered before they go to the owner together.
    static let departureWindow: Duration = .milliseconds(50)

    let roles: RoleTable
    /// The names of the server's stream destinations (every node names the same ones).
    let streamDestinations: [String]
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
    var requestSequence: UInt64 = 0
    private(set) var consumers: [OutcomeConsumer]
    /// This node's lobby list: its own rooms from their outcomes, the others' from the nodes that own them.
    let directory: RoomDirectory
    package var loop: EventLoop? {
        didSet { if oldValue == nil, loop != nil { scheduleLobbyPublishing() } }
    }
    /// The node's media, when it serves audio: SSRCs for joins and remote speakers.
    var media: ServerMedia?
    /// Media between this node and the others, when it serves audio: the nodes of each room, and their silence.
    let relay: MediaRelay?

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
        /// Entries written since the last checkpoint, in `checkpointParts` (`checkpointWeight(of:)`).
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
        /// When this node last sent each of its peers' network quality to the room (`ClusterRooms+Quality`).
        var qualitySentAt: [PeerID: Timestamp] = [:]
        /// The connections of this node's peers that were given the scores announced before they came.
        var qualityTold: Set<UInt64> = []
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

    var rooms: [String: Room] = [:]
    var nextConnection: UInt64 = 1
    var nextAwaited: UInt64 = 1
    /// Whether Redis answers, as the cluster last said: while it does not, requests are answered "unavailable,
    /// try again" at once instead of waiting for it.
    var redisDown = false
    /// When Redis last came back (ms, this node's clock): every registration lapsed while it was away, so for a
    /// while a node missing from the list may only be late to register again.
    var redisBackAt: Timestamp = 0
    /// What this node last meant its lobby records to say (room to entry), and whether Redis has exactly that.
    var lobbyRecords: [String: DirectoryCodec.ClusterEntry] = [:]
    var lobbyWritten = false
    var lobbyWriting = false
    /// The node's link registry: its bans are the cluster's, as last read from Redis (`ClusterRooms+Bans`).
    let links: LinkRegistry?
    /// Whether this node's own bans were brought into the cluster since it started (or since Redis lost its
    /// data), and whether that is under way.
    var bansCarried = false
    var bansCarrying = false

    init(_ parts: RoomsParts, cluster: ClusterNode, relay: MediaRelay?, seal: ClusterSeal) {
        self.seal = seal
        roles = parts.roles
        streamDestinations = parts.streamDestinations
        maxPeers = parts.maxPeers
        self.cluster = cluster
        self.relay = relay
        nodeName = Self.identity(name: cluster.configuration.node, incarnation: cluster.configuration.incarnation)
        persistence = parts.persistence
        connections = parts.connections
        consumers = parts.consumers
        directory = parts.directory
        log = parts.log
        links = parts.links
    }

    static func identity(name: String, incarnation: UInt64) -> String { "\(name)/\(incarnation)" }

    package func consumeFirst(_ consumer: OutcomeConsumer) {
        consumers.insert(consumer, at: 0)
    }

    package func attach(_ media: ServerMedia) {
        self.media = media
    }

    /// A cluster's rooms are archived to the node's store as they change, but decided and kept in Redis: the
    /// store's trouble is the log's to tell, not the rooms' hosts'.
    package func savingChanged(_ problem: String?) {}

    // MARK: What this node's connections do

    package func join(_ ticket: JoinTicket, room roomName: String) {
        let number = nextConnection
        nextConnection += 1
        let room = want(roomName)
        room.joins[number] = ticket
        let ssrc = media?.reserveSSRC(for: ticket.id, room: roomName)
        send(
            .join(
                node: nodeName, connection: number, peer: ticket.id, name: ticket.name, role: ticket.role,
                ssrc: ssrc, startedBy: ticket.startedBy, stream: ticket.stream, now: ticket.now), in: roomName)
    }

    package func handle(
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
    package func leave(_ peer: PeerID, reason: LeaveReason, from roomName: String) {
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

    package func updateLevels(_ levels: [PeerID: Int], in roomName: String) {
        guard let room = rooms[roomName], room.copy != nil else { return }
        let mine = levels.filter { room.local[$0.key] != nil }
        guard !mine.isEmpty else { return }
        send(.levels(node: nodeName, mine, now: currentTimestamp()), in: roomName)
    }
    /// Rooms whose clients were sent away for silence, until the room is heard from again: a client that comes
    /// back through this node while it is still cut off stays (the room goes on without the other nodes' audio).
    var silenced: Set<String> = []
    /// Rooms this node had people in at the last check: a room that has people here again counts its silence
    /// from then (the other nodes send to a node only while it has people in the room).
    var served: Set<String> = []

    /// A cluster's rooms keep their deadlines in their checkpoints in Redis, which the room's owner acts on; a
    /// node's own database is only its archive, so nothing is loaded from it at start.
    package func resume(_ roomNames: [String], now: Timestamp) {}

    /// Only the owner lets invitations lapse (and announces reactions held back), with an input carrying its
    /// clock, so that every copy lapses the same ones at the same point of the stream.
    package func expireInvitations(now: Timestamp) {
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
    func flushDepartures(in roomName: String) {
        guard let room = rooms[roomName], !room.departures.isEmpty else { return }
        let gathered = room.departures
        room.departures = []
        send(.leave(node: nodeName, gathered, now: currentTimestamp()), in: roomName)
    }

    func retry(_ roomName: String, generation: Int, _ again: @escaping @Sendable () -> Void) {
        guard let loop else { return }
        loop.schedule(after: .milliseconds(100)) { [self] in
            guard let room = rooms[roomName], room.generation == generation else { return }
            again()
        }
    }
}
