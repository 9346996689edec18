import ClusterState
import RedisClient
import RoomCore
import RoomPersistence
import RoomServer
import StrictJSON

// MARK: The cluster's bans

/// A ban as the cluster keeps it in Redis (`cr:bans`, sealed): one `ClusterFormat` document.
enum BanFormat {
    static func encode(_ ban: BanRecord) -> [UInt8] {
        var object = JSONObject()
        object["identity"] = .string(ban.identity)
        object["name"] = .string(ban.name)
        object["by"] = .string(ban.by)
        if let room = ban.room { object["room"] = .string(room) }
        object["at"] = .integer(ban.at)
        object["reason"] = .string(ban.reason)
        return ClusterFormat.document(object)
    }

    static func decode(_ bytes: [UInt8]) throws(ClusterFormatError) -> BanRecord {
        let reader = try ClusterFormat.read(bytes)
        return BanRecord(
            identity: try reader.string("identity"), name: try reader.string("name"), by: try reader.string("by"),
            room: try reader.optionalString("room"), at: try reader.integer("at"), reason: try reader.string("reason"))
    }
}

/// A ban holds in every room of the cluster: Redis keeps the cluster's bans, and each node keeps a copy of them in
/// its own link registry, which its door reads (docs/tokens.md, "Bans"). The owner of the room a ban or a lift is
/// decided in writes it to Redis in the same atomic step as the room's entry, so a ban the cluster could not
/// record is not carried out at all: the host is told, and nobody is removed.
extension ClusterRooms {
    /// What the outcome of one decided input does to the cluster's bans, as state operations of its entry: a ban
    /// (its record, sealed) or a lift (of the identity the owner's copy of the bans names `who`). Fails when a
    /// record cannot be sealed.
    func banOperations(_ applied: ReplicatedRoom.Applied, now: Timestamp) throws -> [StateOperation] {
        guard case .outcome(let outcome) = applied else { return [] }
        var operations: [StateOperation] = []
        for request in outcome.linkRequests {
            if let identity = request.ban {
                let ban = BanRecord(
                    identity: identity.rawValue, name: request.banName, by: request.peer.rawValue, room: request.room,
                    at: now / 1000, reason: request.banReason)
                operations.append(
                    .setBan(identity.rawValue, try seal.sealBan(BanFormat.encode(ban), identity: identity.rawValue)))
            }
            if case .lift(let who)? = request.bans, let identity = try? links?.bannedIdentity(named: who) {
                operations.append(.liftBan(identity, at: now / 1000))
            }
        }
        return operations
    }

    /// Whether an applied input bans or lifts: this node then reads the cluster's bans again at once.
    static func changesBans(_ applied: ReplicatedRoom.Applied) -> Bool {
        guard case .outcome(let outcome) = applied else { return false }
        return outcome.linkRequests.contains { request in
            if request.ban != nil { return true }
            if case .lift? = request.bans { return true }
            return false
        }
    }

    /// What a host is told when the cluster could not record their ban or lift (`error`): nothing changed.
    static func banRefusal(_ input: ClusterInput, _ error: ClusterError) -> String? {
        var why = "\(error)"
        if case .unavailable(let redis) = error { why = "\(redis)" }
        switch input.request {
        case .remove(_, reason: _, withdrawLink: _, ban: true)?:
            return "the ban could not be recorded in the cluster (\(why)): nobody was banned or removed; try again"
        case .unban?:
            return "the ban could not be lifted in the cluster (\(why)): it still holds; try again"
        default:
            return nil
        }
    }

    /// The cluster's bans as Redis holds them: this node's registry keeps exactly those (records that do not
    /// open under the cluster's secret are left out, and logged). The first time after the node starts, or
    /// after Redis lost its data, the node first brings in its own bans the cluster does not have (made while it
    /// ran alone, or lost with Redis's data), except those lifted in the cluster since they were made.
    func received(_ bans: ClusterBans) {
        guard let links else { return }
        var records: [BanRecord] = []
        for (identity, sealed) in bans.records.sorted(by: { $0.key < $1.key }) {
            guard let plain = seal.openBan(sealed, identity: identity) else {
                log.warning(
                    "the cluster's ban of \(identity) is not sealed under this cluster's secret (written to Redis by "
                        + "someone else, or by a node with another secret); not applied")
                continue
            }
            do throws(ClusterFormatError) {
                let ban = try BanFormat.decode(plain)
                guard ban.identity == identity else { throw .malformed("it names \(ban.identity)") }
                records.append(ban)
            } catch {
                log.warning("the cluster's ban of \(identity) cannot be read (\(error)); not applied")
            }
        }
        // As the registry lists them: newest first.
        records.sort { ($0.at, $1.identity) > ($1.at, $0.identity) }
        if !bansCarried {
            guard !bansCarrying else { return }
            let own = (try? links.bans()) ?? []
            let missing = own.filter { ban in
                bans.records[ban.identity] == nil && (bans.lifts[ban.identity].map { $0 < ban.at } ?? true)
            }
            guard missing.isEmpty else {
                carry(missing)
                return
            }
            bansCarried = true
        }
        do {
            let before = try links.bans()
            guard before != records else { return }
            try links.replaceBans(with: records)
            let known = Set(before.map(\.identity))
            let now = Set(records.map(\.identity))
            let changes =
                records.filter { !known.contains($0.identity) }.map {
                    "\($0.identity) banned by \($0.by)" + ($0.room.map { " in \($0)" } ?? "")
                } + before.filter { !now.contains($0.identity) }.map { "\($0.identity) lifted" }
            if !changes.isEmpty { log.info("the cluster's bans: " + changes.joined(separator: ", ")) }
        } catch {
            log.error("the cluster's bans could not be written to this node's link registry: \(error)")
        }
    }

    /// Brings this node's own bans into the cluster, then reads the cluster's again; tries again in a tick when
    /// Redis does not answer.
    func carry(_ own: [BanRecord]) {
        var carried: [CarriedBan] = []
        for ban in own {
            guard let sealed = try? seal.sealBan(BanFormat.encode(ban), identity: ban.identity) else { continue }
            carried.append(CarriedBan(identity: ban.identity, at: ban.at, record: sealed))
        }
        bansCarrying = true
        cluster.carryBans(carried) { [self] result in
            bansCarrying = false
            switch result {
            case .success(let added):
                bansCarried = true
                log.info("brought \(added) of this node's own bans into the cluster's")
                cluster.refreshBans()
            case .failure(let error):
                log.warning("this node's own bans could not be brought into the cluster's (\(error)); trying again")
                loop?.schedule(after: .milliseconds(cluster.configuration.timing.tickMilliseconds)) { [self] in
                    cluster.refreshBans()
                }
            }
        }
    }
}

/// The cluster's bans as its operator sees them, from outside the nodes (`clubroom bans --cluster`): read from
/// Redis and opened with the cluster secret, and lifted there, so every node lifts them at its next read.
public final class ClusterBanBook {
    let connection: RedisConnection
    let store: ClusterRedis
    let seal: ClusterSeal

    /// Connects to the cluster's Redis; `secret` is the cluster secret (the nodes' `--cluster-secret-file`, else
    /// their token secret).
    public init(redis: RedisEndpoint, secret: [UInt8]) throws(ClusterError) {
        connection = RedisConnection(endpoint: redis)
        do throws(RedisError) {
            try connection.connect()
        } catch {
            throw error.isUnavailable ? .unavailable(error) : .redis(error)
        }
        store = ClusterRedis(connection: connection)
        seal = ClusterSeal(secret: secret)
        try store.loadFunctions()
    }

    deinit { connection.close() }

    /// The bans, newest first, and how many records did not open under the secret (another cluster's secret,
    /// or written to Redis by someone else).
    public func bans() throws(ClusterError) -> (bans: [BanRecord], unreadable: Int) {
        var bans: [BanRecord] = []
        var unreadable = 0
        for (identity, sealed) in try store.bans().records {
            guard let plain = seal.openBan(sealed, identity: identity), let ban = try? BanFormat.decode(plain),
                ban.identity == identity
            else {
                unreadable += 1
                continue
            }
            bans.append(ban)
        }
        bans.sort { ($0.at, $1.identity) > ($1.at, $0.identity) }
        return (bans, unreadable)
    }

    /// Lifts the ban `who` names (the identity, or the name of the one banned person who had it) at Unix second
    /// `at`; the identity lifted, or nil when no ban matches.
    public func lift(_ who: String, at: Int64) throws(ClusterError) -> String? {
        let bans = try bans().bans
        let identity: String
        if bans.contains(where: { $0.identity == who }) {
            identity = who
        } else {
            let named = bans.filter { !$0.name.isEmpty && $0.name.lowercased() == who.lowercased() }
            guard named.count == 1 else { return nil }
            identity = named[0].identity
        }
        return try store.liftBan(identity, at: at) ? identity : nil
    }
}
