import MediaServer
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTransport

/// The paths a connection's joins, requests, departures and audio levels take into the rooms, and what the
/// rest of the server tells the rooms (the store's saving trouble, the media that serves them). `LocalRooms`
/// serves them alone; a cluster gives its own rooms through `ServerCluster.rooms`, and the server holds either
/// through this protocol only.
package protocol RoomPaths: AnyObject {
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
    /// Loads the rooms that had a deadline waiting when the server stopped (a handover, or their end), so that
    /// each is acted on when it is due (at start; once the loop runs).
    func resume(_ roomNames: [String], now: Timestamp)
    /// Sends the clients of rooms cut off from the other nodes' media to reconnect (every second).
    func dropSilentRooms()
    /// The role `peer` holds in this node's copy of `room`, if they are in it.
    func role(of peer: PeerID, in roomName: String) -> RoleName?
    /// Whether this node decides for `room` (a server alone always does; in a cluster, the room's owner): the node
    /// that runs the room's recorder.
    func decides(for roomName: String) -> Bool
    /// The server gave up the recorder of `room`'s stream to `name` (it kept failing): the room stops streaming
    /// there, and everyone is told `reason`.
    func streamGaveUp(_ name: String, in roomName: String, reason: String)
    /// The server's recorder of `room` could not start or was given up: whoever may record, on every node, is
    /// told `sentence`.
    func recorderProblem(_ sentence: String, in roomName: String)
    /// The store cannot save (`problem`), or saves again (nil).
    func savingChanged(_ problem: String?)
    /// The server serves audio through `media` (told once, before the first connection); its gates are already
    /// the first consumer of every outcome.
    func attach(_ media: ServerMedia)
}

extension LocalRooms: RoomPaths {
    /// A server alone relays to no one: no room of it is ever silent.
    package func dropSilentRooms() {}

    package func decides(for roomName: String) -> Bool { true }

    package func role(of peer: PeerID, in roomName: String) -> RoleName? {
        rooms[roomName]?.peers[peer]?.role
    }

    /// Media needs nothing of the rooms of a server alone: it consumes their outcomes like the rest.
    package func attach(_ media: ServerMedia) {}
}

/// What the server's parts give a cluster's rooms: the same as `LocalRooms` gets, and the lobby and the
/// connections (a cluster's rooms answer joins and publish other nodes' rooms to the lobby themselves).
package struct RoomsParts {
    package let roles: RoleTable
    package let maxPeers: Int
    /// The node's own database: rooms are loaded from it, and their changes archived to it.
    package let persistence: PersistenceQueue
    package let connections: Connections
    /// What consumes the rooms' outcomes, in order.
    package let consumers: [any OutcomeConsumer]
    package let directory: RoomDirectory
    package let log: ServerLog
    /// The names of the server's stream destinations, which every room may stream to.
    package var streamDestinations: [String] = []
    /// The node's link registry, whose bans a cluster keeps as the cluster's (docs/tokens.md, "Bans").
    package var links: LinkRegistry?
}

/// The one door through which a cluster comes into a server: the server knows nothing of Redis, leases or
/// relays, only these steps, taken in this order by `RoomServerRuntime` (`clubroom serve --cluster` gives one).
package protocol ServerCluster: AnyObject, Sendable {
    /// Before the server's parts are made: binds what the node's media needs from the cluster (its relay) and
    /// prepares the node, whose answers and notices reach the rooms on `loop`. `tokenSecret` is the server's
    /// token secret; `host` the address it listens on.
    func prepare(
        media: ServerMedia?, tokenSecret: [UInt8], host: String, loop: LoopReference, log: ServerLog)
        throws(ServerStartError)
    /// The rooms this node serves with the others, in place of `LocalRooms`.
    func rooms(_ parts: RoomsParts) -> any RoomPaths
    /// Joins the cluster (its Redis reached, the node registered) and starts relaying media; says so in the log.
    func start(media: ServerMedia?, log: ServerLog) throws(ServerStartError)
    /// Leaves the cluster: the node's leases and registration go, so the others take its rooms over at once.
    func stop()
}

/// Media between this node and the other nodes of its cluster, as the server's media uses it: the relay's
/// remote speakers, whose packets pass while this node's copy of their gate is open.
package protocol RemoteMedia: AnyObject, Sendable {
    func addRemoteSpeaker(ssrc: UInt32, room: String, node: String, gate: PublishGate)
    func removeRemoteSpeaker(ssrc: UInt32)
    /// The room ended: nothing of it is relayed any more.
    func closeRoom(_ room: String)
    func stop()
    /// The relay's counters that are not zero, for the log.
    var countersText: String { get }
}
