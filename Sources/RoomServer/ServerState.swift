import Crypto
import RoomCore
import RoomProtocol
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
    let rooms: LocalRooms
    /// The lobby's list of live rooms and its watchers.
    let directory: RoomDirectory
    /// Media forwarding, when the server serves audio (attached once, before the first connection).
    private(set) var media: ServerMedia?
    /// The event loop, for the threads that hand work back to it (set once the server listens).
    let loop: LoopReference
    /// Set when the server begins to stop: the connections it then closes are not departures.
    private(set) var stopping = false

    init(
        configuration: ServerConfiguration, verifier: TokenVerifier, persistence: PersistenceQueue,
        loop: LoopReference, log: ServerLog
    ) {
        self.configuration = configuration
        self.verifier = verifier
        self.persistence = persistence
        self.loop = loop
        self.log = log
        broadcaster = Broadcaster(connections: connections)
        directory = RoomDirectory(maxWatchers: configuration.maxLobbyWatchers, log: log)
        rooms = LocalRooms(
            roles: configuration.roles, maxPeers: configuration.maxPeersPerRoom, committer: persistence,
            loader: persistence,
            consumers: [
                broadcaster, directory, LinkSigner(connections: connections, issuer: verifier.issuer, log: log),
            ], log: log)
    }

    /// The loop is running: joins are gathered and departures too on its timers.
    func started(on eventLoop: EventLoop) {
        broadcaster.loop = eventLoop
        directory.loop = eventLoop
        rooms.loop = eventLoop
    }

    /// The server begins to stop.
    func beginStopping() {
        stopping = true
    }

    /// Serves audio through `media`: its gates become the first consumer of every outcome.
    func attach(_ media: ServerMedia) {
        self.media = media
        rooms.consumeFirst(media)
    }
}
