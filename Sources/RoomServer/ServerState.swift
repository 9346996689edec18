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
    /// The event loop for the media thread's active speakers (set once the server listens).
    let mediaLoop = LoopReference()

    init(configuration: ServerConfiguration, verifier: TokenVerifier, persistence: PersistenceQueue, log: ServerLog) {
        self.configuration = configuration
        self.verifier = verifier
        self.persistence = persistence
        self.log = log
        broadcaster = Broadcaster(connections: connections)
        rooms = LocalRooms(
            roles: configuration.roles, maxPeers: configuration.maxPeersPerRoom, persistence: persistence,
            broadcaster: broadcaster, log: log)
        directory = RoomDirectory(maxWatchers: configuration.maxLobbyWatchers, log: log)
        rooms.directory = directory
    }

    /// Serves audio through `media`: its gates become the first consumer of every outcome.
    func attach(_ media: ServerMedia) {
        self.media = media
        rooms.media = media
    }
}
