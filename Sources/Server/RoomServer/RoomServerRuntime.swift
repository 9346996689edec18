import Crypto
import Foundation
import MediaTransport
import Platform
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTokens
import RoomTransport
import Synchronization

/// The room server: WebSocket connections in, rooms checked and changed by `RoomAuthority`, events out,
/// changes written to SQLite.
///
/// The parts, each in its own file: `Admission` (a connection's token and join), `RequestHandling` (a
/// connection's messages), `LocalRooms` (the authorities, and the order in which an outcome is carried out),
/// `Broadcaster` (deliveries and closes), `PersistenceQueue` (the database) and `ServerMedia` (keys, SSRCs and
/// publish gates); `RoomPaths` (the seam: the rooms as the server holds them, and `ServerCluster`, the door a
/// cluster's rooms come in through in place of `LocalRooms`).
///
/// Threads: every connection callback and every room runs on the transport's one event-loop thread, so rooms
/// need no locks; the store commits, applies and reads on threads of its own, so a slow or locked database
/// never stalls the rooms.
public final class RoomServerRuntime: Sendable {
    /// The port the server listens on.
    public let port: Int
    private let server: WebSocketServer
    private let state: ServerState
    private let stopped = Atomic(false)

    /// Opens the store (applying what its journal holds), loads or creates the secret, and starts listening.
    public convenience init(configuration: ServerConfiguration, log: ServerLog) throws(ServerStartError) {
        try self.init(configuration: configuration, log: log, cluster: nil)
    }

    /// The same, as a node of `cluster` when one is given: its rooms are the cluster's (`ServerCluster`).
    package init(
        configuration: ServerConfiguration, log: ServerLog, cluster: (any ServerCluster)?
    )
        throws(ServerStartError)
    {
        let diskFull = try DataFolder.prepare(configuration.dataDirectory, log: log)
        let secret: TokenSecret
        do {
            secret = try SecretFile.loadOrCreate(at: configuration.secretFile)
        } catch {
            throw ServerStartError(place: "secret file", problem: error.description)
        }
        let loopReference = LoopReference()
        let target = ServerStateReference()
        let store: SavedRooms
        do {
            store = try SavedRooms(
                directory: configuration.dataDirectory, now: currentTimestamp(), diskFull: diskFull,
                report: { event in
                    PersistenceQueue.log(event, to: log)
                    let saving: String??
                    switch event {
                    case .commitsFailing(let problem): saving = .some(problem.summary)
                    case .commitsRecovered: saving = .some(nil)
                    default: saving = nil
                    }
                    if let saving { loopReference.execute { target.state?.savingChanged(saving) } }
                })
        } catch {
            if error.isBusy, error.path.hasSuffix("/" + SavedRooms.journalFileName) {
                throw ServerStartError(
                    place: "data directory \(configuration.dataDirectory)",
                    problem: "another clubroom server is using it")
            }
            if error.isDamaged {
                throw ServerStartError(
                    place: "database",
                    problem: error.description
                        + "; restore it from a backup, or move it away to start with an empty one")
            }
            throw ServerStartError(place: "database", problem: error.description)
        }
        if store.recovered.entries > 0 {
            log.info("applied \(store.recovered.entries) saved changes the database did not have yet")
        }
        if store.recovered.releasedRoles > 0 {
            log.info(
                "\(store.recovered.releasedRoles) people were in rooms when the server stopped: their roles are theirs "
                    + "again if they come back within \(RoomAuthority.reconnectGrace / 1000) s")
        }
        if let problem = store.startProblem {
            log.warning(
                "the server starts read-only: \(problem); it serves, keeps what changes in memory (up to "
                    + "\(SavedRooms.maxHeldCommits) changes) and saves it once the data folder takes writes again, but "
                    + "what it holds is lost if it stops before then")
        }
        let links: LinkRegistry
        do {
            links = try LinkRegistry(path: configuration.dataDirectory + "/" + LinkRegistry.fileName)
        } catch {
            store.close(timeout: .seconds(1))
            throw ServerStartError(place: "link registry", problem: error.description)
        }
        var media: ServerMedia?
        if let mediaConfiguration = configuration.media {
            // The forwarder measures levels and network quality on its own thread; the rooms take them on the loop.
            do throws(ServerStartError) {
                media = try ServerMedia.start(
                    mediaConfiguration, log: log,
                    onLevels: { room, levels in
                        loopReference.execute { target.state?.rooms.updateLevels(levels, in: room) }
                    },
                    onQuality: { room, measured in
                        loopReference.execute { target.state?.rooms.updateQuality(measured, in: room) }
                    })
            } catch {
                store.close(timeout: .seconds(1))
                throw error
            }
        }
        if let cluster {
            do throws(ServerStartError) {
                try cluster.prepare(
                    media: media, tokenSecret: secret.bytes, host: configuration.host, loop: loopReference, log: log)
            } catch {
                media?.forwarder.stop()
                store.close(timeout: .seconds(1))
                throw error
            }
        }
        let state = ServerState(
            configuration: configuration, verifier: TokenVerifier(secret: secret),
            persistence: PersistenceQueue(store: store, loop: loopReference, log: log), loop: loopReference, log: log,
            cluster: cluster, links: links)
        target.set(state)
        if let media { state.attach(media) }
        if let cluster {
            // Before anything is said of media, so that a cluster that cannot be reached is the one line a failed
            // start prints. Its first notices come a tick (a second) later, once the loop runs.
            do throws(ServerStartError) {
                try cluster.start(media: media, log: log)
            } catch {
                media?.forwarder.stop()
                store.close(timeout: .seconds(1))
                throw error
            }
        }
        media?.logListening()
        var options = WebSocketOptions()
        options.maxMessageSize = ControlLimits.maxFrameBytes
        // What clients accept from the server; a larger snapshot ends its connection with a close frame.
        options.maxSentMessageSize = ControlLimits.maxServerMessageBytes
        options.pingInterval = configuration.pingInterval
        options.idleTimeout = configuration.idleTimeout
        let handler = WebSocketServer.Handler(
            onUpgrade: { request, _ in
                if RoomServerRuntime.isDirectoryPath(request.path) { return .accept }
                guard let room = request.room, PlainName.isValid(room) else {
                    return .reject(status: 404, reason: "no room here: the path must be /rooms or /rooms/ROOM")
                }
                return .accept
            },
            onOpen: { connection in state.opened(connection) },
            onMessage: { connection, payload in state.received(payload, on: connection) },
            onClose: { connection, code, reason in state.closed(connection, code: code, reason: reason) },
            onFailedHandshake: { address, problem in
                log.info("connection from \(address) ended before it opened: \(problem)")
            },
            onDescriptorsExhausted: { refused in
                if let refused {
                    log.info("accepting connections again; \(refused) refused while out of file descriptors")
                } else {
                    var limit = rlimit()
                    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
                    log.error(
                        "out of file descriptors (this process may open \(limit.rlim_cur)): new connections are "
                            + "refused with HTTP 503 until some close; raise the limit with 'ulimit -n'")
                }
            })
        // The transport's error already names its place (the address, or the TLS file that failed).
        do {
            server = try WebSocketServer(
                host: configuration.host, port: configuration.port, tls: configuration.tls, options: options,
                handler: handler)
        } catch {
            state.cluster?.stop()
            state.media?.stop()
            store.close(timeout: .seconds(1))
            throw ServerStartError(place: error.place, problem: error.problem)
        }
        self.state = state
        state.loop.set(server.loop)
        port = server.port
        let eventLoop = server.loop
        eventLoop.execute { [port] in state.started(on: eventLoop, port: port) }
        if let problem = store.startProblem {
            eventLoop.execute { state.savingChanged(problem.summary) }
        }
        // A thread name shows in top -H and /proc, where operators look for what is busy.
        eventLoop.execute { nameCurrentThread("room-server") }
        // Rooms whose last host had left when the server stopped act on it when due, whoever comes back.
        if cluster == nil { Self.resumeWaitingRooms(state, store: store, on: eventLoop, log: log) }
        Self.everySecond(state, on: eventLoop)
        let scheme = configuration.tls == nil ? "ws" : "wss"
        log.info("listening on \(scheme)://\(configuration.host):\(port)/rooms/ROOM, data in \(store.database.path)")
    }

    /// Loads the rooms with a deadline waiting (a handover, or their end), so that each acts on it when due.
    private static func resumeWaitingRooms(_ state: ServerState, store: SavedRooms, on loop: EventLoop, log: ServerLog)
    {
        do throws(DatabaseError) {
            let waiting = try store.database.roomsWithDeadlines()
            guard !waiting.isEmpty else { return }
            log.info(
                "rooms waiting for a host when the server stopped (a handover or their end, acted on when due): "
                    + waiting.joined(separator: ", "))
            loop.execute { state.rooms.resume(waiting, now: currentTimestamp()) }
        } catch {
            log.error("the rooms that wait for a host could not be read: \(error); each acts on it when someone joins")
        }
    }

    /// Once a second on the loop: invitations lapse (their lifetime is minutes, so a second late is nothing), and
    /// in a cluster, rooms cut off from the other nodes' media send their clients to reconnect.
    private static func everySecond(_ state: ServerState, on loop: EventLoop) {
        _ = loop.schedule(after: .seconds(1)) {
            state.rooms.expireInvitations(now: currentTimestamp())
            state.waitingRoom.expire(now: currentTimestamp())
            state.rooms.dropSilentRooms()
            everySecond(state, on: loop)
        }
    }

    /// The lobby's directory: `/rooms` (or `/rooms/`).
    public static func isDirectoryPath(_ path: String) -> Bool {
        path == "/rooms" || path == "/rooms/"
    }

    /// Takes audio levels (0–100) measured by the media path for peers of a room and announces those that
    /// changed in a `speakers` event. May be called from any thread.
    public func updateLevels(room: String, _ levels: [PeerID: Int]) {
        let state = state
        server.loop.execute { state.rooms.updateLevels(levels, in: room) }
    }

    /// Closes every connection with 1001 (the roles held in the rooms stay recorded, for everyone's return),
    /// then waits for the store to write what it was given (up to 10 s for a locked database: what it could not
    /// write stays in the journal for the next start) and closes it.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let state = state
        if server.loop.inLoop {
            state.beginStopping()
        } else {
            let stopping = DispatchSemaphore(value: 0)
            server.loop.execute {
                state.beginStopping()
                stopping.signal()
            }
            _ = stopping.wait(timeout: .now() + .seconds(5))
        }
        server.shutdown()
        // Its leases and its registration go: the other nodes take its rooms over at once, and its people leave.
        state.cluster?.stop()
        state.media?.stop()
        state.persistence.close(timeout: .seconds(10))
        state.door.registry?.close()
    }
}

/// The server's parts for what is made before them (the media's level reports, the store's reports), which
/// reach them on the loop once they exist.
final class ServerStateReference: Sendable {
    private let value = Mutex<ServerState?>(nil)

    func set(_ state: ServerState) { value.withLock { $0 = state } }

    var state: ServerState? { value.withLock { $0 } }
}
