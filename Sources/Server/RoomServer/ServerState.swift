import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTokens
import RoomTransport

/// The server's parts, wired together: the connection table, the rooms and what consumes their outcomes.
/// The connection callbacks are in `Admission.swift` (open and close) and `RequestHandling.swift` (messages).
///
/// Every method runs on the event loop's thread only, which is what makes the unchecked sendability safe:
/// nothing here is touched from two threads (the persistence queue's own thread touches only its copies).
final class ServerState: @unchecked Sendable {
    let configuration: ServerConfiguration
    let verifier: TokenVerifier
    let log: ServerLog
    let connections = Connections()
    let broadcaster: Broadcaster
    let persistence: PersistenceQueue
    /// The rooms: decided here alone, or by their owners in a cluster.
    let rooms: any RoomPaths
    /// The cluster this node serves rooms with, if any.
    let cluster: (any ServerCluster)?
    /// The lobby's list of live rooms and its watchers.
    let directory: RoomDirectory
    /// Media forwarding, when the server serves audio (attached once, before the first connection).
    private(set) var media: ServerMedia?
    /// The event loop, for the threads that hand work back to it (set once the server listens).
    let loop: LoopReference
    /// The log's departure lines, of which a crowd leaving at once gets one.
    let departureLog = DepartureLog()
    /// What invite holders are checked against besides their invite: the link registry and the limits.
    let door: InviteDoor
    /// Newcomers waiting at the door of locked rooms for a host's answer.
    let waitingRoom: WaitingRoom
    /// Set when the server begins to stop: the connections it then closes are not departures.
    private(set) var stopping = false
    /// The recorders the rooms asked this node for.
    private(set) var recorders: RecorderSupervisor!
    /// The recorders that carry the rooms' streams, one per room and destination.
    private(set) var streams: StreamSupervisor!
    /// The port the server listens on, once it does: the server's own recorders join through it.
    private(set) var listeningPort: Int?
    /// Rooms lobbies opened since the server started, or are opening (the store lookup under way): a second ask
    /// for one is refused at once, even before the database has caught up with the change journal.
    var openingRooms: Set<String> = []
    /// Who opened each of those rooms, and the id of the host's link they were given (`RoomOpening`).
    var lobbyOpeners: [String: (opener: PeerID, link: String)] = [:]
    /// The host in the links the server mints for its own recorders (`OwnLinkHost`), once it listens.
    private(set) var ownLinkHost = "127.0.0.1"

    init(
        configuration: ServerConfiguration, verifier: TokenVerifier, persistence: PersistenceQueue,
        loop: LoopReference, log: ServerLog, cluster: (any ServerCluster)? = nil,
        links: LinkRegistry? = nil
    ) {
        self.configuration = configuration
        self.verifier = verifier
        self.persistence = persistence
        self.loop = loop
        self.log = log
        broadcaster = Broadcaster(connections: connections)
        self.cluster = cluster
        directory = RoomDirectory(maxWatchers: configuration.maxLobbyWatchers, log: log)
        door = InviteDoor(limits: configuration.admissionLimits, registry: links)
        waitingRoom = WaitingRoom(connections: connections, roles: configuration.roles, log: log, alone: cluster == nil)
        let consumers: [any OutcomeConsumer] = [
            broadcaster, directory, waitingRoom,
            LinkSigner(
                connections: connections, issuer: verifier.issuer, log: log, registry: links,
                roles: configuration.roles),
        ]
        if let cluster {
            rooms = cluster.rooms(
                RoomsParts(
                    roles: configuration.roles, maxPeers: configuration.maxPeersPerRoom, persistence: persistence,
                    connections: connections, consumers: consumers, directory: directory, log: log,
                    streamDestinations: configuration.streams.map(\.name), links: links))
        } else {
            rooms = LocalRooms(
                roles: configuration.roles, maxPeers: configuration.maxPeersPerRoom, committer: persistence,
                loader: persistence, consumers: consumers, log: log, endingGrace: configuration.hostlessGrace)
        }
        waitingRoom.role = { [rooms] peer, room in rooms.role(of: peer, in: room) }
        recorders = makeRecorders()
        // In a cluster every node carries out the room's outcomes; only the room's owner runs its recorder.
        recorders.isHere = { [rooms] room in rooms.decides(for: room) }
        rooms.consumeFirst(recorders)
        streams = makeStreams()
        streams.isHere = { [rooms] room in rooms.decides(for: room) }
        rooms.consumeFirst(streams)
        (rooms as? LocalRooms)?.streamDestinations = configuration.streams.map(\.name)
        directory.openRoom = { [unowned self] name, topic, id, connection in
            openRoom(name: name, topic: topic, id: id, from: connection)
        }
    }

    /// The loop is running: joins are gathered and departures too on its timers.
    func started(on eventLoop: EventLoop, port: Int) {
        listeningPort = port
        ownLinkHost = OwnLinkHost.choose(listening: configuration.host, tls: configuration.tls, log: log)
        broadcaster.loop = eventLoop
        directory.loop = eventLoop
        rooms.loop = eventLoop
    }

    /// The store cannot save (`problem`), or saves again (nil): the rooms' hosts are told.
    func savingChanged(_ problem: String?) {
        rooms.savingChanged(problem)
    }

    /// The server begins to stop.
    func beginStopping() {
        stopping = true
        recorders.stopAll()
        streams.stopAll()
    }

    /// Serves audio through `media`: its gates become the first consumer of every outcome.
    func attach(_ media: ServerMedia) {
        self.media = media
        rooms.consumeFirst(media)
        rooms.attach(media)
    }
}
