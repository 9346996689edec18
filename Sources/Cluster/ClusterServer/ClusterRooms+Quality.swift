import RoomCore
import RoomProtocol
import RoomServer

// MARK: Network quality

/// Network quality in a cluster: each node measures its own peers, as one server does, and sends the scores that
/// changed through the room's stream, so that every node tells its own people by the one server's rule.
extension ClusterRooms {
    /// This node's media measured its peers of the room (every half second). A peer's score goes to the room only
    /// when it differs from the one the room last announced, and at most once per `RoomAuthority.qualityInterval`
    /// per peer; the scores that go are gathered into one `network_quality` input, so a node puts at most one
    /// entry per room on the stream per hand-over, however many of its peers changed. Every copy applies it
    /// (`RoomAuthority.announceQuality`) and each node delivers it to its own connections. This node's people who
    /// came since the last hand-over are given, from its own copy, the scores announced before them that they may
    /// see (docs/cluster.md, "Network quality across nodes").
    package func updateQuality(_ measured: [PeerQuality], in roomName: String) {
        guard let room = rooms[roomName], room.ready, let copy = room.copy else { return }
        let now = currentTimestamp()
        var changed: [PeerQuality] = []
        for quality in measured where room.local[quality.peer] != nil {
            // Compared with what the room announced, not with what this node sent: a score lost on its way (Redis
            // away, an owner change) goes again once the interval has passed.
            guard copy.authority.announcedScore(of: quality.peer) != quality.score else { continue }
            if let sentAt = room.qualitySentAt[quality.peer], now - sentAt < RoomAuthority.qualityInterval {
                continue
            }
            room.qualitySentAt[quality.peer] = now
            changed.append(quality)
        }
        if room.qualitySentAt.count > room.local.count {
            room.qualitySentAt = room.qualitySentAt.filter { room.local[$0.key] != nil }
        }
        tellQualityToNewcomers(roomName)
        guard !changed.isEmpty else { return }
        send(.networkQuality(node: nodeName, changed, now: now), in: roomName)
    }

    /// This node's people of the room not yet told the scores announced before they came: each is given those
    /// it may see (all of them for those who may move people; the stage's and its own for anyone else). Counted by
    /// connection, so that someone who comes back (under a new connection number) is told again.
    func tellQualityToNewcomers(_ roomName: String) {
        guard let room = rooms[roomName], let copy = room.copy else { return }
        if room.qualityTold.count > room.local.count { room.qualityTold.formIntersection(room.local.values) }
        let newcomers = room.local.filter { !room.qualityTold.contains($0.value) }
        guard !newcomers.isEmpty else { return }
        var told = Outcome()
        for (peer, connection) in newcomers.sorted(by: { $0.key < $1.key }) {
            guard copy.authority.peers[peer] != nil else { continue }
            room.qualityTold.insert(connection)
            let seen = copy.authority.announcedQuality(seenBy: peer)
            guard !seen.isEmpty else { continue }
            told.deliveries.append(Delivery(to: .peer(peer), ServerMessage(.networkQuality(seen), seq: nil)))
        }
        if !told.deliveries.isEmpty { publish(told, in: roomName) }
    }
}
