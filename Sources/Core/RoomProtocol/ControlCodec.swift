import RoomCore
import StrictJSON

/// Why a control message was refused, with the error code the server answers with.
public struct ControlDecodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The code of the `error` message to send back.
    public var code: ErrorCode
    /// A sentence saying what is wrong.
    public var message: String
    /// The request's id, when it could be read.
    public var id: RequestID?

    public init(_ code: ErrorCode, _ message: String, id: RequestID? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }

    public var description: String { "\(code): \(message)" }
}

/// Encodes and decodes control messages; see `docs/protocol.md`.
///
/// Decoding is strict: the text must be one JSON object with no duplicate key anywhere, a known `type`, every
/// required field of the right type, and strings within `ControlLimits`. Fields a version does not know are
/// ignored, so a newer client can talk to an older server.
public enum ControlCodec {
    static let parser = StrictJSONParser(maxDepth: 16, maxBytes: ControlLimits.maxFrameBytes)
    /// The server's messages may be far larger than a request: a snapshot lists every peer of the room.
    static let serverParser = StrictJSONParser(maxDepth: 16, maxBytes: ControlLimits.maxServerMessageBytes)
    /// A client takes a server's strings of any length the message allows and cuts them itself (`ServerText`),
    /// so that one overlong name cannot make it drop a whole snapshot.
    static let serverStringLimit = ControlLimits.maxServerMessageBytes

    // MARK: Client messages

    /// Decodes a client's text frame.
    public static func decodeClient(_ bytes: some Collection<UInt8>) throws(ControlDecodeError) -> ClientMessage {
        let object = try parseObject(bytes)
        let fields = Fields(object)
        let id = try readRequestID(object)
        do throws(ControlDecodeError) {
            try checkVersion(fields)
            let type = try fields.string("type", maxBytes: 64)
            let request: ClientRequest
            switch type {
            case "raise_hand": request = .raiseHand
            case "lower_hand":
                // With a peer, someone else's hand (checked as an identity like any other `peer`).
                let named = (try fields.optionalString("peer", maxBytes: ControlLimits.maxIdentityBytes)) != nil
                request = named ? .lowerHandOf(try fields.peer("peer")) : .lowerHand
            case "clear_hands": request = .clearHands
            case "set_hands_allowed": request = .setHandsAllowed(try fields.bool("allowed"))
            case "invite": request = .invite(try fields.peer("peer"))
            case "accept_invite": request = .acceptInvite
            case "decline_invite": request = .declineInvite
            case "withdraw_invite": request = .withdrawInvite(try fields.peer("peer"))
            case "set_role":
                request = .setRole(
                    try fields.peer("peer"), RoleName(try fields.string("role", maxBytes: ControlLimits.maxRoleBytes)))
            case "step_down": request = .stepDown
            case "set_mute": request = .setMute(try fields.bool("muted"))
            case "set_mic": request = .setMicWorking(try fields.bool("working"))
            case "set_playing": request = .setPlaying(try fields.bool("playing"))
            case "mute_peer": request = .mutePeer(try fields.peer("peer"))
            case "mute_all": request = .muteAll
            case "remove":
                request = .remove(
                    try fields.peer("peer"),
                    reason: try fields.optionalString("reason", maxCharacters: ControlLimits.maxReasonCharacters),
                    withdrawLink: try fields.optionalBool("withdraw_link") ?? false)
            case "set_topic":
                request = .setTopic(try fields.string("text", maxCharacters: ControlLimits.maxTopicCharacters))
            case "end_room":
                request = .endRoom(
                    reason: try fields.optionalString("reason", maxCharacters: ControlLimits.maxReasonCharacters))
            case "chat":
                request = .chat(
                    try fields.string("text", maxCharacters: ControlLimits.maxChatCharacters),
                    to: try readChatAudience(fields))
            case "leave": request = .leave
            case "set_listed": request = .setListed(try fields.bool("listed"))
            case "create_link":
                request = .createLink(
                    role: RoleName(try fields.string("role", maxBytes: ControlLimits.maxRoleBytes)),
                    ttl: try fields.optionalInteger("ttl") ?? ClientRequest.defaultLinkLifetime,
                    maxUses: try fields.optionalInteger("max_uses"))
            case "list_links": request = .listLinks
            case "revoke_link": request = .revokeLink(try fields.string("link", maxBytes: 64))
            case "set_locked": request = .setLocked(try fields.bool("locked"))
            case "admit": request = .admitWaiting(try fields.string("name", maxBytes: ControlLimits.maxIdentityBytes))
            case "deny": request = .denyWaiting(try fields.string("name", maxBytes: ControlLimits.maxIdentityBytes))
            case "react": request = .react(try readReaction(fields, "emoji"))
            default:
                throw ControlDecodeError(.unknownType, "unknown message type \"\(type)\"")
            }
            return ClientMessage(request, id: id)
        } catch {
            var error = error
            error.id = id
            throw error
        }
    }

    /// Decodes a client's text frame given as a string.
    public static func decodeClient(_ text: String) throws(ControlDecodeError) -> ClientMessage {
        try decodeClient(Array(text.utf8))
    }

    /// The JSON form of a client's message.
    public static func json(_ message: ClientMessage) -> JSONValue {
        var object = JSONObject()
        object["type"] = .string(message.request.typeName)
        switch message.id {
        case .string(let value): object["id"] = .string(value)
        case .integer(let value): object["id"] = .integer(value)
        case nil: break
        }
        switch message.request {
        case .raiseHand, .lowerHand, .acceptInvite, .declineInvite, .stepDown, .leave, .muteAll, .clearHands: break
        case .invite(let peer), .withdrawInvite(let peer), .mutePeer(let peer), .lowerHandOf(let peer):
            object["peer"] = .string(peer.rawValue)
        case .setRole(let peer, let role):
            object["peer"] = .string(peer.rawValue)
            object["role"] = .string(role.rawValue)
        case .setMute(let muted): object["muted"] = .bool(muted)
        case .setMicWorking(let working): object["working"] = .bool(working)
        case .setPlaying(let playing): object["playing"] = .bool(playing)
        case .remove(let peer, let reason, let withdrawLink):
            object["peer"] = .string(peer.rawValue)
            if let reason { object["reason"] = .string(reason) }
            if withdrawLink { object["withdraw_link"] = .bool(true) }
        case .setTopic(let text): object["text"] = .string(text)
        case .endRoom(let reason): if let reason { object["reason"] = .string(reason) }
        case .chat(let text, let to):
            object["text"] = .string(text)
            if let target = json(to) { object["to"] = target }
        case .setListed(let listed): object["listed"] = .bool(listed)
        case .setHandsAllowed(let allowed): object["allowed"] = .bool(allowed)
        case .createLink(let role, let ttl, let maxUses):
            object["role"] = .string(role.rawValue)
            object["ttl"] = .integer(ttl)
            if let maxUses { object["max_uses"] = .integer(maxUses) }
        case .listLinks: break
        case .revokeLink(let link): object["link"] = .string(link)
        case .setLocked(let locked): object["locked"] = .bool(locked)
        case .admitWaiting(let name), .denyWaiting(let name): object["name"] = .string(name)
        case .react(let reaction): object["emoji"] = .string(reaction.emoji)
        }
        return .object(object)
    }

    /// The text a client sends for `message`.
    public static func encode(_ message: ClientMessage) -> [UInt8] {
        json(message).encoded
    }

    // MARK: Server messages

    /// The JSON form of a server's message.
    public static func json(_ message: ServerMessage) -> JSONValue {
        var object = JSONObject()
        object["type"] = .string(message.event.typeName)
        if let seq = message.seq { object["seq"] = .integer(seq) }
        switch message.event {
        case .joined(let snapshot):
            object["protocol"] = .integer(snapshot.protocolVersion)
            object["room"] = .string(snapshot.room)
            object["self"] = .string(snapshot.selfID.rawValue)
            object["topic"] = .string(snapshot.topic)
            object["resumed"] = .bool(snapshot.resumed)
            if let tokenRole = snapshot.tokenRole { object["token_role"] = .string(tokenRole.rawValue) }
            object["listed"] = .bool(snapshot.listed)
            object["peers"] = .array(snapshot.peers.map(json))
            object["chat"] = .array(snapshot.chat.map(json))
            object["roles"] = json(snapshot.roles)
        case .peerJoined(let peer):
            object["peer"] = json(peer)
        case .peersJoined(let peers):
            object["peers"] = .array(peers.map(json))
        case .peerLeft(let peer, let reason):
            object["peer"] = .string(peer.rawValue)
            object["reason"] = .string(reason.rawValue)
        case .peersLeft(let departures):
            object["peers"] = .array(
                departures.map {
                    .object(JSONObject([("peer", .string($0.peer.rawValue)), ("reason", .string($0.reason.rawValue))]))
                })
        case .roleChanged(let peer, let role, let by, let stepUp):
            object["peer"] = .string(peer.rawValue)
            object["role"] = .string(role.rawValue)
            object["by"] = .string(by.rawValue)
            if let stepUp { object["step_up"] = .string(stepUp.rawValue) }
        case .handRaised(let peer, let at):
            object["peer"] = .string(peer.rawValue)
            object["at"] = .integer(at)
        case .handLowered(let peer, let by), .inviteDeclined(let peer, let by), .inviteWithdrawn(let peer, let by),
            .askedToMute(let peer, let by):
            object["peer"] = .string(peer.rawValue)
            object["by"] = .string(by.rawValue)
        case .invited(let peer, let by, let at):
            object["peer"] = .string(peer.rawValue)
            object["by"] = .string(by.rawValue)
            object["at"] = .integer(at)
        case .inviteExpired(let peer):
            object["peer"] = .string(peer.rawValue)
        case .roomEnding(let peer, let name, let at):
            object["peer"] = .string(peer.rawValue)
            object["name"] = .string(name)
            if let at { object["at"] = .integer(at) }
        case .muteChanged(let peer, let muted, let by):
            object["peer"] = .string(peer.rawValue)
            object["muted"] = .bool(muted)
            object["by"] = .string(by.rawValue)
        case .playingChanged(let peer, let playing):
            object["peer"] = .string(peer.rawValue)
            object["playing"] = .bool(playing)
        case .speakers(let levels):
            object["levels"] = .array(
                levels.map {
                    .object(JSONObject([("peer", .string($0.peer.rawValue)), ("level", .integer(Int64($0.level)))]))
                })
        case .networkQuality(let peers):
            object["peers"] = .array(
                peers.map {
                    .object(
                        JSONObject([
                            ("peer", .string($0.peer.rawValue)), ("score", .integer(Int64($0.score))),
                            ("loss", .double(Double($0.lossPercent) / 100)),
                            ("jitter_ms", .integer(Int64($0.jitterMilliseconds))),
                            ("rtt_ms", .integer(Int64($0.rttMilliseconds))),
                        ]))
                })
        case .reaction(let burst):
            object["counts"] = .array(
                burst.counts.map {
                    .object(JSONObject([("emoji", .string($0.reaction.emoji)), ("count", .integer(Int64($0.count)))]))
                })
            object["senders"] = .array(
                burst.senders.map {
                    .object(JSONObject([("peer", .string($0.peer.rawValue)), ("emoji", .string($0.reaction.emoji))]))
                })
        case .chat(let chat):
            for member in jsonObject(chat).members { object[member.key] = member.value }
        case .removed(let peer, let by, let reason):
            object["peer"] = .string(peer.rawValue)
            object["by"] = .string(by.rawValue)
            object["reason"] = .string(reason)
        case .roomEnded(let by, let reason):
            object["by"] = .string(by.rawValue)
            object["reason"] = .string(reason)
        case .topicChanged(let topic, let by):
            object["topic"] = .string(topic)
            object["by"] = .string(by.rawValue)
        case .handsAllowed(let allowed, let by):
            object["allowed"] = .bool(allowed)
            object["by"] = .string(by.rawValue)
        case .listingChanged(let listed, let by):
            object["listed"] = .bool(listed)
            object["by"] = .string(by.rawValue)
        case .micChanged(let peer, let working):
            object["peer"] = .string(peer.rawValue)
            object["working"] = .bool(working)
        case .inviteLink(let room, let role, let token, let expiresAt, let id):
            object["room"] = .string(room)
            object["role"] = .string(role.rawValue)
            object["token"] = .string(token)
            object["expires_at"] = .integer(expiresAt)
            switch id {
            case .string(let value): object["id"] = .string(value)
            case .integer(let value): object["id"] = .integer(value)
            case nil: break
            }
        case .knock(let room, let knock):
            object["room"] = .string(room)
            object["peer"] = .string(knock.peer.rawValue)
            object["name"] = .string(knock.name)
            object["state"] = .string(knock.state.rawValue)
            if let by = knock.by { object["by"] = .string(by.rawValue) }
        case .waiting(let room):
            object["room"] = .string(room)
        case .links(let room, let links, let withdrawn, let locked, let id):
            object["room"] = .string(room)
            object["links"] = .array(
                links.map { link in
                    var entry = JSONObject()
                    entry["id"] = .string(link.id)
                    entry["role"] = .string(link.role.rawValue)
                    entry["by"] = .string(link.by.rawValue)
                    entry["expires_at"] = .integer(link.expiresAt)
                    entry["uses"] = .integer(link.uses)
                    if let maxUses = link.maxUses { entry["max_uses"] = .integer(maxUses) }
                    entry["withdrawn"] = .bool(link.withdrawn)
                    return .object(entry)
                })
            object["withdrawn"] = .array(withdrawn.map { .string($0) })
            object["locked"] = .bool(locked)
            switch id {
            case .string(let value): object["id"] = .string(value)
            case .integer(let value): object["id"] = .integer(value)
            case nil: break
            }
        case .error(let code, let message, let id):
            object["code"] = .string(code.rawValue)
            object["message"] = .string(message)
            switch id {
            case .string(let value): object["id"] = .string(value)
            case .integer(let value): object["id"] = .integer(value)
            case nil: break
            }
        }
        return .object(object)
    }

    /// The text the server sends for `message`.
    public static func encode(_ message: ServerMessage) -> [UInt8] {
        guard case .joined(let snapshot) = message.event else { return json(message).encoded }
        // A snapshot of a large room holds thousands of peers: write them straight into bytes rather than
        // through a tree of values. The result is the same as `json(message).encoded`.
        var output: [UInt8] = []
        output.reserveCapacity(256 + snapshot.peers.count * 128)
        output.append(contentsOf: #"{"type":"joined""#.utf8)
        if let seq = message.seq { output.append(contentsOf: #","seq":\#(seq)"#.utf8) }
        output.append(contentsOf: #","protocol":\#(snapshot.protocolVersion),"room":"#.utf8)
        JSONValue.writeString(snapshot.room, into: &output)
        output.append(contentsOf: #","self":"#.utf8)
        JSONValue.writeString(snapshot.selfID.rawValue, into: &output)
        output.append(contentsOf: #","topic":"#.utf8)
        JSONValue.writeString(snapshot.topic, into: &output)
        output.append(contentsOf: (snapshot.resumed ? #","resumed":true"# : #","resumed":false"#).utf8)
        if let tokenRole = snapshot.tokenRole {
            output.append(contentsOf: #","token_role":"#.utf8)
            JSONValue.writeString(tokenRole.rawValue, into: &output)
        }
        output.append(contentsOf: (snapshot.listed ? #","listed":true,"peers":["# : #","listed":false,"peers":["#).utf8)
        for (index, peer) in snapshot.peers.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            write(peer, into: &output)
        }
        output.append(contentsOf: #"],"chat":"#.utf8)
        JSONValue.array(snapshot.chat.map(json)).write(into: &output)
        output.append(contentsOf: #","roles":"#.utf8)
        json(snapshot.roles).write(into: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Appends a peer's JSON, the same bytes as `json(peer).encoded`.
    static func write(_ announced: AnnouncedPeer, into output: inout [UInt8]) {
        let peer = announced.peer
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONValue.writeString(peer.id.rawValue, into: &output)
        output.append(contentsOf: #","name":"#.utf8)
        JSONValue.writeString(peer.name, into: &output)
        output.append(contentsOf: #","role":"#.utf8)
        JSONValue.writeString(peer.role.rawValue, into: &output)
        output.append(contentsOf: (peer.muted ? #","muted":true"# : #","muted":false"#).utf8)
        if let raised = peer.handRaisedAt {
            output.append(contentsOf: #","hand_raised_at":\#(raised)"#.utf8)
        } else {
            output.append(contentsOf: #","hand_raised_at":null"#.utf8)
        }
        output.append(contentsOf: #","joined_at":\#(peer.joinedAt),"level":\#(peer.level)"#.utf8)
        if !peer.micWorking { output.append(contentsOf: #","mic_failed":true"#.utf8) }
        if peer.playing { output.append(contentsOf: #","playing":true"#.utf8) }
        if let invitation = announced.invitation {
            output.append(contentsOf: #","invited_by":"#.utf8)
            JSONValue.writeString(invitation.by.rawValue, into: &output)
            output.append(contentsOf: #","invited_at":\#(invitation.at)"#.utf8)
        }
        if let stepUp = announced.stepUp {
            output.append(contentsOf: #","step_up":"#.utf8)
            JSONValue.writeString(stepUp.rawValue, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Decodes a server's text frame. Clients are as strict as the server, except that a newer server's
    /// unknown event types are reported as `unknownType` for the caller to skip.
    public static func decodeServer(_ bytes: some Collection<UInt8>) throws(ControlDecodeError) -> ServerMessage {
        let fields = Fields(try parseObject(bytes, with: serverParser), stringLimit: serverStringLimit)
        let type = try fields.string("type", maxBytes: 64)
        let seq = try fields.optionalInteger("seq")
        let event: WireEvent
        switch type {
        case "joined":
            let peers = try fields.array("peers").map { value throws(ControlDecodeError) in try readPeer(value) }
            let chat = try fields.array("chat").map { value throws(ControlDecodeError) in try readChat(value) }
            event = .joined(
                JoinedSnapshot(
                    room: try fields.string("room"), protocolVersion: try fields.integer("protocol"),
                    selfID: try fields.peer("self"), peers: peers, topic: try fields.string("topic"), chat: chat,
                    roles: try readRoles(try fields.array("roles")), resumed: try fields.bool("resumed"),
                    tokenRole: try fields.optionalString("token_role", maxBytes: ControlLimits.maxRoleBytes).map {
                        RoleName($0)
                    },
                    listed: try fields.optionalBool("listed") ?? true))
        case "peer_joined":
            event = .peerJoined(try readPeer(try fields.value("peer")))
        case "peers_joined":
            let peers = try fields.array("peers").map { value throws(ControlDecodeError) in try readPeer(value) }
            guard !peers.isEmpty else { throw ControlDecodeError(.badRequest, "\"peers\" is empty") }
            event = .peersJoined(peers)
        case "peer_left":
            event = .peerLeft(peer: try fields.peer("peer"), reason: try fields.leaveReason())
        case "peers_left":
            let departures = try fields.array("peers").map { value throws(ControlDecodeError) in
                let departure = Fields(try objectValue(value, "peers"), stringLimit: serverStringLimit)
                return Departure(try departure.peer("peer"), try departure.leaveReason())
            }
            guard !departures.isEmpty else { throw ControlDecodeError(.badRequest, "\"peers\" is empty") }
            event = .peersLeft(departures)
        case "role_changed":
            event = .roleChanged(
                peer: try fields.peer("peer"), role: RoleName(try fields.string("role")), by: try fields.actor(),
                stepUp: try fields.optionalString("step_up", maxBytes: ControlLimits.maxRoleBytes).map { RoleName($0) })
        case "hand_raised":
            event = .handRaised(peer: try fields.peer("peer"), at: try fields.integer("at"))
        case "hand_lowered":
            event = .handLowered(peer: try fields.peer("peer"), by: try fields.actor())
        case "mute_changed":
            event = .muteChanged(peer: try fields.peer("peer"), muted: try fields.bool("muted"), by: try fields.actor())
        case "playing_changed":
            event = .playingChanged(peer: try fields.peer("peer"), playing: try fields.bool("playing"))
        case "speakers":
            let levels = try fields.array("levels").map { value throws(ControlDecodeError) -> SpeakerLevel in
                let level = Fields(try objectValue(value, "levels"), stringLimit: serverStringLimit)
                return SpeakerLevel(
                    peer: try level.peer("peer"), level: Int(clamping: try level.integer("level", in: 0...100)))
            }
            event = .speakers(levels: levels)
        case "network_quality":
            let peers = try fields.array("peers").map { value throws(ControlDecodeError) -> PeerQuality in
                let entry = Fields(try objectValue(value, "peers"), stringLimit: serverStringLimit)
                return PeerQuality(
                    peer: try entry.peer("peer"), score: Int(try entry.integer("score", in: 0...5)),
                    lossPercent: Int((try entry.fraction("loss") * 100).rounded()),
                    jitterMilliseconds: Int(try entry.integer("jitter_ms", in: 0...60_000)),
                    rttMilliseconds: Int(try entry.integer("rtt_ms", in: 0...60_000)))
            }
            event = .networkQuality(peers)
        case "reaction":
            let counts = try fields.array("counts").map { value throws(ControlDecodeError) -> ReactionBurst.Count in
                let entry = Fields(try objectValue(value, "counts"), stringLimit: serverStringLimit)
                return ReactionBurst.Count(
                    try readReaction(entry, "emoji"), Int(try entry.integer("count", in: 1...1_000_000)))
            }
            let senders = try fields.array("senders").map { value throws(ControlDecodeError) -> ReactionBurst.Sender in
                let entry = Fields(try objectValue(value, "senders"), stringLimit: serverStringLimit)
                return ReactionBurst.Sender(try entry.peer("peer"), try readReaction(entry, "emoji"))
            }
            event = .reaction(ReactionBurst(counts: counts, senders: senders))
        case "chat":
            event = .chat(try readChat(.object(fields.object)))
        case "invited":
            event = .invited(peer: try fields.peer("peer"), by: try fields.actor(), at: try fields.integer("at"))
        case "invite_declined":
            event = .inviteDeclined(peer: try fields.peer("peer"), by: try fields.actor())
        case "invite_withdrawn":
            event = .inviteWithdrawn(peer: try fields.peer("peer"), by: try fields.actor())
        case "invite_expired":
            event = .inviteExpired(peer: try fields.peer("peer"))
        case "room_ending":
            event = .roomEnding(
                peer: try fields.peer("peer"),
                name: try fields.string("name", maxCharacters: ControlLimits.maxNameCharacters * 2),
                at: try fields.optionalInteger("at"))
        case "asked_to_mute":
            event = .askedToMute(peer: try fields.peer("peer"), by: try fields.actor())
        case "removed":
            event = .removed(peer: try fields.peer("peer"), by: try fields.actor(), reason: try fields.string("reason"))
        case "room_ended":
            event = .roomEnded(by: try fields.actor(), reason: try fields.string("reason"))
        case "topic_changed":
            event = .topicChanged(topic: try fields.string("topic"), by: try fields.actor())
        case "listing_changed":
            event = .listingChanged(listed: try fields.bool("listed"), by: try fields.actor())
        case "hands_allowed":
            event = .handsAllowed(allowed: try fields.bool("allowed"), by: try fields.actor())
        case "mic_changed":
            event = .micChanged(peer: try fields.peer("peer"), working: try fields.bool("working"))
        case "invite_link":
            event = .inviteLink(
                room: try fields.string("room", maxBytes: 64), role: RoleName(try fields.string("role", maxBytes: 64)),
                token: try fields.string("token", maxBytes: RoomToken.maximumBytes),
                expiresAt: try fields.integer("expires_at"), id: try readRequestID(fields.object))
        case "links":
            let links = try fields.array("links").map { value throws(ControlDecodeError) in
                let link = Fields(try objectValue(value, "links"), stringLimit: serverStringLimit)
                return RoomLink(
                    id: try link.string("id", maxBytes: 64), role: RoleName(try link.string("role", maxBytes: 64)),
                    by: PeerID(try link.string("by", maxBytes: ControlLimits.maxIdentityBytes)),
                    expiresAt: try link.integer("expires_at"), uses: try link.integer("uses"),
                    maxUses: try link.optionalInteger("max_uses"), withdrawn: try link.bool("withdrawn"))
            }
            let withdrawn = try fields.array("withdrawn").map { value throws(ControlDecodeError) -> String in
                guard case .string(let id) = value, id.utf8.count <= 64 else {
                    throw ControlDecodeError(.badRequest, "\"withdrawn\" holds something that is not a link id")
                }
                return id
            }
            event = .links(
                room: try fields.string("room", maxBytes: 64), links: links, withdrawn: withdrawn,
                locked: try fields.bool("locked"), id: try readRequestID(fields.object))
        case "knock":
            let text = try fields.string("state", maxBytes: 16)
            guard let state = Knock.State(rawValue: text) else {
                throw ControlDecodeError(.badRequest, "unknown knock state \"\(text)\"")
            }
            event = .knock(
                room: try fields.string("room", maxBytes: 64),
                Knock(
                    peer: try fields.peer("peer"),
                    name: try fields.string("name", maxCharacters: ControlLimits.maxNameCharacters), state: state,
                    by: try fields.optionalString("by", maxBytes: ControlLimits.maxIdentityBytes).map { PeerID($0) }))
        case "waiting":
            event = .waiting(room: try fields.string("room", maxBytes: 64))
        case "error":
            event = .error(
                code: ErrorCode(rawValue: try fields.string("code")), message: try fields.string("message"),
                id: try readRequestID(fields.object))
        default:
            throw ControlDecodeError(.unknownType, "unknown message type \"\(type)\"")
        }
        return ServerMessage(event, seq: seq)
    }

    /// Decodes a server's text frame given as a string.
    public static func decodeServer(_ text: String) throws(ControlDecodeError) -> ServerMessage {
        try decodeServer(Array(text.utf8))
    }

    // MARK: Parts

    /// The reaction a message's `key` names: one of the emoji of `docs/protocol.md`, or its ASCII fallback.
    static func readReaction(_ fields: Fields, _ key: String) throws(ControlDecodeError) -> Reaction {
        let text = try fields.string(key, maxBytes: 32)
        guard let reaction = Reaction(parsing: text) else {
            let known = Reaction.allCases.map(\.emoji).joined(separator: " ")
            throw ControlDecodeError(.badRequest, "\"\(key)\" is not a reaction; send one of \(known)")
        }
        return reaction
    }

    /// The JSON form of a peer.
    public static func json(_ announced: AnnouncedPeer) -> JSONValue {
        let peer = announced.peer
        var object = JSONObject()
        object["id"] = .string(peer.id.rawValue)
        object["name"] = .string(peer.name)
        object["role"] = .string(peer.role.rawValue)
        object["muted"] = .bool(peer.muted)
        object["hand_raised_at"] = peer.handRaisedAt.map { .integer($0) } ?? .null
        object["joined_at"] = .integer(peer.joinedAt)
        object["level"] = .integer(Int64(peer.level))
        if !peer.micWorking { object["mic_failed"] = .bool(true) }
        if peer.playing { object["playing"] = .bool(true) }
        if let invitation = announced.invitation {
            object["invited_by"] = .string(invitation.by.rawValue)
            object["invited_at"] = .integer(invitation.at)
        }
        if let stepUp = announced.stepUp { object["step_up"] = .string(stepUp.rawValue) }
        return .object(object)
    }

    static func jsonObject(_ chat: ChatMessage) -> JSONObject {
        var object = JSONObject()
        object["from"] = .string(chat.from.rawValue)
        object["name"] = .string(chat.fromName)
        object["text"] = .string(chat.text)
        object["at"] = .integer(chat.sentAt)
        if let target = json(chat.to) { object["to"] = target }
        return object
    }

    /// The JSON form of a chat message.
    public static func json(_ chat: ChatMessage) -> JSONValue {
        .object(jsonObject(chat))
    }

    /// The role table as `joined` carries it: the roles in rank order, permissions in `Permission`'s order.
    static func json(_ table: RoleTable) -> JSONValue {
        .array(
            table.roles.map { role in
                .object(
                    JSONObject([
                        ("name", .string(role.name.rawValue)), ("label", .string(role.label)),
                        ("rank", .integer(Int64(role.rank))), ("on_stage", .bool(role.onStage)),
                        (
                            "permissions",
                            .array(
                                Permission.allCases.filter { role.permissions.contains($0) }.map {
                                    .string($0.rawValue)
                                })
                        ),
                    ]))
            })
    }

    static func json(_ audience: ChatAudience) -> JSONValue? {
        switch audience {
        case .everyone: nil
        case .peer(let peer): .object(JSONObject([("peer", .string(peer.rawValue))]))
        case .role(let role): .object(JSONObject([("role", .string(role.rawValue))]))
        }
    }

    static func parseObject(
        _ bytes: some Collection<UInt8>, with parser: StrictJSONParser = ControlCodec.parser
    ) throws(ControlDecodeError) -> JSONObject {
        let value: JSONValue
        do {
            value = try parser.parse(bytes)
        } catch {
            switch error.problem {
            case .duplicateKey(let key):
                throw ControlDecodeError(.duplicateKey, "the key \"\(key)\" appears twice at byte \(error.offset)")
            case .tooLarge:
                throw ControlDecodeError(.badRequest, error.description)
            default:
                throw ControlDecodeError(.invalidJSON, error.description)
            }
        }
        guard case .object(let object) = value else {
            throw ControlDecodeError(.invalidJSON, "a message must be a JSON object")
        }
        return object
    }

    static func objectValue(_ value: JSONValue, _ field: String) throws(ControlDecodeError) -> JSONObject {
        guard case .object(let object) = value else {
            throw ControlDecodeError(.badRequest, "\"\(field)\" must hold objects")
        }
        return object
    }

    static func checkVersion(_ fields: Fields) throws(ControlDecodeError) {
        guard let version = try fields.optionalInteger("v") else { return }
        guard version == controlProtocolVersion else {
            throw ControlDecodeError(
                .unsupportedVersion, "protocol version \(version) is not supported; this server speaks version 1")
        }
    }

    static func readRequestID(_ object: JSONObject) throws(ControlDecodeError) -> RequestID? {
        switch object["id"] {
        case nil, .null?: return nil
        case .integer(let value)?: return .integer(value)
        case .string(let value)?:
            guard value.utf8.count <= ControlLimits.maxRequestIDBytes else {
                throw ControlDecodeError(
                    .badRequest, "\"id\" is longer than \(ControlLimits.maxRequestIDBytes) bytes")
            }
            return .string(value)
        default:
            throw ControlDecodeError(.badRequest, "\"id\" must be a string or an integer")
        }
    }

    static func readChatAudience(_ fields: Fields) throws(ControlDecodeError) -> ChatAudience {
        guard let value = fields.object["to"], value != .null else { return .everyone }
        let target = Fields(try objectValue(value, "to"))
        let peer = try target.optionalString("peer", maxBytes: ControlLimits.maxIdentityBytes)
        let role = try target.optionalString("role", maxBytes: ControlLimits.maxRoleBytes)
        switch (peer, role) {
        case (let peer?, nil): return .peer(PeerID(peer))
        case (nil, let role?): return .role(RoleName(role))
        default: throw ControlDecodeError(.badRequest, "\"to\" must name either a \"peer\" or a \"role\"")
        }
    }

    /// A peer object; `Peer` cleans the name and bounds the level as it does for any peer.
    static func readPeer(_ value: JSONValue) throws(ControlDecodeError) -> AnnouncedPeer {
        let fields = Fields(try objectValue(value, "peer"), stringLimit: serverStringLimit)
        let peer = Peer(
            id: try fields.peer("id"), name: try fields.string("name"), role: RoleName(try fields.string("role")),
            muted: try fields.bool("muted"), handRaisedAt: try fields.optionalInteger("hand_raised_at"),
            joinedAt: try fields.integer("joined_at"), level: Int(clamping: try fields.integer("level", in: 0...100)),
            micWorking: !(try fields.optionalBool("mic_failed") ?? false),
            playing: try fields.optionalBool("playing") ?? false)
        let invitedBy = try fields.optionalString("invited_by", maxBytes: ControlLimits.maxIdentityBytes)
        let invitation = try invitedBy.map { by throws(ControlDecodeError) in
            Invitation(by: PeerID(by), at: try fields.optionalInteger("invited_at") ?? 0)
        }
        return AnnouncedPeer(
            peer, invitation: invitation,
            stepUp: try fields.optionalString("step_up", maxBytes: ControlLimits.maxRoleBytes).map { RoleName($0) })
    }

    /// A chat message; `ChatMessage` cleans the name and the text as it does for any message.
    static func readChat(_ value: JSONValue) throws(ControlDecodeError) -> ChatMessage {
        let fields = Fields(try objectValue(value, "chat"), stringLimit: serverStringLimit)
        let from = try fields.peer("from")
        return ChatMessage(
            from: from, fromName: try fields.optionalString("name") ?? from.rawValue, text: try fields.string("text"),
            to: try readChatAudience(fields), sentAt: try fields.integer("at"))
    }

    /// The role table of a `joined`, checked by the rules of a `roles.json` file (`RoleTable(checking:)`), so a
    /// client shows and checks exactly what the server enforces. A permission this version does not know is
    /// skipped, as unknown fields are: a newer server may grant one, and it enforces it itself.
    static func readRoles(_ values: [JSONValue]) throws(ControlDecodeError) -> RoleTable {
        var definitions: [RoleDefinition] = []
        for value in values {
            let fields = Fields(try objectValue(value, "roles"), stringLimit: serverStringLimit)
            var permissions: Set<Permission> = []
            for permission in try fields.array("permissions") {
                guard case .string(let name) = permission else {
                    throw ControlDecodeError(.badRequest, "\"permissions\" must hold strings")
                }
                if let known = Permission(rawValue: name) { permissions.insert(known) }
            }
            definitions.append(
                RoleDefinition(
                    name: RoleName(try fields.string("name", maxBytes: ControlLimits.maxRoleBytes)),
                    label: try fields.string("label"), rank: Int(clamping: try fields.integer("rank")),
                    onStage: try fields.bool("on_stage"), permissions: permissions))
        }
        do {
            return try RoleTable(checking: definitions, source: "the server's role table")
        } catch {
            throw ControlDecodeError(.badRequest, error.description)
        }
    }
}

/// Typed access to an object's fields, each failure a `bad_request` naming the field.
struct Fields {
    let object: JSONObject
    /// The most UTF-8 bytes a string field may hold when its reader names no bound of its own.
    let stringLimit: Int

    init(_ object: JSONObject, stringLimit: Int = 4096) {
        self.object = object
        self.stringLimit = stringLimit
    }

    func value(_ key: String) throws(ControlDecodeError) -> JSONValue {
        guard let value = object[key], value != .null else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is missing")
        }
        return value
    }

    func string(_ key: String, maxBytes: Int? = nil, maxCharacters: Int? = nil) throws(ControlDecodeError) -> String {
        guard case .string(let text) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a string")
        }
        return try bounded(text, key, maxBytes: maxBytes ?? stringLimit, maxCharacters: maxCharacters)
    }

    func string(_ key: String, maxCharacters: Int) throws(ControlDecodeError) -> String {
        try string(key, maxBytes: maxCharacters * 4, maxCharacters: maxCharacters)
    }

    /// A peer's identity: 1 to 128 bytes.
    func peer(_ key: String) throws(ControlDecodeError) -> PeerID {
        let text = try string(key, maxBytes: ControlLimits.maxIdentityBytes)
        guard !text.isEmpty else { throw ControlDecodeError(.badRequest, "the field \"\(key)\" is empty") }
        return PeerID(text)
    }

    /// Why a peer left (`reason`).
    func leaveReason() throws(ControlDecodeError) -> LeaveReason {
        let text = try string("reason")
        guard let reason = LeaveReason(rawValue: text) else {
            throw ControlDecodeError(.badRequest, "unknown leave reason \"\(text)\"")
        }
        return reason
    }

    /// Who made a change (`by`): an identity, or empty when the server made it itself.
    func actor() throws(ControlDecodeError) -> PeerID {
        PeerID(try string("by", maxBytes: ControlLimits.maxIdentityBytes))
    }

    func optionalString(_ key: String, maxBytes: Int? = nil) throws(ControlDecodeError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard case .string(let text) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a string")
        }
        return try bounded(text, key, maxBytes: maxBytes ?? stringLimit, maxCharacters: nil)
    }

    func optionalString(_ key: String, maxCharacters: Int) throws(ControlDecodeError) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard case .string(let text) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a string")
        }
        return try bounded(text, key, maxBytes: maxCharacters * 4, maxCharacters: maxCharacters)
    }

    func bounded(
        _ text: String, _ key: String, maxBytes: Int, maxCharacters: Int?
    ) throws(ControlDecodeError)
        -> String
    {
        guard text.utf8.count <= maxBytes else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is longer than \(maxBytes) bytes")
        }
        if let maxCharacters, text.count > maxCharacters {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is longer than \(maxCharacters) characters")
        }
        return text
    }

    func optionalBool(_ key: String) throws(ControlDecodeError) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard case .bool(let flag) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be true or false")
        }
        return flag
    }

    func bool(_ key: String) throws(ControlDecodeError) -> Bool {
        guard case .bool(let flag) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be true or false")
        }
        return flag
    }

    func integer(_ key: String, in range: ClosedRange<Int64>? = nil) throws(ControlDecodeError) -> Int64 {
        guard case .integer(let number) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be an integer")
        }
        if let range, !range.contains(number) {
            throw ControlDecodeError(
                .badRequest, "the field \"\(key)\" must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }

    func optionalInteger(_ key: String) throws(ControlDecodeError) -> Int64? {
        guard let value = object[key], value != .null else { return nil }
        guard case .integer(let number) = value else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be an integer")
        }
        return number
    }

    /// A number from 0 to 1 (an integer 0 or 1, or a fraction).
    func fraction(_ key: String) throws(ControlDecodeError) -> Double {
        let number: Double
        switch try value(key) {
        case .integer(let whole): number = Double(whole)
        case .double(let real): number = real
        default: throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be a number")
        }
        guard number >= 0, number <= 1 else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be between 0 and 1")
        }
        return number
    }

    func array(_ key: String) throws(ControlDecodeError) -> [JSONValue] {
        guard case .array(let elements) = try value(key) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" must be an array")
        }
        return elements
    }
}
