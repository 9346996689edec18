import ClusterState
import MediaRelay
import MediaTransport
import RoomCore
import RoomProtocol
import RoomServer
import RoomTransport

// MARK: The cluster's lobby

/// This node's records of the rooms it owns, for the other nodes' lobbies, and theirs read into its own.
extension ClusterRooms {
    /// How long a room that left the list stays in this node's records, so that the other lobbies hear why.
    static let lobbyDepartureMilliseconds: Timestamp = 30_000

    func scheduleLobbyPublishing() {
        guard let loop else { return }
        loop.schedule(after: .milliseconds(cluster.configuration.timing.tickMilliseconds)) { [self] in
            publishLobby()
            scheduleLobbyPublishing()
        }
    }

    /// Writes what the other nodes' lobbies should show of the rooms this node owns, when it changed (or Redis
    /// may not have it): each listed room's entry, and for a while each room that left the list, with why.
    /// Rooms this node no longer owns drop out; the node that owns them now speaks for them.
    func publishLobby() {
        guard !lobbyWriting else { return }
        let now = currentTimestamp()
        var records: [String: DirectoryCodec.ClusterEntry] = [:]
        for (roomName, room) in rooms {
            guard case .owner(let token) = room.phase, room.ready, let authority = room.copy?.authority else {
                continue
            }
            let before = lobbyRecords[roomName]
            if let listing = authority.listing {
                var arrival = ListingArrival.started
                switch before?.change {
                case .added(_, let why)?: arrival = why
                case .removed(_, .unlisted)?: arrival = .listed
                default: break
                }
                records[roomName] = .init(change: .added(listing, arrival), epoch: token.epoch, at: now)
            } else if let before, case .added = before.change {
                let departure: ListingDeparture =
                    authority.ended ? .ended : authority.peers.isEmpty ? .empty : .unlisted
                records[roomName] = .init(
                    change: .removed(room: roomName, departure), epoch: token.epoch, at: now)
            } else if let before, case .removed = before.change, now - before.at < Self.lobbyDepartureMilliseconds {
                records[roomName] = before
            }
        }
        let unchanged =
            records.count == lobbyRecords.count
            && records.allSatisfy { room, entry in
                guard let old = lobbyRecords[room] else { return false }
                return old.change == entry.change && old.epoch == entry.epoch
            }
        if unchanged, lobbyWritten { return }
        if !unchanged { lobbyRecords = records }
        lobbyWriting = true
        let written = lobbyRecords
        cluster.publishLobby(written.mapValues { DirectoryCodec.encode($0) }) { [self] stored in
            lobbyWriting = false
            lobbyWritten = stored && written == lobbyRecords
        }
    }

    /// The other nodes' records, one entry per room: the one written under the highest lease epoch (an owner
    /// that just lost a room may still name it). Entries that cannot be read, or name another room, are skipped.
    static func lobbyEntries(_ records: [LobbyRecords], log: ServerLog) -> [String: ListingChange] {
        var best: [String: DirectoryCodec.ClusterEntry] = [:]
        for node in records {
            for (roomName, bytes) in node.entries {
                guard let entry = try? DirectoryCodec.decodeEntry(bytes), entry.change.room == roomName else {
                    log.warning("node \(node.node)'s lobby entry for room \(roomName) cannot be read; skipped")
                    continue
                }
                if let held = best[roomName], held.epoch >= entry.epoch { continue }
                best[roomName] = entry
            }
        }
        return best.mapValues(\.change)
    }
}
