import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: Carrying out

/// What an applied input changes on this node: its joins answered, its homes and remote speakers, the outcome
/// published to this node's consumers.
extension ClusterRooms {
    /// Carries out an applied input on this node: the joiner of this node gets its snapshot, this node's
    /// clients hear the outcome.
    func carryOut(_ input: ClusterInput, _ applied: ReplicatedRoom.Applied, in roomName: String) {
        guard let room = rooms[roomName] else { return }
        if Self.changesBans(applied) { cluster.refreshBans() }
        switch applied {
        case .joined(let result):
            let ticket = input.node == nodeName ? room.joins.removeValue(forKey: input.connection) : nil
            switch result {
            case .refused(let reason):
                if ticket != nil, let peer = input.peer { media?.release(peer, room: roomName) }
                ticket?.answer(.refused(reason))
            case .joined(let snapshot, let outcome, let replaced):
                guard let peer = input.peer else { return }
                // Gates first: a speaker of another node is heard here from now on, if it may publish.
                if input.node != nodeName, let ssrc = input.ssrc {
                    let open = outcome.gates.last { $0.peer == peer }?.open ?? false
                    media?.addRemoteSpeaker(
                        peer, ssrc: ssrc, node: Self.name(of: input.node), room: roomName, open: open)
                } else if input.node == nodeName {
                    media?.removeRemoteSpeaker(peer, room: roomName)
                }
                updateRemoteNodes(roomName)
                if input.node != nodeName, room.local.removeValue(forKey: peer) != nil {
                    // The same identity joined through another node: its connection here no longer speaks for it.
                    connections.detach(peer, from: roomName)?.close(.replaced)
                    media?.moved(peer, room: roomName)
                }
                if let ticket {
                    if ticket.isWanted() {
                        room.local[peer] = input.connection
                        ticket.answer(.accepted(replaced: replaced))
                        ticket.answer(.admitted(snapshot: snapshot, outcome: outcome, replaced: replaced))
                    } else {
                        send(
                            .leave(
                                node: nodeName, [(Departure(peer, .disconnected), input.connection)],
                                now: currentTimestamp()), in: roomName)
                    }
                }
                publish(outcome, in: roomName)
            }
        case .outcome(let outcome):
            decided(input, in: roomName)
            for (peer, _) in outcome.closes { room.local[peer] = nil }
            publish(outcome, in: roomName)
            // The cluster took this node for gone (it was frozen, or cut off from Redis): its people are out of
            // the room, and their connections go, so that their clients reconnect and join again.
            if input.kind == .nodeGone, input.node == nodeName { handBack(roomName) }
            // A departure names its connection and takes out no other; should the room still have stopped
            // counting a connection of this node's people, that connection goes too.
            if input.kind == .leave, let departures = input.departures {
                handBack(roomName, among: departures.map(\.peer))
            }
            if input.kind == .leave || input.kind == .nodeGone || !outcome.closes.isEmpty {
                updateRemoteNodes(roomName)
            }
            if let error = outcome.error, input.node == nodeName, let peer = input.peer {
                var notice = Outcome()
                notice.deliveries = [Delivery(to: .peer(peer), error)]
                publish(notice, in: roomName)
            }
        }
    }

    /// Closes the connections of this node's people (of `peers`, when given) that the room does not hold as
    /// connected here, through that very connection (close 1001, which clients answer by reconnecting): a
    /// connection the room no longer counts never stays open, hearing the room's messages while nobody sees it.
    func handBack(_ roomName: String, among peers: [PeerID]? = nil) {
        guard let room = rooms[roomName], let copy = room.copy else { return }
        let stale = room.local.filter { peer, connection in
            guard peers?.contains(peer) ?? true else { return false }
            guard let home = copy.homes[peer] else { return true }
            return home.node != nodeName || home.connection != connection
        }
        guard !stale.isEmpty else { return }
        log.warning("room \(roomName): \(stale.count) people of this node are no longer in it; their clients reconnect")
        for peer in stale.keys.sorted() {
            room.local[peer] = nil
            guard let entry = connections.detach(peer, from: roomName) else { continue }
            entry.room = nil
            entry.peer = nil
            entry.connection.close(code: .goingAway, reason: ServerClose.handedBack)
        }
    }

    func publish(_ outcome: Outcome, in roomName: String) {
        for consumer in consumers { consumer.consume(outcome, in: roomName) }
    }
}
