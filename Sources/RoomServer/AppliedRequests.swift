import RoomCore
import RoomProtocol

/// The ids of the requests that took effect in a room, per identity: a request whose id is among them is not
/// acted on again. A client that could not learn whether a request took effect (the connection dropped, or a
/// cluster answered `unconfirmed`) sends it again under the same id, and the room applies it at most once. Part of
/// the room's state: a cluster's copies record the same ids in the same order, and the checkpoint carries them,
/// so a new owner knows every id the old one applied.
struct AppliedRequests: Sendable, Equatable {
    /// How many ids are kept per identity (the most recent): a client retries only its latest requests.
    static let perIdentity = 64
    /// Past this many identities, the ids of identities no longer in the room are forgotten.
    static let identityThreshold = 2048

    private(set) var ids: [PeerID: [RequestID]] = [:]

    /// Whether `peer`'s request `id` took effect.
    func contains(_ id: RequestID, from peer: PeerID) -> Bool {
        ids[peer]?.contains(id) ?? false
    }

    /// Notes that `peer`'s request `id` took effect; `present` says who is in the room (kept when pruning).
    mutating func record(_ id: RequestID, from peer: PeerID, present: (PeerID) -> Bool) {
        var kept = ids[peer] ?? []
        kept.append(id)
        if kept.count > Self.perIdentity { kept.removeFirst(kept.count - Self.perIdentity) }
        ids[peer] = kept
        if ids.count > Self.identityThreshold { ids = ids.filter { present($0.key) } }
    }

    /// Whether requests of this kind are applied once per id. `create_link` changes nothing in the room (it
    /// only signs a link), so a repeat answers with a new link instead of nothing.
    static func isDeduplicated(_ request: ClientRequest) -> Bool {
        if case .createLink = request { return false }
        return true
    }

    /// The answer to a repeat of a request that took effect: it changed nothing more.
    static func repeated(_ id: RequestID) -> ServerMessage {
        ServerMessage(
            .error(
                code: .alreadyApplied,
                message: "a request with this id took effect already; this repeat changed nothing", id: id),
            seq: nil)
    }

    /// The ids as a checkpoint keeps them, identities sorted: `s:` and the text of a string id, `i:` and the
    /// digits of an integer one.
    var stored: [RoomCheckpoint.Applied] {
        ids.sorted { $0.key < $1.key }.map { peer, ids in
            RoomCheckpoint.Applied(
                peer: peer,
                ids: ids.map {
                    switch $0 {
                    case .string(let text): "s:\(text)"
                    case .integer(let number): "i:\(number)"
                    }
                })
        }
    }

    init() {}

    init(stored: [RoomCheckpoint.Applied]) {
        for entry in stored {
            ids[entry.peer] = entry.ids.compactMap { text -> RequestID? in
                if text.hasPrefix("s:") { return .string(String(text.dropFirst(2))) }
                if text.hasPrefix("i:") { return Int64(text.dropFirst(2)).map { .integer($0) } }
                return nil
            }
        }
    }
}
