import RedisClient

/// The cluster's operations on Redis, each one round trip (or one pipeline) over a blocking connection.
/// `ClusterNode` runs them on its workers' threads; tests call them directly.
///
/// Every call that runs a function loads the library again and retries once when Redis answers that the
/// function is missing (a Redis restarted without its data).
public struct ClusterRedis {
    public let connection: RedisConnection
    public var retention: RetentionLimits

    public init(connection: RedisConnection, retention: RetentionLimits = RetentionLimits()) {
        self.connection = connection
        self.retention = retention
    }

    // MARK: Functions

    /// Loads (or replaces) the function library and checks its version.
    public func loadFunctions() throws(ClusterError) {
        do throws(RedisError) {
            _ = try connection.command(RedisCommand("FUNCTION", "LOAD", "REPLACE", ClusterFunctions.library))
            let version = try connection.command(RedisCommand("FCALL_RO", "cr_version", "0")).requireString("version")
            guard version == ClusterFunctions.version else {
                throw RedisError.unexpectedReply(expected: "library version \(ClusterFunctions.version)", got: version)
            }
        } catch {
            throw ClusterError(error)
        }
    }

    func call(_ function: String, keys: [String], arguments: [[UInt8]]) throws(ClusterError) -> [RedisReply] {
        var command = RedisCommand("FCALL", function, String(keys.count))
        for key in keys { command.append(key) }
        for argument in arguments { command.append(bytes: argument) }
        do throws(RedisError) {
            return try connection.command(command).requireArray("\(function)'s answer")
        } catch .server(let message) where message.contains("Function not found") {
            try loadFunctions()
            do throws(RedisError) {
                return try connection.command(command).requireArray("\(function)'s answer")
            } catch {
                throw ClusterError(error)
            }
        } catch {
            throw ClusterError(error)
        }
    }

    func call(_ function: String, keys: [String], _ arguments: String...) throws(ClusterError) -> [RedisReply] {
        try call(function, keys: keys, arguments: arguments.map { Array($0.utf8) })
    }

    // MARK: Nodes

    /// What a registration found.
    public enum Registration: Sendable, Equatable {
        /// Registered (or refreshed) with this slot; `generation` is Redis's data generation now.
        case registered(slot: Int, generation: String)
        /// The name is held by another live incarnation.
        case nameTaken(String)
        /// The slot this node held was taken by another node meanwhile (this node was gone too long).
        case slotLost
        case noFreeSlot
    }

    /// Registers `node` (or refreshes its registration) for `ttlMilliseconds`, keeping `node.slot` when it is
    /// not 0 and still free. `generationCandidate` becomes Redis's generation if it has none.
    public func register(
        _ node: NodeRecord, ttlMilliseconds: Int, generationCandidate: String, highestSlot: Int = 255
    ) throws(ClusterError) -> Registration {
        let info = "\(node.mediaAddress)|\(node.relayAddress)"
        let reply = try call(
            "cr_register",
            keys: [ClusterKeys.node(node.name), ClusterKeys.nodes, ClusterKeys.slots, ClusterKeys.generation],
            node.name, String(node.incarnation), info, String(ttlMilliseconds), generationCandidate,
            String(highestSlot), String(node.slot))
        switch reply.first?.string {
        case "OK":
            guard reply.count == 3, let slot = reply[1].integer, let generation = reply[2].string else { break }
            return .registered(slot: Int(slot), generation: generation)
        case "NAME_TAKEN": return .nameTaken(reply.count > 1 ? reply[1].string ?? "" : "")
        case "SLOT_LOST": return .slotLost
        case "NO_SLOT": return .noFreeSlot
        default: break
        }
        throw .redis(.unexpectedReply(expected: "a registration", got: RedisReply.array(reply).description))
    }

    /// Removes this node's registration (a clean shutdown), if it is still this incarnation's.
    public func unregister(_ node: NodeRecord) throws(ClusterError) {
        _ = try connection.pipelineChecked([
            RedisCommand(
                "FCALL", "cr_unregister", "2", ClusterKeys.node(node.name), ClusterKeys.slots, node.name,
                String(node.incarnation), String(node.slot))
        ])
    }

    /// The nodes whose registration is live; names whose registration expired are dropped from the set.
    public func liveNodes() throws(ClusterError) -> [NodeRecord] {
        try liveNodesWithTTL().map(\.record)
    }

    /// The live nodes, each with its registration's remaining time to live (ms, from `PTTL`, read in the same
    /// pipeline): a node that refreshes every second has nearly its whole TTL left; one that stopped has less
    /// and less.
    public func liveNodesWithTTL() throws(ClusterError) -> [(record: NodeRecord, ttlMilliseconds: Int)] {
        do throws(RedisError) {
            let names = try connection.command(RedisCommand("SMEMBERS", ClusterKeys.nodes)).requireArray("node names")
                .compactMap(\.string).sorted()
            guard !names.isEmpty else { return [] }
            let replies = try connection.pipeline(
                [RedisCommand(["MGET"] + names.map(ClusterKeys.node))]
                    + names.map { RedisCommand("PTTL", ClusterKeys.node($0)) })
            let values = try replies[0].requireArray("node records")
            let ttls = replies.dropFirst().map { Int($0.integer ?? -2) }
            var live: [(record: NodeRecord, ttlMilliseconds: Int)] = []
            var gone: [String] = []
            for (index, (name, value)) in zip(names, values).enumerated() {
                guard let text = value.string else {
                    gone.append(name)
                    continue
                }
                let fields = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
                guard fields.count == 4, let incarnation = UInt64(fields[0]), let slot = Int(fields[1]) else {
                    continue
                }
                let record = NodeRecord(
                    name: name, incarnation: incarnation, slot: slot, mediaAddress: fields[2], relayAddress: fields[3])
                live.append((record, index < ttls.count ? ttls[index] : -2))
            }
            if !gone.isEmpty { _ = try connection.command(RedisCommand(["SREM", ClusterKeys.nodes] + gone)) }
            return live
        } catch {
            throw ClusterError(error)
        }
    }

    // MARK: Ownership

    /// Takes the room's lease for `leaseMilliseconds` unless another node holds it. A room this incarnation
    /// already holds is renewed under its epoch. A new epoch is never below `epochFloor + 1`.
    public func acquire(
        _ room: String, node: String, incarnation: UInt64, leaseMilliseconds: Int, epochFloor: UInt64 = 0
    ) throws(ClusterError) -> AcquireResult {
        try Self.check(room)
        let reply = try call(
            "cr_acquire", keys: [ClusterKeys.owner(room), ClusterKeys.epoch(room)], node, String(incarnation),
            String(leaseMilliseconds), String(epochFloor))
        switch reply.first?.string {
        case "OK":
            if reply.count == 2, let epoch = reply[1].string.flatMap(UInt64.init) {
                do throws(RedisError) {
                    _ = try connection.command(RedisCommand("SADD", ClusterKeys.rooms, room))
                } catch {
                    throw ClusterError(error)
                }
                return .acquired(LeaseToken(node: node, incarnation: incarnation, epoch: epoch))
            }
        case "HELD":
            if reply.count == 3, let holder = reply[1].string.flatMap(LeaseToken.init), let left = reply[2].integer {
                return .held(by: holder, remainingMilliseconds: Int(left))
            }
        default: break
        }
        throw .redis(.unexpectedReply(expected: "an acquire answer", got: RedisReply.array(reply).description))
    }

    /// Extends the lease; false when the token no longer holds it (it expired, or another node took over).
    public func renew(_ room: String, token: LeaseToken, leaseMilliseconds: Int) throws(ClusterError) -> Bool {
        try Self.check(room)
        let reply = try call("cr_renew", keys: [ClusterKeys.owner(room)], token.description, String(leaseMilliseconds))
        return reply.first?.string == "OK"
    }

    /// Gives the lease up, if the token still holds it.
    public func release(_ room: String, token: LeaseToken) throws(ClusterError) {
        try Self.check(room)
        _ = try connection.pipelineChecked([
            RedisCommand("FCALL", "cr_release", "1", ClusterKeys.owner(room), token.description)
        ])
    }

    /// The room's owner now, if any.
    public func owner(_ room: String) throws(ClusterError) -> LeaseToken? {
        try Self.check(room)
        do throws(RedisError) {
            return try connection.command(RedisCommand("GET", ClusterKeys.owner(room))).string.flatMap(LeaseToken.init)
        } catch {
            throw ClusterError(error)
        }
    }

    // MARK: Events

    /// Appends one entry with its state operations, fenced by `token`. See `AppendResult`.
    public func append(
        _ room: String, entry: RoomEntry, token: LeaseToken, operations: [StateOperation] = [],
        requestCursor: String? = nil, at time: Int64
    ) throws(ClusterError) -> AppendResult {
        try Self.check(room)
        for case .setMeta(let field, _) in operations where StateOperation.reservedMetaFields.contains(field) {
            throw .badName(field)
        }
        var arguments: [[UInt8]] = [
            token.description, String(token.epoch), entry.prev.description, entry.id.description, entry.requestID,
            entry.kind.rawValue,
        ].map { Array($0.utf8) }
        arguments.append(entry.body)
        arguments += [
            requestCursor ?? "", String(time), String(retention.entries), String(retention.chat),
            String(retention.audit),
        ].map { Array($0.utf8) }
        for operation in operations { arguments += operation.arguments }
        let keys = [
            ClusterKeys.owner(room), ClusterKeys.epoch(room), ClusterKeys.events(room), ClusterKeys.meta(room),
            ClusterKeys.peers(room), ClusterKeys.chat(room), ClusterKeys.audit(room), ClusterKeys.bans,
            ClusterKeys.bansVersion, ClusterKeys.lifts,
        ]
        let reply = try call("cr_append", keys: keys, arguments: arguments)
        let detail = reply.count > 1 ? reply[1].string ?? "" : ""
        switch reply.first?.string {
        case "OK": if let id = EntryID(detail) { return .appended(id) }
        case "DUP": if let id = EntryID(detail) { return .duplicate(id) }
        case "FENCED": return .fenced(owner: LeaseToken(detail))
        case "GAP": if let id = EntryID(detail) { return .gap(last: id) }
        default: break
        }
        throw .redis(.unexpectedReply(expected: "an append answer", got: RedisReply.array(reply).description))
    }

    /// Up to `count` entries after `after`, in order.
    public func entries(_ room: String, after: EntryID, count: Int = 1000) throws(ClusterError) -> [RoomEntry] {
        try Self.check(room)
        do throws(RedisError) {
            let reply = try connection.command(
                RedisCommand("XRANGE", ClusterKeys.events(room), "(\(after)", "+", "COUNT", String(count)))
            return try Self.decodeEntries(reply)
        } catch {
            throw ClusterError(error)
        }
    }

    /// New entries of several rooms after the given IDs, waiting up to `blockMilliseconds` for the first.
    public func waitForEntries(
        _ positions: [(room: String, after: EntryID)], count: Int = 1000, blockMilliseconds: Int
    ) throws(ClusterError) -> [(room: String, entries: [RoomEntry])] {
        guard !positions.isEmpty else { return [] }
        for position in positions { try Self.check(position.room) }
        var arguments = ["XREAD", "COUNT", String(count), "BLOCK", String(blockMilliseconds), "STREAMS"]
        arguments += positions.map { ClusterKeys.events($0.room) }
        arguments += positions.map(\.after.description)
        do throws(RedisError) {
            let reply = try connection.command(RedisCommand(arguments))
            guard !reply.isNull else { return [] }
            var result: [(room: String, entries: [RoomEntry])] = []
            for stream in try reply.requireArray("streams") {
                let pair = try stream.requireArray("a stream")
                guard pair.count == 2, let key = pair[0].string,
                    let room = positions.first(where: { ClusterKeys.events($0.room) == key })?.room
                else { continue }
                result.append((room, try Self.decodeEntries(pair[1])))
            }
            return result
        } catch {
            throw ClusterError(error)
        }
    }

    /// The room's state and last entry, read in one MULTI so they belong together.
    public func snapshot(_ room: String) throws(ClusterError) -> RoomSnapshot {
        try Self.check(room)
        do throws(RedisError) {
            let replies = try connection.pipeline([
                RedisCommand("MULTI"), RedisCommand("HGETALL", ClusterKeys.meta(room)),
                RedisCommand("HGETALL", ClusterKeys.peers(room)),
                RedisCommand("LRANGE", ClusterKeys.chat(room), "0", "-1"),
                RedisCommand("EXEC"),
            ])
            let results = try replies[4].requireArray("the transaction's replies")
            guard results.count == 3 else {
                throw RedisError.unexpectedReply(expected: "three replies", got: replies[4].description)
            }
            var meta = try Self.decodeHash(results[0])
            let peers = try Self.decodeHash(results[1])
            let chat = try results[2].requireArray("chat").map { reply -> [UInt8] in
                if case .bulk(let bytes) = reply { return bytes }
                return []
            }
            var snapshot = RoomSnapshot(peers: peers, chat: chat)
            snapshot.lastID =
                meta.removeValue(forKey: "lastId").flatMap { EntryID(String(decoding: $0, as: UTF8.self)) } ?? .zero
            snapshot.requestCursor =
                meta.removeValue(forKey: "reqCursor").map { String(decoding: $0, as: UTF8.self) } ?? "0-0"
            snapshot.lastAt =
                meta.removeValue(forKey: "lastAt").flatMap { Int64(String(decoding: $0, as: UTF8.self)) } ?? 0
            snapshot.meta = meta
            return snapshot
        } catch {
            throw ClusterError(error)
        }
    }

    /// The audit records kept for the room, oldest first.
    public func audit(_ room: String) throws(ClusterError) -> [[UInt8]] {
        try Self.check(room)
        do throws(RedisError) {
            return try connection.command(RedisCommand("LRANGE", ClusterKeys.audit(room), "0", "-1"))
                .requireArray("audit").map { reply in
                    if case .bulk(let bytes) = reply { return bytes }
                    return []
                }
        } catch {
            throw ClusterError(error)
        }
    }

    /// The rooms that have state in Redis.
    public func rooms() throws(ClusterError) -> [String] {
        do throws(RedisError) {
            return try connection.command(RedisCommand("SMEMBERS", ClusterKeys.rooms)).requireArray("rooms")
                .compactMap(\.string).sorted()
        } catch {
            throw ClusterError(error)
        }
    }

    // MARK: Requests

    /// Queues a request for the room's owner; returns its ID.
    public func submitRequest(_ room: String, from node: String, body: [UInt8]) throws(ClusterError) -> String {
        try Self.check(room)
        var command = RedisCommand(
            "XADD", ClusterKeys.requests(room), "MAXLEN", "~", String(retention.entries), "*", "node", node, "body")
        command.append(bytes: body)
        do throws(RedisError) {
            return try connection.command(command).requireString("a request ID")
        } catch {
            throw ClusterError(error)
        }
    }

    /// Requests after `cursor`, waiting up to `blockMilliseconds` for the first (0: do not wait).
    public func requests(
        _ room: String, after cursor: String, count: Int = 100, blockMilliseconds: Int = 0
    ) throws(ClusterError) -> [RoomRequest] {
        try Self.check(room)
        var arguments = ["XREAD", "COUNT", String(count)]
        if blockMilliseconds > 0 { arguments += ["BLOCK", String(blockMilliseconds)] }
        arguments += ["STREAMS", ClusterKeys.requests(room), cursor]
        do throws(RedisError) {
            let reply = try connection.command(RedisCommand(arguments))
            guard !reply.isNull else { return [] }
            var result: [RoomRequest] = []
            for stream in try reply.requireArray("streams") {
                let pair = try stream.requireArray("a stream")
                guard pair.count == 2 else { continue }
                for item in try pair[1].requireArray("requests") {
                    let parts = try item.requireArray("a request")
                    guard parts.count == 2, let id = parts[0].string else { continue }
                    let fields = try Self.decodeHash(parts[1])
                    result.append(
                        RoomRequest(
                            id: id, node: fields["node"].map { String(decoding: $0, as: UTF8.self) } ?? "",
                            body: fields["body"] ?? []))
                }
            }
            return result
        } catch {
            throw ClusterError(error)
        }
    }

    // MARK: Decoding

    static func check(_ room: String) throws(ClusterError) {
        guard ClusterKeys.isValidName(room) else { throw .badName(room) }
    }

    static func decodeHash(_ reply: RedisReply) throws(RedisError) -> [String: [UInt8]] {
        let flat = try reply.requireArray("a hash")
        var result: [String: [UInt8]] = [:]
        var index = 0
        while index + 1 < flat.count {
            if let key = flat[index].string, case .bulk(let value) = flat[index + 1] { result[key] = value }
            index += 2
        }
        return result
    }

    static func decodeEntries(_ reply: RedisReply) throws(RedisError) -> [RoomEntry] {
        var entries: [RoomEntry] = []
        for item in try reply.requireArray("entries") {
            let parts = try item.requireArray("an entry")
            guard parts.count == 2, let id = parts[0].string.flatMap(EntryID.init) else {
                throw .unexpectedReply(expected: "an entry", got: item.description)
            }
            let fields = try decodeHash(parts[1])
            func text(_ name: String) -> String { fields[name].map { String(decoding: $0, as: UTF8.self) } ?? "" }
            guard let prev = EntryID(text("prev")), let kind = EntryKind(rawValue: text("kind")) else {
                throw .unexpectedReply(expected: "an entry's fields", got: item.description)
            }
            entries.append(
                RoomEntry(
                    id: id, prev: prev, requestID: text("rid"), epoch: UInt64(text("epoch")) ?? 0, kind: kind,
                    body: fields["body"] ?? []))
        }
        return entries
    }
}

extension RedisConnection {
    /// A pipeline whose error replies are thrown (the first one).
    func pipelineChecked(_ commands: [RedisCommand]) throws(ClusterError) -> [RedisReply] {
        do throws(RedisError) {
            let replies = try pipeline(commands)
            for reply in replies { _ = try reply.checked() }
            return replies
        } catch {
            throw ClusterError(error)
        }
    }
}
