import Crypto
import MediaServer
import MediaTransport
import MediaWire
import RoomCore
import RoomProtocol
import RoomTransport
import Synchronization

/// Where the server receives media, and the address it tells clients to send to.
public struct MediaConfiguration: Sendable, Equatable {
    /// The address the UDP socket binds to; port 0 picks a free port.
    public var bindHost: String
    public var port: Int
    /// The IPv4 address clients are told to send to (`--public-address`); nil lets `MediaAddressPolicy` choose
    /// per connection.
    public var publicAddress: String?

    public init(bindHost: String = "127.0.0.1", port: Int = 0, publicAddress: String? = nil) {
        self.bindHost = bindHost
        self.port = port
        self.publicAddress = publicAddress
    }
}

/// The room server's side of media: assigns each connection an SSRC and keys, keeps the forwarder's publish
/// gates in step with the rooms' outcomes (their gates and departures), and rotates a room's key when someone
/// leaves (once per outcome, however many it announces leaving).
///
/// Runs on the server's event-loop thread only (like `ServerState`, which owns it).
package final class ServerMedia: OutcomeConsumer {
    package let forwarder: MediaForwarder
    package let configuration: MediaConfiguration
    let log: ServerLog

    struct Flow {
        var ssrc: UInt32
        var gate: PublishGate
        var connection: WebSocketConnection
    }

    /// A speaker of a room connected to another node of the cluster: its packets come through the relay,
    /// checked against this node's copy of its gate.
    struct RemoteSpeaker {
        var ssrc: UInt32
        var gate: PublishGate
    }

    private var flows: [String: [PeerID: Flow]] = [:]
    private var remote: [String: [PeerID: RemoteSpeaker]] = [:]
    private var reserved: [String: [PeerID: UInt32]] = [:]
    private var roomKeys: [String: (key: SRTPKey, epoch: Int)] = [:]
    private var usedSSRCs: Set<UInt32> = []
    /// Media between this node and the other nodes of its cluster, which the cluster attaches.
    package var relay: (any RemoteMedia)?
    /// Where SSRCs come from in a cluster, which carries this node's slot in their top byte so that no two nodes
    /// hand out the same one; nil (a server alone) picks them at random.
    package var clusterSSRC: (() -> UInt32)?
    /// Where keys come from: OpenSSL's generator, or nil when it fails (a test puts a failing source here).
    var randomKey: () -> SRTPKey?

    init(
        forwarder: MediaForwarder, configuration: MediaConfiguration, log: ServerLog,
        randomKey: @escaping () -> SRTPKey? = ServerMedia.secureRandomKey
    ) {
        self.forwarder = forwarder
        self.configuration = configuration
        self.log = log
        self.randomKey = randomKey
    }

    /// A peer joined (or replaced its connection): a fresh SSRC and send key, and the `media` message.
    func joined(_ peer: PeerID, room: String, mayPublish: Bool, connection: WebSocketConnection) {
        guard let roomKey = roomKey(for: room), let sendKey = randomKey() else {
            log.error("room \(room): no random bytes for media keys; \(peer) joins without media")
            return
        }
        if let old = flows[room]?[peer] { forwarder.removePeer(ssrc: old.ssrc) }
        let ssrc = reserved[room]?.removeValue(forKey: peer) ?? newSSRC()
        let flow = Flow(ssrc: ssrc, gate: PublishGate(mayPublish), connection: connection)
        flows[room, default: [:]][peer] = flow
        forwarder.add(
            MediaPeer(
                room: room, peer: peer.rawValue, ssrc: ssrc, uplinkKey: sendKey, gate: flow.gate,
                webSocketSink: { [connection] bytes in connection.send(realTime: bytes) }))
        let host = MediaAddressPolicy.host(
            publicAddress: configuration.publicAddress, bindHost: configuration.bindHost,
            facts: MediaAddressPolicy.Facts(connection))
        if host == nil {
            log.info(
                "room \(room): \(peer) reached the server from \(connection.remoteAddress) through loopback; no media "
                    + "address it can reach is known, so its media goes over the WebSocket (set --public-address)")
        }
        let offer = MediaOffer(
            host: host ?? "", port: host == nil ? 0 : Int(forwarder.socket.localAddress.port), ssrc: ssrc,
            serverSSRC: forwarder.serverSSRC, sendKey: sendKey.bytes, roomKey: roomKey.key.bytes,
            epoch: roomKey.epoch, redPayloadType: Int(RTPAudioProfile.redPayloadType))
        connection.send(text: MediaSignalCodec.encode(.media(offer)))
        let publishing =
            (flows[room] ?? [:]).filter { $0.value.gate.isOpen }
            .map { MediaSource(peer: $0.key.rawValue, ssrc: $0.value.ssrc) }
            + (remote[room] ?? [:]).filter { $0.value.gate.isOpen }
            .map { MediaSource(peer: $0.key.rawValue, ssrc: $0.value.ssrc) }
        if !publishing.isEmpty {
            connection.send(text: MediaSignalCodec.encode(.mediaSources(publishing.sorted { $0.peer < $1.peer })))
        }
        // A speaker who replaced a connection while on stage and unmuted publishes at once with a new SSRC: the
        // others learn it now, since no mute change will tell them (their local volumes follow the identity).
        if flow.gate.isOpen {
            let text = MediaSignalCodec.encode(.mediaSources([MediaSource(peer: peer.rawValue, ssrc: ssrc)]))
            for (other, otherFlow) in flows[room] ?? [:] where other != peer {
                otherFlow.connection.send(text: text)
            }
        }
    }

    /// Applies what an outcome changed, before its messages go out: gates first, so a demoted or muted speaker
    /// is cut off before anyone hears of the change; then the departures it announces.
    package func consume(_ outcome: Outcome, in roomName: String) {
        for change in outcome.gates {
            if let speaker = remote[roomName]?[change.peer] {
                let wasOpen = speaker.gate.isOpen
                speaker.gate.set(change.open)
                if !wasOpen, change.open { announce(change.peer, ssrc: speaker.ssrc, in: roomName) }
                continue
            }
            guard let flow = flows[roomName]?[change.peer] else { continue }
            let wasOpen = flow.gate.isOpen
            flow.gate.set(change.open)
            if !wasOpen, flow.gate.isOpen {
                // Everyone learns the new speaker's SSRC, so clients can name what they hear.
                let prepared = PreparedMessage(
                    text: MediaSignalCodec.encode(
                        .mediaSources([MediaSource(peer: change.peer.rawValue, ssrc: flow.ssrc)])))
                for other in flows[roomName]?.values ?? [:].values { other.connection.sendLater(prepared) }
            }
        }
        var departed: [PeerID] = []
        var ended = false
        for delivery in outcome.deliveries {
            switch delivery.message.event {
            case .peerLeft(let peer, _), .removed(let peer, _, _):
                departed.append(peer)
            case .peersLeft(let departures):
                departed.append(contentsOf: departures.map(\.peer))
            case .roomEnded:
                ended = true
            default:
                continue
            }
        }
        if ended {
            closeRoom(roomName)
            for speaker in remote.removeValue(forKey: roomName)?.values ?? [:].values { speaker.gate.set(false) }
            relay?.closeRoom(roomName)
            return
        }
        guard !departed.isEmpty else { return }
        var localDeparted = false
        for peer in departed {
            if let speaker = remote[roomName]?.removeValue(forKey: peer) {
                speaker.gate.set(false)
                relay?.removeRemoteSpeaker(ssrc: speaker.ssrc)
            }
            guard let flow = flows[roomName]?.removeValue(forKey: peer) else { continue }
            flow.gate.set(false)
            forwarder.removePeer(ssrc: flow.ssrc)
            usedSSRCs.remove(flow.ssrc)
            localDeparted = true
        }
        // Only this node's people ever held its room key: only their departures need a new one.
        guard localDeparted else { return }
        if flows[roomName]?.isEmpty ?? true {
            closeRoom(roomName)
        } else {
            rotateKey(roomName)
        }
    }

    // MARK: Across the cluster

    /// An SSRC for a peer about to join through this node, carried in its join so every node knows it; the
    /// peer's flow takes it when it is admitted.
    package func reserveSSRC(for peer: PeerID, room: String) -> UInt32 {
        let ssrc = newSSRC()
        reserved[room, default: [:]][peer] = ssrc
        return ssrc
    }

    /// A peer of this node joined again through another node: its flow here ends (its connection is closed).
    package func moved(_ peer: PeerID, room: String) {
        guard let flow = flows[room]?.removeValue(forKey: peer) else { return }
        flow.gate.set(false)
        forwarder.removePeer(ssrc: flow.ssrc)
        usedSSRCs.remove(flow.ssrc)
    }

    /// Forgets a reservation whose join did not happen.
    package func release(_ peer: PeerID, room: String) {
        if let ssrc = reserved[room]?.removeValue(forKey: peer) { usedSSRCs.remove(ssrc) }
    }

    /// A peer of `room` joined through another node (`node`, of incarnation `incarnation`) with `ssrc`: its media
    /// comes through the relay while this node's copy of the room lets it publish.
    package func addRemoteSpeaker(_ peer: PeerID, ssrc: UInt32, node: String, room: String, open: Bool) {
        if let old = remote[room]?[peer] {
            old.gate.set(false)
            relay?.removeRemoteSpeaker(ssrc: old.ssrc)
        }
        let speaker = RemoteSpeaker(ssrc: ssrc, gate: PublishGate(open))
        remote[room, default: [:]][peer] = speaker
        relay?.addRemoteSpeaker(ssrc: ssrc, room: room, node: node, gate: speaker.gate)
        if open { announce(peer, ssrc: ssrc, in: room) }
    }

    /// A peer that was connected to another node is now connected here (or gone): no longer a remote speaker.
    package func removeRemoteSpeaker(_ peer: PeerID, room: String) {
        guard let speaker = remote[room]?.removeValue(forKey: peer) else { return }
        speaker.gate.set(false)
        relay?.removeRemoteSpeaker(ssrc: speaker.ssrc)
    }

    /// Tells this node's people of `room` which SSRC a speaker who may now be heard sends with.
    private func announce(_ peer: PeerID, ssrc: UInt32, in room: String) {
        let prepared = PreparedMessage(
            text: MediaSignalCodec.encode(.mediaSources([MediaSource(peer: peer.rawValue, ssrc: ssrc)])))
        for flow in flows[room]?.values ?? [:].values { flow.connection.sendLater(prepared) }
    }

    /// A binary WebSocket message: an SRTP or SRTCP packet on the fallback path.
    func receivedBinary(_ bytes: [UInt8], from peer: PeerID, room: String) {
        guard let flow = flows[room]?[peer], bytes.count <= 1500 else { return }
        forwarder.receivedOverWebSocket(bytes, ssrc: flow.ssrc)
    }

    /// The client says which path its media takes (logged, so an operator sees who falls back) and whether it
    /// takes RFC 2198 redundancy, which it then gets from the next packet on.
    func reportedPath(_ path: MediaPathKind, takesRED: Bool, from peer: PeerID, room: String) {
        log.info("room \(room): \(peer) sends media over \(path.rawValue)\(takesRED ? ", takes RED" : "")")
        if takesRED, let flow = flows[room]?[peer] { forwarder.setTakesRED(ssrc: flow.ssrc) }
    }

    /// The current counters, for the log.
    var countersText: String {
        forwarder.counters.snapshot().filter { $0.value != 0 }.map { "\($0.name)=\($0.value)" }.joined(separator: " ")
    }

    // MARK: Keys

    /// A new room key, so that whoever left can no longer decrypt what the room says next; sent to everyone
    /// still in the room over their control connection.
    private func rotateKey(_ room: String) {
        guard let key = randomKey() else {
            // Going on under the old key would let whoever just left hear the room: its audio stops instead, and
            // the next join starts it again under a new key.
            log.error(
                "room \(room): no random bytes for a new room key (OpenSSL's generator failed); the room's audio "
                    + "stops, since whoever left still holds the old key")
            closeRoom(room)
            return
        }
        let epoch = (roomKeys[room]?.epoch ?? 0) + 1
        roomKeys[room] = (key, epoch)
        forwarder.setRoomKey(key, epoch: epoch, room: room)
        let prepared = PreparedMessage(text: MediaSignalCodec.encode(.mediaKey(roomKey: key.bytes, epoch: epoch)))
        for flow in flows[room]?.values ?? [:].values { flow.connection.sendLater(prepared) }
    }

    private func roomKey(for room: String) -> (key: SRTPKey, epoch: Int)? {
        if let existing = roomKeys[room] {
            // A stream that wrapped under this key has a rollover counter a newcomer cannot know: everyone gets a
            // new key first, under which every stream starts again (at most once per wrap).
            guard forwarder.takeWrapped(room) else { return existing }
            rotateKey(room)
            return roomKeys[room]
        }
        guard let key = randomKey() else { return nil }
        roomKeys[room] = (key, 1)
        forwarder.setRoomKey(key, epoch: 1, room: room)
        return (key, 1)
    }

    private func closeRoom(_ room: String) {
        for flow in flows.removeValue(forKey: room)?.values ?? [:].values {
            flow.gate.set(false)
            usedSSRCs.remove(flow.ssrc)
        }
        roomKeys[room] = nil
        forwarder.closeRoom(room)
    }

    private func newSSRC() -> UInt32 {
        while true {
            // Even: the odd SSRC beside each is its stream for listeners who take RED (MediaForwarder.redSSRC).
            let ssrc = (clusterSSRC?() ?? UInt32.random(in: 0x1000...0xFFFF_FFF0)) & ~1
            if ssrc != forwarder.serverSSRC, usedSSRCs.insert(ssrc).inserted { return ssrc }
        }
    }

    static func secureRandomKey() -> SRTPKey? {
        (try? SecureRandom.bytes(SRTPKey.length)).flatMap(SRTPKey.init(bytes:))
    }
}

/// The server's event loop, known only once the server listens; the media thread hands work to it.
package final class LoopReference: Sendable {
    private let loop = Mutex<EventLoop?>(nil)

    func set(_ value: EventLoop) { loop.withLock { $0 = value } }

    package func execute(_ task: @escaping @Sendable () -> Void) {
        loop.withLock { $0 }?.execute(task)
    }
}

extension ServerMedia {
    /// Binds the media socket and starts forwarding; `onLevels` receives each room's active speakers (levels
    /// 0–100) on the media thread.
    static func start(
        _ configuration: MediaConfiguration, log: ServerLog,
        onLevels: @escaping @Sendable (_ room: String, _ levels: [PeerID: Int]) -> Void,
        onQuality: @escaping @Sendable (_ room: String, _ measured: [PeerQuality]) -> Void = { _, _ in }
    ) throws(ServerStartError) -> ServerMedia {
        guard let address = UDPAddress(host: configuration.bindHost, port: UInt16(clamping: configuration.port)) else {
            throw ServerStartError(place: "media address \(configuration.bindHost)", problem: "not an IPv4 address")
        }
        let forwarder: MediaForwarder
        do {
            forwarder = try MediaForwarder(
                binding: address,
                onSpeakers: { room, levels in
                    var update: [PeerID: Int] = [:]
                    for entry in levels { update[PeerID(entry.peer)] = entry.level }
                    onLevels(room, update)
                },
                onQuality: { room, measured in
                    onQuality(
                        room,
                        measured.map {
                            PeerQuality(
                                peer: PeerID($0.peer), score: $0.measures.score, lossPercent: $0.measures.lossPercent,
                                jitterMilliseconds: $0.measures.jitterMilliseconds,
                                rttMilliseconds: $0.measures.rttMilliseconds)
                        })
                })
        } catch {
            throw ServerStartError(place: "media \(address)", problem: error.description)
        }
        forwarder.start()
        return ServerMedia(forwarder: forwarder, configuration: configuration, log: log)
    }

    /// The line saying where media is received.
    func logListening() {
        log.info(
            "media over UDP on \(forwarder.socket.localAddress) (SRTP \(MediaOffer.srtpProfile),"
                + " ciphers from \(SRTPLibrary.cryptography.rawValue))")
    }

    /// Stops forwarding (and relaying) and logs the media counters.
    func stop() {
        relay?.stop()
        forwarder.stop()
        log.info("media counters: \(countersText)")
        if let relay { log.info("relay counters: \(relay.countersText)") }
    }
}
