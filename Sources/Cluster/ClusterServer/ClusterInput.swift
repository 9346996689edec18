import RoomCore
import RoomProtocol
import RoomServer
import StrictJSON

/// One thing that happened to a room in a cluster, as its owner decided it: the body of an entry of the room's
/// event stream. Every node holding a copy of the room applies the same inputs in the same order to its own
/// `RoomAuthority`, which is deterministic given its state and the input (the owner's time is in the input),
/// so every copy emits the same events with the same numbers and holds the same state.
struct ClusterInput: Sendable, Equatable {
    enum Kind: String, Sendable {
        /// A peer joins through `node`'s connection `connection`.
        case join
        /// Peers connected to `node` left.
        case leave
        /// A request from a peer connected to `node`.
        case request
        /// Audio levels measured by `node`'s media.
        case levels
        /// `node` is gone (its registration expired, or a new incarnation replaced it): its peers leave.
        case nodeGone = "node_gone"
        /// The owner's clock passed a pending invitation's lifetime: the invitations due by `now` lapse.
        case expireInvitations = "expire_invitations"
        /// The owner gave up the recorder of the room's stream to `stream` (it kept failing), for `reason`.
        case streamGaveUp = "stream_gave_up"
        /// The owner's recorder of the room could not start or was given up: `reason` is the sentence whoever may
        /// record is told, on every node.
        case recorderProblem = "recorder_problem"
        /// Network quality scores of `node`'s own peers that changed, throttled there (at most one per peer every
        /// 2 s), gathered into one input per hand-over of the node's measures.
        case networkQuality = "network_quality"
    }

    struct Departed: Sendable, Equatable {
        var peer: PeerID
        var reason: String
        /// The node's number for the connection that closed.
        var connection: UInt64
    }

    var kind: Kind
    /// The node whose client this came from (for `nodeGone`, the node that went).
    var node: String
    /// The node's number for the joining client's connection.
    var connection: UInt64 = 0
    var peer: PeerID?
    var name: String?
    var role: RoleName?
    var departures: [Departed]?
    var requestString: String?
    var requestInteger: Int64?
    var request: ClientRequest?
    var levels: [SpeakerLevel]?
    /// The scores of `networkQuality`, in the order of their peers' identities.
    var qualities: [PeerQuality]?
    /// The SSRC the joiner's node gave it, for its media to be recognised on every node.
    var ssrc: UInt32?
    /// Who asked for the recording, as a joining recorder says (absent from anyone else's join).
    var startedBy: PeerID?
    /// The stream a joining recorder carries (`X-Clubroom-Stream`), or the one given up (`streamGaveUp`).
    var stream: String?
    /// Why the stream was given up (`streamGaveUp`), or the recorder's sentence (`recorderProblem`).
    var reason: String?
    /// The owner's clock when it decided (the edge's until then).
    var now: Timestamp

    var requestID: RequestID? {
        if let requestString { return .string(requestString) }
        if let requestInteger { return .integer(requestInteger) }
        return nil
    }

    static func join(
        node: String, connection: UInt64, peer: PeerID, name: String, role: RoleName, ssrc: UInt32? = nil,
        startedBy: PeerID? = nil, stream: String? = nil, now: Timestamp
    ) -> ClusterInput {
        var input = ClusterInput(
            kind: .join, node: node, connection: connection, peer: peer, name: name, role: role, now: now)
        input.ssrc = ssrc
        input.startedBy = startedBy
        input.stream = stream
        return input
    }

    static func streamGaveUp(node: String, stream: String, reason: String, now: Timestamp) -> ClusterInput {
        var input = ClusterInput(kind: .streamGaveUp, node: node, now: now)
        input.stream = stream
        input.reason = reason
        return input
    }

    static func recorderProblem(node: String, sentence: String, now: Timestamp) -> ClusterInput {
        var input = ClusterInput(kind: .recorderProblem, node: node, now: now)
        input.reason = sentence
        return input
    }

    static func leave(node: String, _ departures: [(Departure, connection: UInt64)], now: Timestamp) -> ClusterInput {
        ClusterInput(
            kind: .leave, node: node,
            departures: departures.map {
                Departed(peer: $0.0.peer, reason: $0.0.reason.rawValue, connection: $0.connection)
            }, now: now)
    }

    static func request(
        node: String, peer: PeerID, id: RequestID?, _ request: ClientRequest, now: Timestamp
    )
        -> ClusterInput
    {
        var input = ClusterInput(kind: .request, node: node, peer: peer, request: request, now: now)
        switch id {
        case .string(let text): input.requestString = text
        case .integer(let number): input.requestInteger = number
        case nil: break
        }
        return input
    }

    static func levels(node: String, _ levels: [PeerID: Int], now: Timestamp) -> ClusterInput {
        ClusterInput(
            kind: .levels, node: node,
            levels: levels.sorted { $0.key < $1.key }.map { SpeakerLevel(peer: $0.key, level: $0.value) }, now: now)
    }

    static func networkQuality(node: String, _ qualities: [PeerQuality], now: Timestamp) -> ClusterInput {
        var input = ClusterInput(kind: .networkQuality, node: node, now: now)
        input.qualities = qualities.sorted { $0.peer < $1.peer }
        return input
    }

    static func nodeGone(_ node: String, now: Timestamp) -> ClusterInput {
        ClusterInput(kind: .nodeGone, node: node, now: now)
    }

    static func expireInvitations(node: String, now: Timestamp) -> ClusterInput {
        ClusterInput(kind: .expireInvitations, node: node, now: now)
    }

    /// The input as the body of a stream entry (or a queued request): `ClusterFormat`'s document, which cannot
    /// fail to encode.
    func encoded() -> [UInt8] {
        var object = JSONObject()
        object["kind"] = .string(kind.rawValue)
        object["node"] = .string(node)
        object["connection"] = .integer(Int64(clamping: connection))
        if let peer { object["peer"] = .string(peer.rawValue) }
        if let name { object["name"] = .string(name) }
        if let role { object["role"] = .string(role.rawValue) }
        if let departures {
            object["departures"] = .array(
                departures.map {
                    .object(
                        JSONObject([
                            ("peer", .string($0.peer.rawValue)), ("reason", .string($0.reason)),
                            ("connection", .integer(Int64(clamping: $0.connection))),
                        ]))
                })
        }
        if let request { object["request"] = ControlCodec.json(ClientMessage(request, id: requestID)) }
        if let levels {
            object["levels"] = .array(
                levels.map {
                    .object(JSONObject([("peer", .string($0.peer.rawValue)), ("level", .integer(Int64($0.level)))]))
                })
        }
        if let qualities {
            object["qualities"] = .array(
                qualities.map {
                    .object(
                        JSONObject([
                            ("peer", .string($0.peer.rawValue)), ("score", .integer(Int64($0.score))),
                            ("lossPercent", .integer(Int64($0.lossPercent))),
                            ("jitterMilliseconds", .integer(Int64($0.jitterMilliseconds))),
                            ("rttMilliseconds", .integer(Int64($0.rttMilliseconds))),
                        ]))
                })
        }
        if let ssrc { object["ssrc"] = .integer(Int64(ssrc)) }
        if let startedBy { object["startedBy"] = .string(startedBy.rawValue) }
        if let stream { object["stream"] = .string(stream) }
        if let reason { object["reason"] = .string(reason) }
        object["now"] = .integer(now)
        return ClusterFormat.document(object)
    }

    /// Reads what `encoded()` wrote; anything else (another format version included) throws.
    init(decoding bytes: [UInt8]) throws(ClusterFormatError) {
        let fields = try ClusterFormat.read(bytes)
        let kindName = try fields.string("kind")
        guard let kind = Kind(rawValue: kindName) else { throw .malformed("unknown input kind \"\(kindName)\"") }
        self.init(kind: kind, node: try fields.string("node"), connection: try fields.unsigned("connection"), now: 0)
        now = try fields.integer("now")
        peer = try fields.optionalString("peer").map { PeerID($0) }
        name = try fields.optionalString("name")
        role = try fields.optionalString("role").map { RoleName($0) }
        departures = try fields.optionalObjects("departures")?.map { departed throws(ClusterFormatError) in
            Departed(
                peer: try departed.peer("peer"), reason: try departed.string("reason"),
                connection: try departed.unsigned("connection"))
        }
        if let value = fields.optional("request") {
            guard case .object = value else { throw fields.fail("request", "an object") }
            let message: ClientMessage
            do {
                message = try ControlCodec.decodeClient(value.encoded)
            } catch {
                throw .malformed("\"request\" is not a request: \(error)")
            }
            request = message.request
            switch message.id {
            case .string(let text): requestString = text
            case .integer(let number): requestInteger = number
            case nil: break
            }
        }
        levels = try fields.optionalObjects("levels")?.map { level throws(ClusterFormatError) in
            SpeakerLevel(peer: try level.peer("peer"), level: Int(clamping: try level.integer("level")))
        }
        qualities = try fields.optionalObjects("qualities")?.map { quality throws(ClusterFormatError) in
            func bounded(_ key: String, _ range: ClosedRange<Int64>) throws(ClusterFormatError) -> Int {
                let value = try quality.integer(key)
                guard range.contains(value) else {
                    throw quality.fail(key, "an integer from \(range.lowerBound) to \(range.upperBound)")
                }
                return Int(value)
            }
            return PeerQuality(
                peer: try quality.peer("peer"), score: try bounded("score", 0...Int64(PeerQuality.best)),
                lossPercent: try bounded("lossPercent", 0...100),
                jitterMilliseconds: try bounded("jitterMilliseconds", 0...Int64(Int32.max)),
                rttMilliseconds: try bounded("rttMilliseconds", 0...Int64(Int32.max)))
        }
        if let ssrc = try fields.optionalInteger("ssrc") {
            guard let value = UInt32(exactly: ssrc) else { throw fields.fail("ssrc", "a 32-bit SSRC") }
            self.ssrc = value
        }
        if fields.optional("startedBy") != nil { startedBy = try fields.peer("startedBy") }
        stream = try fields.optionalString("stream")
        reason = try fields.optionalString("reason")
    }

    init(
        kind: Kind, node: String, connection: UInt64 = 0, peer: PeerID? = nil, name: String? = nil,
        role: RoleName? = nil, departures: [Departed]? = nil, request: ClientRequest? = nil,
        levels: [SpeakerLevel]? = nil,
        now: Timestamp
    ) {
        self.kind = kind
        self.node = node
        self.connection = connection
        self.peer = peer
        self.name = name
        self.role = role
        self.departures = departures
        self.request = request
        self.levels = levels
        self.now = now
    }
}

/// Where each peer of a room is connected: the node and that node's number for the connection. Part of every
/// copy of a room, changed only by applying inputs, so every copy agrees on it.
struct PeerHome: Sendable, Equatable {
    var node: String
    var connection: UInt64
    /// The SSRC its media is sent with, when the node serves audio.
    var ssrc: UInt32?
}

/// A room's copy on one node of a cluster: the authority and where its peers are connected, changed only by
/// applying the room's inputs in stream order.
struct ReplicatedRoom: Sendable {
    var authority: RoomAuthority
    var homes: [PeerID: PeerHome] = [:]

    /// What applying an input led to.
    enum Applied: Sendable {
        case joined(JoinResult)
        case outcome(Outcome)
    }

    /// The checkpoint of the authority and the homes together, as one `ClusterFormat` document (a reset entry's
    /// body, and the room's checkpoint in Redis), which cannot fail to encode.
    func encoded() -> [UInt8] {
        let homes = homes.sorted { $0.key < $1.key }.map { peer, home -> (String, JSONValue) in
            var object = JSONObject()
            object["node"] = .string(home.node)
            object["connection"] = .integer(Int64(clamping: home.connection))
            if let ssrc = home.ssrc { object["ssrc"] = .integer(Int64(ssrc)) }
            return (peer.rawValue, .object(object))
        }
        return ClusterFormat.document(
            JSONObject([("room", ClusterFormat.json(authority.checkpoint)), ("homes", .object(JSONObject(homes)))]))
    }

    init(authority: RoomAuthority) {
        self.authority = authority
    }

    /// Reads what `encoded()` wrote; anything else (another format version included) throws. `streamDestinations`
    /// are this node's (every node of a cluster names the same ones, as it reads the same role table).
    init(
        name: String, roles: RoleTable, maxPeers: Int, streamDestinations: [String] = [], decoding bytes: [UInt8]
    ) throws(ClusterFormatError) {
        let fields = try ClusterFormat.read(bytes)
        let checkpoint = try ClusterFormat.checkpoint(try fields.object("room"))
        authority = RoomAuthority(name: name, roles: roles, restoring: checkpoint, maxPeers: maxPeers)
        authority.streamDestinations = streamDestinations
        let stored = try fields.object("homes")
        for key in stored.json.keys {
            let home = try stored.object(key)
            var ssrc: UInt32?
            if let number = try home.optionalInteger("ssrc") {
                guard let value = UInt32(exactly: number) else { throw home.fail("ssrc", "a 32-bit SSRC") }
                ssrc = value
            }
            homes[PeerID(key)] = PeerHome(
                node: try home.string("node"), connection: try home.unsigned("connection"), ssrc: ssrc)
        }
    }

    /// Applies one input. Deterministic: the same state and input give the same result on every node.
    mutating func apply(_ input: ClusterInput) -> Applied {
        switch input.kind {
        case .join:
            guard let peer = input.peer, let role = input.role else { return .outcome(Outcome()) }
            let result = authority.join(
                id: peer, name: input.name ?? peer.rawValue, role: role, now: input.now, startedBy: input.startedBy,
                stream: input.stream)
            if case .joined = result {
                homes[peer] = PeerHome(node: input.node, connection: input.connection, ssrc: input.ssrc)
            }
            return .joined(result)
        case .leave:
            // Only the connection a peer is on now can take it away: an older one (on another node, say) closing
            // late must not.
            let departures = (input.departures ?? []).compactMap { departed -> Departure? in
                guard let home = homes[departed.peer], home.node == input.node, home.connection == departed.connection
                else { return nil }
                return Departure(departed.peer, LeaveReason(rawValue: departed.reason) ?? .disconnected)
            }
            return .outcome(settle(authority.leave(departures, now: input.now)))
        case .nodeGone:
            let gone = authority.order.filter { homes[$0]?.node == input.node }.map { Departure($0, .disconnected) }
            return .outcome(settle(authority.leave(gone, now: input.now)))
        case .request:
            guard let peer = input.peer, let request = input.request else { return .outcome(Outcome()) }
            return .outcome(settle(authority.handle(request, from: peer, id: input.requestID, now: input.now)))
        case .levels:
            var levels: [PeerID: Int] = [:]
            for level in input.levels ?? [] { levels[level.peer] = level.level }
            return .outcome(authority.updateLevels(levels, now: input.now))
        case .expireInvitations:
            return .outcome(settle(authority.expireInvitations(now: input.now)))
        case .streamGaveUp:
            guard let stream = input.stream else { return .outcome(Outcome()) }
            return .outcome(authority.streamGaveUp(stream, reason: input.reason ?? "", now: input.now))
        case .recorderProblem:
            guard let sentence = input.reason else { return .outcome(Outcome()) }
            return .outcome(authority.recorderProblem(sentence))
        case .networkQuality:
            return .outcome(authority.announceQuality(input.qualities ?? [], now: input.now))
        }
    }

    /// Forgets where peers the outcome took out of the room were connected.
    private mutating func settle(_ outcome: Outcome) -> Outcome {
        var gone = outcome.closes.map(\.peer)
        for delivery in outcome.deliveries {
            switch delivery.message.event {
            case .peerLeft(let peer, _), .removed(let peer, _, _): gone.append(peer)
            case .peersLeft(let departures): gone.append(contentsOf: departures.map(\.peer))
            case .roomEnded: gone.append(contentsOf: homes.keys)
            default: continue
            }
        }
        for peer in gone where authority.peers[peer] == nil { homes[peer] = nil }
        return outcome
    }
}
