import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: Relayed speakers

/// The speakers of other nodes and the relay's nodes for each room, and the rooms cut off from the other nodes'
/// media.
extension ClusterRooms {
    /// How long a room's other nodes may be silent (no relayed media, no keepalive) before this node sends the
    /// room's clients to reconnect.
    static let relaySilenceMilliseconds: Int64 = 3000

    /// Every second: a room whose other nodes have all been silent for 3 s, while Redis answers this node and
    /// says at least one of them refreshed its registration in the last two ticks and two ticks or more after
    /// it was last heard here (so it is alive and reaches Redis, and only the media between it and this node is
    /// cut), has its clients here closed with 1001, so that they reconnect (through another node, where the
    /// client knows one). A room this node alone serves relays to no one and is never silent; a node that died
    /// is silent too, but it refreshed no later than its last keepalive period, and the cluster takes its people
    /// out instead (`nodeLeft`); while Redis does not answer this node, nothing is dropped (its view of the
    /// others is stale). See docs/cluster.md, "Silence between nodes".
    package func dropSilentRooms() {
        guard let relay else { return }
        let servedNow = Set(rooms.filter { !$0.value.local.isEmpty }.keys)
        for roomName in servedNow.subtracting(served).sorted() { relay.restartSilence(room: roomName) }
        served = servedNow
        let silent = relay.silentRooms(forMilliseconds: Self.relaySilenceMilliseconds)
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

    /// Tells the relay which other nodes have people in the room (its speakers' packets go to each once).
    func updateRemoteNodes(_ roomName: String) {
        guard let relay, let copy = rooms[roomName]?.copy else { return }
        let homes = Set(copy.homes.values.map(\.node)).subtracting([nodeName])
        let nodes = cluster.nodes.compactMap { record -> RelayNode? in
            guard homes.contains(Self.identity(name: record.name, incarnation: record.incarnation)) else { return nil }
            return RelayNode(name: record.name, incarnation: record.incarnation, relayAddress: record.relayAddress)
        }
        relay.setRemoteNodes(nodes, room: roomName)
    }

    /// Registers every speaker of other nodes the copy holds (after the copy started from a checkpoint).
    func syncRemoteSpeakers(_ roomName: String) {
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
}
