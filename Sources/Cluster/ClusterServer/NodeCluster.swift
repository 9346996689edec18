import ClusterState
import MediaRelay
import MediaTransport
import RedisClient
import RoomServer
import Synchronization

/// How a server joins a cluster: its Redis, and its name among the nodes.
public struct ClusterSettings: Sendable {
    public var redis: RedisEndpoint
    /// Unique among the running nodes (1-64 letters, digits, `-`, `_` or `.`).
    public var node: String
    public var timing: ClusterTiming
    /// Where media from other nodes is received (UDP); port 0 picks a free port.
    public var relayHost: String
    public var relayPort: Int
    /// The cluster's shared secret, from which every node's relay keys derive; `nil` uses the token secret
    /// (which the nodes share anyway).
    public var secret: [UInt8]?

    public init(
        redis: RedisEndpoint, node: String, timing: ClusterTiming = ClusterTiming(), relayHost: String = "127.0.0.1",
        relayPort: Int = 0, secret: [UInt8]? = nil
    ) {
        self.redis = redis
        self.node = node
        self.timing = timing
        self.relayHost = relayHost
        self.relayPort = relayPort
        self.secret = secret
    }
}

/// A server's cluster (`ServerCluster`): its node in Redis, its media relay and its rooms (`ClusterRooms`).
/// `clubroom serve --cluster` makes one and gives it to `RoomServerRuntime`, which takes the steps in order.
public final class NodeCluster: ServerCluster {
    public let settings: ClusterSettings
    /// Set once, by `prepare` and `rooms`, before the server's loop runs; read on the loop after.
    private let parts = Mutex<Parts>(Parts())

    private struct Parts: @unchecked Sendable {
        var node: ClusterNode?
        var relay: MediaRelay?
        var rooms: ClusterRooms?
        var secret: [UInt8] = []
    }

    public init(_ settings: ClusterSettings) {
        self.settings = settings
    }

    package func prepare(
        media: ServerMedia?, tokenSecret: [UInt8], host: String, loop: LoopReference, log: ServerLog
    ) throws(ServerStartError) {
        let incarnation = UInt64.random(in: 1...UInt64(Int64.max))
        let secret = settings.secret ?? tokenSecret
        var relay: MediaRelay?
        if let media {
            relay = try Self.relay(settings, incarnation: incarnation, secret: secret, media: media, log: log)
            media.relay = relay
        }
        let node = ClusterNode(
            configuration: ClusterConfiguration(
                redis: settings.redis, node: settings.node, incarnation: incarnation,
                mediaAddress: media.map {
                    "\($0.configuration.publicAddress ?? $0.configuration.bindHost):\($0.forwarder.socket.localAddress.port)"
                } ?? "",
                relayAddress: relay.map { "\($0.socket.localAddress)" } ?? "",
                sourceAddress: host == "0.0.0.0" ? nil : host, timing: settings.timing),
            deliver: { task in loop.execute(task) },
            notify: { [weak self] notice in self?.parts.withLock { $0.rooms }?.notice(notice) })
        parts.withLock {
            $0.node = node
            $0.relay = relay
            $0.secret = secret
        }
    }

    package func rooms(_ parts: RoomsParts) -> any RoomPaths {
        let (node, relay, secret) = self.parts.withLock { ($0.node, $0.relay, $0.secret) }
        guard let node else { preconditionFailure("the cluster's rooms are made after it is prepared") }
        let rooms = ClusterRooms(parts, cluster: node, relay: relay, seal: ClusterSeal(secret: secret))
        self.parts.withLock { $0.rooms = rooms }
        return rooms
    }

    package func start(media: ServerMedia?, log: ServerLog) throws(ServerStartError) {
        let (node, relay) = parts.withLock { ($0.node, $0.relay) }
        guard let node else { preconditionFailure("the cluster starts after it is prepared") }
        do throws(ClusterError) {
            try node.start()
        } catch {
            let problem: String
            if case .unavailable(let redis) = error {
                problem = redis.description
            } else {
                problem = error.description
            }
            throw ServerStartError(place: "cluster", problem: problem)
        }
        let slot = node.record.slot
        media?.clusterSSRC = { SSRCSpace.ssrc(slot: slot) }
        relay?.start()
        log.info(
            "node \(settings.node) of the cluster at \(settings.redis) (slot \(node.record.slot)"
                + (relay.map { ", media from other nodes on \($0.socket.localAddress)" } ?? "") + ")")
    }

    package func stop() {
        parts.withLock { $0.node }?.stop()
    }

    /// Binds the socket other nodes relay media to.
    static func relay(
        _ settings: ClusterSettings, incarnation: UInt64, secret: [UInt8], media: ServerMedia, log: ServerLog
    ) throws(ServerStartError) -> MediaRelay {
        guard let address = UDPAddress(host: settings.relayHost, port: UInt16(clamping: settings.relayPort)) else {
            throw ServerStartError(place: "relay address \(settings.relayHost)", problem: "not an IPv4 address")
        }
        do {
            return try MediaRelay(
                node: settings.node, incarnation: incarnation, secret: secret, binding: address,
                forwarder: media.forwarder, log: { line in log.warning(line) })
        } catch {
            throw ServerStartError(place: "relay \(address)", problem: error.description)
        }
    }
}

extension MediaRelay: RemoteMedia {
    package var countersText: String {
        counters.snapshot().filter { $0.value != 0 }.map { "\($0.name)=\($0.value)" }.joined(separator: " ")
    }
}
