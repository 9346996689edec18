import RoomCore
import RoomPersistence
import RoomProtocol
import RoomTransport

/// How fast invite holders may come in: the defaults suit one room's audience arriving from many places; a
/// crowd behind one address (a school, a company's NAT) may need more. See `docs/tokens.md`, "Limits at the door".
public struct AdmissionLimits: Sendable, Equatable {
    /// Invite admissions one source address may make at once, and per second after that.
    public var addressBurst: Double = 20
    public var addressPerSecond: Double = 0.5
    /// Admissions one link may make at once, and per second after that.
    public var linkBurst: Double = 60
    public var linkPerSecond: Double = 2
    /// The most identities one link may have in rooms at the same time.
    public var maxLiveIdentitiesPerLink = 200
    /// Addresses of reverse proxies whose `X-Forwarded-For` names the real source; empty trusts none.
    public var trustedProxies: Set<String> = []

    public init() {}
}

/// What invite holders at the door are checked against besides their invite: the link registry (withdrawn and
/// used-up links, removed and banned people), rate limits per source address and per link, and the live identities each
/// link has in rooms. Loop thread only.
final class InviteDoor {
    let limits: AdmissionLimits
    let registry: LinkRegistry?
    private var addressBuckets: [String: LeakyBucket] = [:]
    private var linkBuckets: [String: LeakyBucket] = [:]
    /// Each link's identities in rooms now, with how many connections each has.
    private var live: [String: [PeerID: Int]] = [:]
    /// The link each admitted invite connection came in with.
    private var links: [ObjectIdentifier: (link: String, peer: PeerID)] = [:]
    /// The most buckets kept for each kind; past it, full buckets are dropped first.
    static let maxBuckets = 65_536

    init(limits: AdmissionLimits, registry: LinkRegistry?) {
        self.limits = limits
        self.registry = registry
    }

    /// The address a connection comes from: the socket's peer, or the last address a trusted proxy put in
    /// `X-Forwarded-For`.
    func source(of connection: WebSocketConnection) -> String {
        let direct = hostPart(connection.remoteAddress)
        guard limits.trustedProxies.contains(direct),
            let forwarded = connection.request?.headers["X-Forwarded-For"],
            let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return direct }
        return last
    }

    /// Checks an invite holder whose identity is `identity`, coming to `room` through `connection` at
    /// `now` (milliseconds): nil when they may come in (and the admission is counted), else the refusal.
    /// `admittedByHost` is set when a host let the newcomer in at the locked room: they were counted against the
    /// rate limits when they came to the door, and the lock is behind them.
    func check(
        _ claims: InviteClaims, identity: PeerID, room: String, connection: WebSocketConnection, now: Int64,
        admittedByHost: Bool = false
    ) -> ServerState.DoorRefusal? {
        let source = source(of: connection)
        if limits.maxLiveIdentitiesPerLink > 0, let present = live[claims.id], present[identity] == nil,
            present.count >= limits.maxLiveIdentitiesPerLink
        {
            return ServerState.DoorRefusal(
                ServerClose.linkFull, detail: "link \(claims.id) has \(present.count) people in rooms already")
        }
        guard
            admittedByHost
                || take(
                    from: &addressBuckets, key: source, burst: limits.addressBurst, rate: limits.addressPerSecond, now)
        else {
            return ServerState.DoorRefusal(ServerClose.tooManyJoins, detail: "too many invite joins from \(source)")
        }
        guard
            admittedByHost
                || take(from: &linkBuckets, key: claims.id, burst: limits.linkBurst, rate: limits.linkPerSecond, now)
        else {
            return ServerState.DoorRefusal(ServerClose.tooManyJoins, detail: "too many joins with link \(claims.id)")
        }
        if let registry {
            do {
                if let ban = try registry.ban(of: identity.rawValue) {
                    return Self.refusal(ban, link: claims.id)
                }
                if !admittedByHost, try registry.isLocked(room, against: identity.rawValue) {
                    return ServerState.DoorRefusal(
                        ServerClose.roomLocked,
                        detail: "\(identity) is new and room \(room) is locked (link \(claims.id))")
                }
                if try registry.isRemoved(identity.rawValue, from: room) {
                    return ServerState.DoorRefusal(
                        (CloseReason.removed.code, ServerClose.reason(.removed)),
                        detail: "\(identity) was removed from \(room) (link \(claims.id))")
                }
                let verdict = try registry.admit(LinkRecord(claims), identity: identity.rawValue)
                switch verdict {
                case .admitted: try registry.rememberGuest(identity.rawValue, in: room)
                case .revoked:
                    return ServerState.DoorRefusal(ServerClose.linkWithdrawn, detail: "link \(claims.id) withdrawn")
                case .usedUp:
                    return ServerState.DoorRefusal(ServerClose.linkUsedUp, detail: "link \(claims.id) used up")
                }
            } catch {
                return ServerState.DoorRefusal(
                    ServerClose.roomUnavailable, detail: "the link registry could not be read: \(error)")
            }
        }
        return nil
    }

    /// Whether `identity` (with a room token) was removed from `room`, as the registry remembers across restarts.
    func removal(of identity: PeerID, from room: String) -> ServerState.DoorRefusal? {
        if let ban = ban(of: identity) { return Self.refusal(ban, link: nil) }
        guard let registry, (try? registry.isRemoved(identity.rawValue, from: room)) == true else { return nil }
        return ServerState.DoorRefusal(
            (CloseReason.removed.code, ServerClose.reason(.removed)), detail: "\(identity) was removed from \(room)")
    }

    /// The ban of `identity`, if the registry has one (a registry that cannot be read bans nobody here: the room's
    /// door asks it again).
    func ban(of identity: PeerID) -> BanRecord? {
        (try? registry?.ban(of: identity.rawValue)) ?? nil
    }

    /// The refusal of a banned identity, whatever it holds.
    static func refusal(_ ban: BanRecord, link: String?) -> ServerState.DoorRefusal {
        ServerState.DoorRefusal(
            ServerClose.banned,
            detail: "\(ban.identity) is banned (by \(ban.by))" + (link.map { " (link \($0))" } ?? ""))
    }

    /// An invite holder came in through `connection` with `link`.
    func admitted(_ connection: WebSocketConnection, link: String, peer: PeerID) {
        links[ObjectIdentifier(connection)] = (link, peer)
        live[link, default: [:]][peer, default: 0] += 1
    }

    /// A connection closed: its link has one connection fewer in rooms.
    func closed(_ connection: WebSocketConnection) {
        guard let (link, peer) = links.removeValue(forKey: ObjectIdentifier(connection)) else { return }
        let count = (live[link]?[peer] ?? 1) - 1
        live[link]?[peer] = count > 0 ? count : nil
        if live[link]?.isEmpty == true { live[link] = nil }
    }

    private func take(
        from buckets: inout [String: LeakyBucket], key: String, burst: Double, rate: Double, _ now: Int64
    ) -> Bool {
        if buckets[key] == nil, buckets.count >= Self.maxBuckets {
            // Drop the buckets that drained: they hold nothing a newcomer would not get anyway.
            buckets = buckets.filter { _, bucket in
                var probe = bucket
                return !probe.allow(cost: burst, nowMilliseconds: now)
            }
            if buckets.count >= Self.maxBuckets { return false }
        }
        var bucket = buckets[key] ?? LeakyBucket(capacity: burst, drainPerSecond: rate)
        let allowed = bucket.allow(nowMilliseconds: now)
        buckets[key] = bucket
        return allowed
    }
}

extension LinkRecord {
    /// A link as its signed claims describe it, not used yet.
    init(_ claims: InviteClaims) {
        self.init(
            id: claims.id, room: claims.room, role: claims.role, creator: claims.creator ?? "",
            createdAt: claims.issuedAt ?? claims.notBefore, expiresAt: claims.expiresAt, maxUses: claims.maxUses)
    }
}
