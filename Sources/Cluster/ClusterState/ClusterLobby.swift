import RedisClient

/// What one node says of the rooms it owns, for every node's lobby: room to an entry the room server encodes
/// (`ClusterRedis.replaceLobby`), as read by the other nodes on their tick.
public struct LobbyRecords: Sendable, Equatable {
    /// The node that wrote them (its name and incarnation).
    public var node: String
    public var incarnation: UInt64
    /// Room name to the entry's bytes.
    public var entries: [String: [UInt8]]
}

extension ClusterRedis {
    /// The field of a node's lobby hash that changes on every write; room names cannot take this form.
    static let lobbyVersionField = "~v"

    /// Replaces everything `node`'s lobby hash holds with `entries`, in one transaction (a reader never sees it
    /// half written), with a new version and a lifetime of `ttlMilliseconds`.
    public func replaceLobby(
        node: String, entries: [String: [UInt8]], version: String, ttlMilliseconds: Int
    ) throws(ClusterError) {
        let key = ClusterKeys.lobby(node)
        var set = RedisCommand("HSET", key, Self.lobbyVersionField, version)
        for (room, entry) in entries.sorted(by: { $0.key < $1.key }) {
            try Self.check(room)
            set.append(room)
            set.append(bytes: entry)
        }
        let replies = try connection.pipelineChecked([
            RedisCommand("MULTI"), RedisCommand("DEL", key), set,
            RedisCommand("PEXPIRE", key, String(ttlMilliseconds)), RedisCommand("EXEC"),
        ])
        if case .array(let results)? = replies.last {
            for result in results {
                do throws(RedisError) { _ = try result.checked() } catch { throw ClusterError(error) }
            }
        }
    }

    /// Keeps `node`'s lobby hash alive for `ttlMilliseconds` more (it expires with a node that stops renewing).
    public func refreshLobby(node: String, ttlMilliseconds: Int) throws(ClusterError) {
        _ = try connection.pipelineChecked([
            RedisCommand("PEXPIRE", ClusterKeys.lobby(node), String(ttlMilliseconds))
        ])
    }

    /// Removes `node`'s lobby hash (a node starting afresh, or stopping).
    public func clearLobby(node: String) throws(ClusterError) {
        _ = try connection.pipelineChecked([RedisCommand("DEL", ClusterKeys.lobby(node))])
    }

    /// The version of each node's lobby hash, nil where it has none.
    public func lobbyVersions(of nodes: [String]) throws(ClusterError) -> [String: String] {
        guard !nodes.isEmpty else { return [:] }
        let replies = try connection.pipelineChecked(
            nodes.map { RedisCommand("HGET", ClusterKeys.lobby($0), Self.lobbyVersionField) })
        var versions: [String: String] = [:]
        for (node, reply) in zip(nodes, replies) {
            if let version = reply.string { versions[node] = version }
        }
        return versions
    }

    /// What `node`'s lobby hash holds, without its version.
    public func lobby(of node: String) throws(ClusterError) -> [String: [UInt8]] {
        do throws(RedisError) {
            var entries = try Self.decodeHash(connection.command(RedisCommand("HGETALL", ClusterKeys.lobby(node))))
            entries[Self.lobbyVersionField] = nil
            return entries.filter { ClusterKeys.isValidName($0.key) }
        } catch {
            throw ClusterError(error)
        }
    }
}
