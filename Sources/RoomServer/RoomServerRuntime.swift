import Crypto
import Dispatch
import Foundation
import MediaServer
import MediaTransport
import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTransport

/// Everything `clubroom serve` is configured with.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; `RoomServerRuntime.port` tells which.
    public var port: Int
    /// The folder holding the SQLite database.
    public var dataDirectory: String
    /// The file holding the token secret; created with mode 0600 when missing.
    public var secretFile: String
    public var tls: TLSServerConfiguration?
    public var roles: RoleTable
    public var maxPeersPerRoom: Int
    /// The burst of requests a connection may send at once.
    public var rateBurst: Double
    /// The sustained requests per second a connection may send.
    public var ratePerSecond: Double
    public var pingInterval: Duration
    public var idleTimeout: Duration
    /// Where media is received over UDP; `nil` serves rooms without audio.
    public var media: MediaConfiguration?

    public init(
        host: String = "127.0.0.1", port: Int = 7480, dataDirectory: String, secretFile: String,
        tls: TLSServerConfiguration? = nil, roles: RoleTable, maxPeersPerRoom: Int = RoomAuthority.defaultMaxPeers,
        rateBurst: Double = 20, ratePerSecond: Double = 10, pingInterval: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(15), media: MediaConfiguration? = nil
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.secretFile = secretFile
        self.tls = tls
        self.roles = roles
        self.maxPeersPerRoom = maxPeersPerRoom
        self.rateBurst = rateBurst
        self.ratePerSecond = ratePerSecond
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.media = media
    }
}

/// Why the server could not start: which part, and what went wrong.
public typealias ServerStartError = PlacedError

/// Close codes the server uses for its own reasons (see `docs/protocol.md`).
enum ServerClose {
    static let tokenMissing = (code: UInt16(4000), reason: "No token: send it as Authorization: Bearer or ?token=.")

    static func reason(_ close: CloseReason) -> String {
        switch close {
        case .left: "left"
        case .roomEnded: "The room has ended."
        case .roomFull: "The room is full."
        case .replaced: "The same identity connected again elsewhere."
        case .removed: "You were removed from this room."
        }
    }
}

/// The room server: WebSocket connections in, rooms checked and changed by `RoomAuthority`, events out,
/// changes written to SQLite.
///
/// Threads: every connection callback and every room runs on the transport's one event-loop thread, so rooms
/// need no locks; database writes go to a serial queue of their own so a slow disk never stalls the rooms.
public final class RoomServerRuntime: Sendable {
    /// The port the server listens on.
    public let port: Int
    private let server: WebSocketServer
    private let state: ServerState

    /// Opens the database, loads or creates the secret, and starts listening.
    public init(configuration: ServerConfiguration, log: ServerLog) throws(ServerStartError) {
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.dataDirectory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerStartError(
                place: "data directory \(configuration.dataDirectory)", problem: error.localizedDescription)
        }
        let secret: TokenSecret
        do {
            secret = try SecretFile.loadOrCreate(at: configuration.secretFile)
        } catch {
            throw ServerStartError(place: "secret file", problem: error.description)
        }
        let database: RoomDatabase
        do {
            database = try RoomDatabase(
                path: (configuration.dataDirectory as NSString).appendingPathComponent(RoomDatabase.fileName))
        } catch {
            throw ServerStartError(place: "database", problem: error.description)
        }
        let state = ServerState(
            configuration: configuration, verifier: TokenVerifier(secret: secret), database: database, log: log)
        if let media = configuration.media {
            state.media = try ServerMedia.start(media, state: state, log: log)
        }
        var options = WebSocketOptions()
        options.maxMessageSize = ControlLimits.maxFrameBytes
        options.pingInterval = configuration.pingInterval
        options.idleTimeout = configuration.idleTimeout
        let handler = WebSocketServer.Handler(
            onUpgrade: { request, _ in
                guard let room = request.room, RoomServerRuntime.isValidRoomName(room) else {
                    return .reject(status: 404, reason: "no room here: the path must be /rooms/ROOM")
                }
                return .accept
            },
            onOpen: { connection in state.opened(connection) },
            onMessage: { connection, payload in state.received(payload, on: connection) },
            onClose: { connection, code, reason in state.closed(connection, code: code, reason: reason) },
            onFailedHandshake: { address, problem in
                log.info("connection from \(address) ended before it opened: \(problem)")
            })
        do {
            server = try WebSocketServer(
                host: configuration.host, port: configuration.port, tls: configuration.tls, options: options,
                handler: handler)
        } catch {
            // The transport's error already names its place (the address, or the TLS file that failed).
            throw ServerStartError(place: error.place, problem: error.problem)
        }
        self.state = state
        state.mediaLoop.set(server.loop)
        port = server.port
        let loop = server.loop
        loop.execute { state.loop = loop }
        // A thread name shows in top -H and /proc, where operators look for what is busy.
        server.loop.execute { nameCurrentThread("room-server") }
        let scheme = configuration.tls == nil ? "ws" : "wss"
        log.info("listening on \(scheme)://\(configuration.host):\(port)/rooms/ROOM, data in \(database.path)")
    }

    /// A room name: 1 to 64 bytes of letters, digits, `-`, `_` and `.`.
    public static func isValidRoomName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
    }

    /// Takes audio levels (0–100) measured by the media path for peers of a room and announces those that
    /// changed in a `speakers` event. May be called from any thread.
    public func updateLevels(room: String, _ levels: [PeerID: Int]) {
        let state = state
        server.loop.execute {
            guard var authority = state.rooms[room] else { return }
            let outcome = authority.updateLevels(levels)
            state.rooms[room] = authority
            state.perform(outcome, in: room)
        }
    }

    /// Closes every connection with 1001 and waits for pending database writes.
    public func shutdown() {
        server.shutdown()
        state.stopMedia()
        state.flush()
    }
}

/// Names the calling thread (at most 15 bytes show) for `top -H` and `/proc`; best effort.
public func nameCurrentThread(_ name: String) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY)
    guard descriptor >= 0 else { return }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
}

/// The state of one open connection; loop thread only.
final class ConnectionEntry {
    let connection: WebSocketConnection
    var room: String?
    var peer: PeerID?
    var bucket: LeakyBucket
    /// Set after a dropped message was answered with `rate_limited`, so a flood gets one answer per burst.
    var throttled = false

    init(connection: WebSocketConnection, bucket: LeakyBucket) {
        self.connection = connection
        self.bucket = bucket
    }
}

/// Rooms and connections. Every method but `flush` runs on the event loop's thread only, which is what makes
/// the unchecked sendability safe: nothing here is touched from two threads.
final class ServerState: @unchecked Sendable {
    let configuration: ServerConfiguration
    let verifier: TokenVerifier
    let database: RoomDatabase
    let log: ServerLog
    /// Database writes, in order, off the event loop.
    let writes = DispatchQueue(label: "clubroom.server.database")
    /// Media forwarding, when the server serves audio (set once, before the first connection).
    var media: ServerMedia?
    /// The event loop for the media thread's active speakers (set once the server listens).
    let mediaLoop = LoopReference()

    var rooms: [String: RoomAuthority] = [:]
    /// The loop everything here runs on, once known; joins are announced on its timers.
    var loop: EventLoop?
    /// Joins not yet announced, per room, in order; see `queueJoin`.
    var pendingJoins: [String: [ServerMessage]] = [:]
    var joinFlushScheduled: Set<String> = []
    /// How long joins are gathered before they are announced together.
    static let joinAnnouncementWindow: Duration = .milliseconds(50)
    var entries: [Int: ConnectionEntry] = [:]
    /// The connection each peer of each room speaks through.
    var members: [String: [PeerID: ConnectionEntry]] = [:]

    init(configuration: ServerConfiguration, verifier: TokenVerifier, database: RoomDatabase, log: ServerLog) {
        self.configuration = configuration
        self.verifier = verifier
        self.database = database
        self.log = log
    }

    func flush() {
        writes.sync {}
    }

    // MARK: Connections

    func opened(_ connection: WebSocketConnection) {
        guard let request = connection.request, let roomName = request.room else {
            connection.close(code: .policyViolation, reason: "no room")
            return
        }
        guard let token = request.bearerToken, !token.isEmpty else {
            log.info("\(connection): refused, no token")
            connection.close(
                code: WebSocketCloseCode(ServerClose.tokenMissing.code), reason: ServerClose.tokenMissing.reason)
            return
        }
        let now = currentTimestamp()
        let roles = configuration.roles
        let claims: TokenClaims
        do {
            claims = try verifier.verify(token, room: roomName, now: now / 1000) { roles.contains(RoleName($0)) }
        } catch {
            log.info("\(connection): refused token for room \(roomName): \(error)")
            connection.close(code: WebSocketCloseCode(error.closeCode), reason: error.closeReason)
            return
        }
        guard claims.subject.utf8.count <= ControlLimits.maxIdentityBytes, !claims.subject.isEmpty else {
            connection.close(code: WebSocketCloseCode(4001), reason: "The token's identity is empty or too long.")
            return
        }
        let id = PeerID(claims.subject)
        var room = loadRoom(roomName, now: now)
        var remembered: RoleName?
        if room.departed[id] == nil, room.peers[id] == nil,
            let role = try? database.recentRole(
                room: roomName, identity: id.rawValue, within: RoomAuthority.reconnectGrace, now: now)
        {
            remembered = RoleName(role)
        }
        let result = room.join(id: id, name: claims.name, role: RoleName(claims.role), now: now, remembered: remembered)
        rooms[roomName] = room
        switch result {
        case .refused(let reason):
            log.info("\(connection): \(id) refused from room \(roomName): \(reason.rawValue)")
            connection.close(code: WebSocketCloseCode(reason.code), reason: ServerClose.reason(reason))
        case .joined(let snapshot, let outcome, let replaced):
            let entry = ConnectionEntry(
                connection: connection,
                bucket: LeakyBucket(capacity: configuration.rateBurst, drainPerSecond: configuration.ratePerSecond))
            entry.room = roomName
            entry.peer = id
            entries[connection.id] = entry
            if replaced, let previous = members[roomName]?[id] {
                previous.peer = nil
                previous.room = nil
                previous.connection.close(
                    code: WebSocketCloseCode(CloseReason.replaced.code), reason: ServerClose.reason(.replaced))
            }
            members[roomName, default: [:]][id] = entry
            connection.send(text: String(decoding: ControlCodec.encode(snapshot), as: UTF8.self))
            media?.joined(id, room: room, connection: connection)
            log.info(
                "\(connection): \(id) joined room \(roomName) as \(room.peers[id]?.role.rawValue ?? "?")\(replaced ? " (replacing an older connection)" : "")"
            )
            perform(outcome, in: roomName)
        }
    }

    func received(_ payload: WebSocketPayload, on connection: WebSocketConnection) {
        guard let entry = entries[connection.id], let roomName = entry.room, let peer = entry.peer else { return }
        // Media on the WebSocket fallback comes 50 times a second: it is not a request, so not rate limited.
        if case .binary(let bytes) = payload, let media {
            media.receivedBinary(bytes, from: peer, room: roomName)
            return
        }
        let now = currentTimestamp()
        guard entry.bucket.allow(nowMilliseconds: now) else {
            if !entry.throttled {
                entry.throttled = true
                log.warning("\(connection): \(peer) in \(roomName) is rate limited")
                send(
                    ServerMessage(
                        .error(
                            code: .rateLimited,
                            message: "too many messages: this one and the next are dropped until the rate falls",
                            id: nil), seq: nil), to: entry)
            }
            return
        }
        entry.throttled = false
        let message: ClientMessage
        switch payload {
        case .binary:
            send(
                ServerMessage(
                    .error(code: .badRequest, message: "binary messages are reserved for media", id: nil), seq: nil),
                to: entry)
            return
        case .text(let text):
            do {
                message = try ControlCodec.decodeClient(Array(text.utf8))
            } catch {
                if error.code == .unknownType, let media,
                    case .mediaPath(let path)? = try? MediaSignalCodec.decode(text)
                {
                    media.reportedPath(path, from: peer, room: roomName)
                    return
                }
                send(ServerMessage(.error(code: error.code, message: error.message, id: error.id), seq: nil), to: entry)
                return
            }
        }
        guard var room = rooms[roomName] else { return }
        let outcome = room.handle(Self.request(message.request), from: peer, id: message.id, now: now)
        rooms[roomName] = room
        if let error = outcome.error {
            send(error, to: entry)
        }
        perform(outcome, in: roomName)
    }

    func closed(_ connection: WebSocketConnection, code: WebSocketCloseCode, reason: String) {
        guard let entry = entries.removeValue(forKey: connection.id) else { return }
        guard let roomName = entry.room, let peer = entry.peer, members[roomName]?[peer] === entry else { return }
        members[roomName]?[peer] = nil
        guard var room = rooms[roomName] else { return }
        let leaveReason: LeaveReason = code == .normal ? .left : .disconnected
        let outcome = room.leave(peer, reason: leaveReason, now: currentTimestamp())
        rooms[roomName] = room
        log.info("\(connection): \(peer) left room \(roomName) (\(code) \(reason))")
        perform(outcome, in: roomName)
    }

    // MARK: Rooms

    func loadRoom(_ name: String, now: Int64) -> RoomAuthority {
        if let room = rooms[name] { return room }
        var topic = ""
        var ended = false
        var chat: [WireChat] = []
        do {
            let record = try database.openRoom(name, at: now)
            topic = record.topic
            ended = record.isEnded
            chat = try database.recentChat(room: name, limit: ControlLimits.chatHistory).map(Self.wire)
        } catch {
            log.error("room \(name): could not load from the database: \(error)")
        }
        // Sequence numbers start from the clock so they never go back after a restart (clients ignore older ones).
        let room = RoomAuthority(
            name: name, roles: configuration.roles, topic: topic, ended: ended, seq: now * 1000, chat: chat,
            maxPeers: configuration.maxPeersPerRoom)
        rooms[name] = room
        log.info("room \(name) loaded\(ended ? " (ended)" : "")")
        return room
    }

    /// Gathers a join's announcement with the others of the next 50 ms, so that a room filling quickly sends
    /// one `peers_joined` per window instead of one message per joiner to every member.
    func queueJoin(_ message: ServerMessage, in roomName: String) {
        pendingJoins[roomName, default: []].append(message)
        guard !joinFlushScheduled.contains(roomName) else { return }
        guard let loop else {
            flushJoins(in: roomName)
            return
        }
        joinFlushScheduled.insert(roomName)
        loop.schedule(after: Self.joinAnnouncementWindow) { [self] in
            joinFlushScheduled.remove(roomName)
            flushJoins(in: roomName)
        }
    }

    /// Announces the gathered joins of a room; called before anything else is sent there, to keep the order.
    func flushJoins(in roomName: String) {
        guard let pending = pendingJoins.removeValue(forKey: roomName), let last = pending.last else { return }
        let roomMembers = members[roomName] ?? [:]
        let peers = pending.compactMap { message -> WirePeer? in
            if case .peerJoined(let peer) = message.event { return peer }
            return nil
        }
        if peers.count == 1 {
            let text = String(decoding: ControlCodec.encode(last), as: UTF8.self)
            for (id, entry) in roomMembers where id.rawValue != peers[0].id { entry.connection.send(text: text) }
        } else {
            let text = String(
                decoding: ControlCodec.encode(ServerMessage(.peersJoined(peers), seq: last.seq)), as: UTF8.self)
            for entry in roomMembers.values { entry.connection.send(text: text) }
        }
    }

    /// Sends an outcome's deliveries, closes its connections and queues its database writes.
    func perform(_ outcome: Outcome, in roomName: String) {
        media?.apply(outcome, room: rooms[roomName], roomName: roomName)
        let roomMembers = members[roomName] ?? [:]
        for delivery in outcome.deliveries {
            if case .peerJoined = delivery.message.event {
                queueJoin(delivery.message, in: roomName)
                continue
            }
            if pendingJoins[roomName] != nil { flushJoins(in: roomName) }
            let text = String(decoding: ControlCodec.encode(delivery.message), as: UTF8.self)
            switch delivery.to {
            case .everyone:
                for entry in roomMembers.values { entry.connection.send(text: text) }
            case .everyoneExcept(let excluded):
                for (id, entry) in roomMembers where id != excluded { entry.connection.send(text: text) }
            case .peer(let id):
                roomMembers[id]?.connection.send(text: text)
            case .peers(let ids):
                for id in ids { roomMembers[id]?.connection.send(text: text) }
            }
        }
        for (peer, reason) in outcome.closes {
            guard let entry = members[roomName]?.removeValue(forKey: peer) else { continue }
            entry.room = nil
            entry.peer = nil
            entry.connection.close(code: WebSocketCloseCode(reason.code), reason: ServerClose.reason(reason))
        }
        guard !outcome.changes.isEmpty else { return }
        let changes = outcome.changes
        let database = database
        let log = log
        writes.async {
            for change in changes {
                do {
                    try Self.store(change, room: roomName, in: database)
                } catch {
                    log.error("room \(roomName): could not save \(change): \(error)")
                }
            }
        }
    }

    static func store(_ change: StoreChange, room: String, in database: RoomDatabase) throws(DatabaseError) {
        let now = currentTimestamp()
        switch change {
        case .topic(let topic): _ = try database.setTopic(room, topic: topic, at: now)
        case .ended(let reason): _ = try database.endRoom(room, reason: reason, at: now)
        case .reopened: _ = try database.reopenRoom(room, at: now)
        case .chat(let chat, let fromName):
            let audience: ChatAudienceRecord =
                switch chat.to {
                case .everyone: .everyone
                case .peer(let id): .peer(id)
                case .role(let role): .role(role)
                }
            try database.appendChat(
                room: room, at: chat.at, fromIdentity: chat.from, fromName: fromName, audience: audience,
                text: chat.text)
        case .audit(let entry):
            try database.appendAudit(
                room: room, at: entry.at, actor: entry.actor.rawValue, action: entry.action,
                target: entry.target?.rawValue, detail: entry.detail.isEmpty ? nil : entry.detail)
        case .departed(let id, let role, let at):
            try database.rememberRole(room: room, identity: id.rawValue, role: role.rawValue, leftAt: at)
        }
    }

    func send(_ message: ServerMessage, to entry: ConnectionEntry) {
        entry.connection.send(text: String(decoding: ControlCodec.encode(message), as: UTF8.self))
    }

    static func wire(_ record: ChatRecord) -> WireChat {
        let to: ChatTarget =
            switch record.audience {
            case .everyone: .everyone
            case .peer(let id): .peer(id)
            case .role(let role): .role(role)
            }
        return WireChat(from: record.fromIdentity, name: record.fromName, text: record.text, at: record.at, to: to)
    }

    /// The room model's form of a wire request.
    static func request(_ request: WireRequest) -> ClientRequest {
        switch request {
        case .raiseHand: .raiseHand
        case .lowerHand: .lowerHand
        case .invite(let peer): .invite(PeerID(peer))
        case .acceptInvite: .acceptInvite
        case .declineInvite: .declineInvite
        case .setRole(let peer, let role): .setRole(PeerID(peer), RoleName(role))
        case .stepDown: .stepDown
        case .setMute(let muted): .setMute(muted)
        case .mutePeer(let peer): .mutePeer(PeerID(peer))
        case .remove(let peer, let reason): .remove(PeerID(peer), reason: reason)
        case .setTopic(let text): .setTopic(text)
        case .endRoom(let reason): .endRoom(reason: reason)
        case .chat(let text, let to):
            switch to {
            case .everyone: .chat(text, to: .everyone)
            case .peer(let peer): .chat(text, to: .peer(PeerID(peer)))
            case .role(let role): .chat(text, to: .role(RoleName(role)))
            }
        case .leave: .leave
        }
    }
}
