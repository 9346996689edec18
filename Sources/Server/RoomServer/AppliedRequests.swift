import RoomCore
import RoomProtocol

/// The ids of the requests a room decided, per identity, with the refusal of those it refused: a request whose id
/// is among them is not decided again. A client that could not learn whether a request took effect (the
/// connection dropped, or a cluster answered `unconfirmed`) sends it again under the same id, and the room applies
/// it at most once; a copy of a refused request (a cluster node sends its requests again while Redis is away) is
/// answered with the same refusal and never takes effect later, when the room has changed. Part of the room's
/// state: a cluster's copies record the same decisions in the same order, and the checkpoint carries them, so a new
/// owner knows every id the old one decided.
package struct AppliedRequests: Sendable, Equatable {
    /// How many ids are kept per identity (the most recent): a client retries only its latest requests.
    static let perIdentity = 64
    /// Past this many identities, the ids of identities no longer in the room are forgotten.
    static let identityThreshold = 2048

    /// One decided request: its id, and the refusal it was answered with (nil when it took effect).
    package struct Decision: Sendable, Equatable {
        package var id: RequestID
        package var refusal: ServerMessage?

        package init(id: RequestID, refusal: ServerMessage?) {
            self.id = id
            self.refusal = refusal
        }
    }

    package var decisions: [PeerID: [Decision]] = [:]

    /// Each identity's decided ids, oldest first.
    var ids: [PeerID: [RequestID]] { decisions.mapValues { $0.map(\.id) } }

    /// Whether `peer`'s request `id` took effect.
    func contains(_ id: RequestID, from peer: PeerID) -> Bool {
        decision(id, from: peer).map { $0.refusal == nil } ?? false
    }

    /// How `peer`'s request `id` was decided, if the room still knows.
    package func decision(_ id: RequestID, from peer: PeerID) -> Decision? {
        decisions[peer]?.last { $0.id == id }
    }

    /// Notes that `peer`'s request `id` took effect (`refusal` nil) or was refused with `refusal`; `present` says
    /// who is in the room (kept when pruning).
    mutating func record(
        _ id: RequestID, from peer: PeerID, refusal: ServerMessage? = nil, present: (PeerID) -> Bool
    ) {
        var kept = decisions[peer] ?? []
        kept.append(Decision(id: id, refusal: refusal))
        if kept.count > Self.perIdentity { kept.removeFirst(kept.count - Self.perIdentity) }
        decisions[peer] = kept
        if decisions.count > Self.identityThreshold { decisions = decisions.filter { present($0.key) } }
    }

    /// Whether requests of this kind are applied once per id. `create_link` changes nothing in the room (it
    /// only signs a link), so a repeat answers with a new link instead of nothing; `stats` changes nothing
    /// either, so a repeat answers with the tally of its moment.
    package static func isDeduplicated(_ request: ClientRequest) -> Bool {
        if case .createLink = request { return false }
        if case .stats = request { return false }
        return true
    }

    /// The answer to a repeat of a request that took effect: it changed nothing more.
    package static func repeated(_ id: RequestID) -> ServerMessage {
        ServerMessage(
            .error(
                code: .alreadyApplied,
                message: "a request with this id took effect already; this repeat changed nothing", id: id),
            seq: nil)
    }

    package init() {}
}
