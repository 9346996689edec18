import RoomCore
import RoomProtocol

/// An invite link a room agreed to make: who asked, for which role, for how long. The authority decides
/// (permission and rank); the server, which holds the secret, signs it.
public struct LinkGrant: Sendable, Equatable {
    public var peer: PeerID
    public var room: String
    public var role: RoleName
    /// Seconds the link stays valid.
    public var ttl: Int64
    /// How many people the link may let in; nil: no limit.
    public var maxUses: Int64?
    /// The id of the request, echoed in the answer.
    public var requestID: RequestID?
}

/// A host's request about the room's links that the room allowed: list them (`revoke` and `lock` nil), withdraw
/// one (`revoke` its id) or all (`ClientRequest.allLinks`), or lock or unlock the room to newcomers with links.
/// The registry, outside the room, carries it out.
public struct LinkRequest: Sendable, Equatable {
    public var peer: PeerID
    public var room: String
    public var revoke: String?
    public var lock: Bool?
    /// Withdraw the room's links that let this identity in (`remove` with `withdraw_link`).
    public var withdrawUsedBy: PeerID?
    /// Ban this identity from every room of the server, for `banReason` (`remove` with `ban`).
    public var ban: PeerID?
    /// The name they had in the room, for the operator's list.
    public var banName: String = ""
    public var banReason: String = ""
    /// List the server's bans, or lift one (named by identity or name) and list them.
    public var bans: BanRequest?
    public var requestID: RequestID?

    public enum BanRequest: Sendable, Equatable {
        case list
        case lift(String)
    }
}

/// A host's or moderator's answer to a newcomer waiting at the locked room (`waiter`: their name or identity),
/// which the room allowed; the node that holds the newcomer carries it out.
public struct DoorAnswer: Sendable, Equatable {
    public var peer: PeerID
    public var room: String
    public var waiter: String
    public var admit: Bool
    public var requestID: RequestID?
}

/// Who is on stage and whose hand is up, kept up to date from each outcome's events so a listing costs the size
/// of the stage, not of the room.
package struct ListingTally: Sendable, Equatable {
    package var stage: Set<PeerID> = []
    package var hands: Set<PeerID> = []
    /// The listeners the listing names (`RoomListing.maxAudienceNames` at most), those who came first first.
    package var audience: [PeerID] = []
}

extension RoomAuthority {
    /// The room's entry in the lobby's list now: nil while it is unlisted, ended or empty.
    public var listing: RoomListing? {
        // A recorder alone is nobody to listen to: the room shows when a person is in it, and counts people only.
        guard listed, !ended, peers.count > recorders.count + streamPeers.count, let liveSince else { return nil }
        let members = tally.stage.compactMap { peers[$0] }.sorted { left, right in
            let (l, r) = (roles.rank(of: left.role), roles.rank(of: right.role))
            if l != r { return l < r }
            if left.joinedAt != right.joinedAt { return left.joinedAt < right.joinedAt }
            return left.id < right.id
        }
        return RoomListing(
            room: name, topic: topic,
            stage: members.prefix(RoomListing.maxStageNames).map { .init(name: $0.name, role: $0.role) },
            onStage: tally.stage.count,
            listeners: peers.count - tally.stage.count - recorders.count - streamPeers.count,
            raisedHands: tally.hands.count, startedAt: liveSince, recording: recording != nil, streaming: streams,
            audience: tally.audience.compactMap { peers[$0]?.name })
    }

    /// Whether `peer` counts as a listener in the listing: not on stage, and not a recorder or a stream.
    private func isListener(_ peer: Peer) -> Bool {
        !roles.isOnStage(peer.role) && !recorders.contains(peer.id) && streamPeers[peer.id] == nil
    }

    /// Keeps the listeners the listing names in step with `touched`: one who left or went on stage gives way,
    /// a newcomer fills a free place. Only when a named listener left and others remain is the room looked
    /// through for the next to name, so a listing still costs the size of its names, not of the audience.
    private mutating func followAudience(_ touched: [PeerID]) {
        let limit = RoomListing.maxAudienceNames
        for id in touched {
            if let peer = peers[id], isListener(peer) {
                if tally.audience.count < limit, !tally.audience.contains(id) { tally.audience.append(id) }
            } else {
                tally.audience.removeAll { $0 == id }
            }
        }
        let listeners = peers.count - tally.stage.count - recorders.count - streamPeers.count
        guard tally.audience.count < min(limit, listeners) else { return }
        let named = Set(tally.audience)
        let next = peers.values.filter { !named.contains($0.id) && isListener($0) }.sorted { left, right in
            left.joinedAt != right.joinedAt ? left.joinedAt < right.joinedAt : left.id < right.id
        }
        tally.audience += next.prefix(limit - tally.audience.count).map(\.id)
    }

    /// Brings the tally and the live time up to date with what `outcome` did, and puts into it the change lobby
    /// watchers should see, if any.
    mutating func reportListing(into outcome: inout Outcome, now: Timestamp) {
        var touched: [PeerID] = []
        var endedNow = false
        var listedNow = false
        for delivery in outcome.deliveries {
            switch delivery.message.event {
            case .peerJoined(let announced): touched.append(announced.peer.id)
            case .peerLeft(let id, _), .removed(let id, _, _), .roleChanged(let id, _, _, _), .handRaised(let id, _),
                .handLowered(let id, _):
                touched.append(id)
            case .peersLeft(let departures): touched.append(contentsOf: departures.map(\.peer))
            case .roomEnded: endedNow = true
            case .listingChanged(let flag, _): listedNow = flag
            default: continue
            }
        }
        if endedNow {
            tally = ListingTally()
        }
        for id in touched {
            let peer = peers[id]
            if let peer, roles.isOnStage(peer.role) { tally.stage.insert(id) } else { tally.stage.remove(id) }
            if peer?.handRaisedAt != nil { tally.hands.insert(id) } else { tally.hands.remove(id) }
        }
        followAudience(touched)
        if peers.isEmpty || ended {
            liveSince = nil
            resetSpeaking()
        } else if liveSince == nil {
            liveSince = now
        }
        let current = listing
        let departure: ListingDeparture = ended ? .ended : peers.isEmpty ? .empty : .unlisted
        if let change = ListingChange.between(
            reportedListing, current, room: name, arrival: listedNow ? .listed : .started, departure: departure)
        {
            outcome.listing = change
        }
        reportedListing = current
    }
}
