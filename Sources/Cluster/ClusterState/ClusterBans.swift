import RedisClient

/// The identities banned from every room of the cluster, as Redis holds them (`cr:bans`): identity to the ban's
/// record, whose bytes the server writes and reads (sealed); and the identities whose ban was lifted, with when.
public struct ClusterBans: Sendable, Equatable {
    /// `cr:bans:v` as read with the bans; nil when no ban was ever made in this Redis.
    public var version: String?
    public var records: [String: [UInt8]]
    /// Identity to the Unix second its ban was lifted.
    public var lifts: [String: Int64]
}

/// A ban a node carries into the cluster (`ClusterRedis.carryBans`).
public struct CarriedBan: Sendable, Equatable {
    public var identity: String
    /// When it was made (Unix seconds): a lift in the cluster at or after it keeps it out.
    public var at: Int64
    public var record: [UInt8]

    public init(identity: String, at: Int64, record: [UInt8]) {
        self.identity = identity
        self.at = at
        self.record = record
    }
}

extension ClusterRedis {
    /// The version of the cluster's bans (nil when none was ever made).
    public func bansVersion() throws(ClusterError) -> String? {
        try connection.pipelineChecked([RedisCommand("GET", ClusterKeys.bansVersion)]).first?.string
    }

    /// The cluster's bans, the lifts and their version, read in one transaction.
    public func bans() throws(ClusterError) -> ClusterBans {
        let replies = try connection.pipelineChecked([
            RedisCommand("MULTI"), RedisCommand("GET", ClusterKeys.bansVersion),
            RedisCommand("HGETALL", ClusterKeys.bans), RedisCommand("HGETALL", ClusterKeys.lifts),
            RedisCommand("EXEC"),
        ])
        guard case .array(let results)? = replies.last, results.count == 3 else {
            throw .redis(.unexpectedReply(expected: "the bans", got: replies.last?.description ?? "nothing"))
        }
        do throws(RedisError) {
            let lifts = try Self.decodeHash(results[2].checked()).compactMapValues {
                Int64(String(decoding: $0, as: UTF8.self))
            }
            return ClusterBans(
                version: try results[0].checked().string, records: try Self.decodeHash(results[1].checked()),
                lifts: lifts)
        } catch {
            throw ClusterError(error)
        }
    }

    /// Adds the bans the cluster does not have, unless lifted there at or after they were made; returns how many.
    @discardableResult
    public func carryBans(_ bans: [CarriedBan]) throws(ClusterError) -> Int {
        guard !bans.isEmpty else { return 0 }
        var arguments: [[UInt8]] = []
        for ban in bans { arguments += [Array(ban.identity.utf8), Array(String(ban.at).utf8), ban.record] }
        let reply = try call(
            "cr_ban_carry", keys: [ClusterKeys.bans, ClusterKeys.bansVersion, ClusterKeys.lifts], arguments: arguments)
        guard let added = reply.first?.integer else {
            throw .redis(.unexpectedReply(expected: "a count", got: RedisReply.array(reply).description))
        }
        return Int(added)
    }
}

extension ClusterRedis {
    /// Lifts `identity`'s ban at Unix second `at`, outside any room (the operator's); whether there was one.
    public func liftBan(_ identity: String, at: Int64) throws(ClusterError) -> Bool {
        let reply = try call(
            "cr_ban_lift", keys: [ClusterKeys.bans, ClusterKeys.bansVersion, ClusterKeys.lifts],
            arguments: [Array(identity.utf8), Array(String(at).utf8)])
        guard let lifted = reply.first?.integer else {
            throw .redis(.unexpectedReply(expected: "0 or 1", got: RedisReply.array(reply).description))
        }
        return lifted == 1
    }
}

extension ClusterNode {
    /// Reads the cluster's bans now, on the write worker (after this node's appends so far), and posts them.
    public func refreshBans() {
        let notify = self.notify
        run(on: writeWorker, { store throws(ClusterError) in try store.bans() }) { result in
            if case .success(let bans) = result { notify(.bans(bans)) }
        }
    }

    /// Adds this node's own bans the cluster lacks (`ClusterRedis.carryBans`); `completion` on the runtime's
    /// thread.
    public func carryBans(_ bans: [CarriedBan], completion: @escaping @Sendable (Result<Int, ClusterError>) -> Void) {
        run(on: writeWorker, { store throws(ClusterError) in try store.carryBans(bans) }, completion: completion)
    }

    /// On the tick: the bans, when their version changed since the last read (or were never read).
    func readBans(_ store: ClusterRedis) throws(ClusterError) {
        let version = try store.bansVersion()
        if let known = state.withLock({ $0.bansVersion }), known == version { return }
        let bans = try store.bans()
        state.withLock { $0.bansVersion = .some(bans.version) }
        post(.bans(bans))
    }

    /// The next tick reads the bans whatever their version (after Redis lost its data, say).
    func forgetBansVersion() {
        state.withLock { $0.bansVersion = nil }
    }
}
