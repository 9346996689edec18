import RoomCore
import StrictJSON

/// The server's messages: what it sends, and how a client reads them back.
extension ControlCodec {
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
            if let recording = snapshot.recording { object["recording"] = json(recording) }
            if let streaming = snapshot.streaming { object["streaming"] = json(streaming) }
            if !snapshot.streamDestinations.isEmpty {
                object["stream_destinations"] = .array(snapshot.streamDestinations.map { .string($0) })
            }
            if let ending = snapshot.ending { object["ending"] = json(ending) }
            if !snapshot.handsAllowed { object["hands_allowed"] = .bool(false) }
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
        case .recording(let recording?, _, _):
            for member in jsonObject(recording).members { object[member.key] = member.value }
        case .recording(nil, let by, let reason):
            object["active"] = .bool(false)
            if let by { object["by"] = .string(by.rawValue) }
            if let reason { object["reason"] = .string(reason) }
        case .streaming(let streaming, let by, let reason):
            writeStreaming(streaming, into: &object)
            if let by { object["by"] = .string(by.rawValue) }
            if let reason { object["reason"] = .string(reason) }
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
        case .bans(let bans, let lifted, let id):
            object["bans"] = .array(
                bans.map { ban in
                    var entry = JSONObject()
                    entry["identity"] = .string(ban.identity.rawValue)
                    entry["name"] = .string(ban.name)
                    entry["by"] = .string(ban.by.rawValue)
                    entry["at"] = .integer(ban.at)
                    entry["reason"] = .string(ban.reason)
                    return .object(entry)
                })
            object["lifted"] = .array(lifted.map { .string($0) })
            switch id {
            case .string(let value): object["id"] = .string(value)
            case .integer(let value): object["id"] = .integer(value)
            case nil: break
            }
        case .stats(let people, let id):
            writeStats(people, id: id, into: &object)
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
        output.append(contentsOf: (snapshot.listed ? #","listed":true"# : #","listed":false"#).utf8)
        if let recording = snapshot.recording {
            output.append(contentsOf: #","recording":"#.utf8)
            json(recording).write(into: &output)
        }
        if let streaming = snapshot.streaming {
            output.append(contentsOf: #","streaming":"#.utf8)
            json(streaming).write(into: &output)
        }
        if !snapshot.streamDestinations.isEmpty {
            output.append(contentsOf: #","stream_destinations":"#.utf8)
            JSONValue.array(snapshot.streamDestinations.map { .string($0) }).write(into: &output)
        }
        if let ending = snapshot.ending {
            output.append(contentsOf: #","ending":"#.utf8)
            json(ending).write(into: &output)
        }
        if !snapshot.handsAllowed { output.append(contentsOf: #","hands_allowed":false"#.utf8) }
        output.append(contentsOf: #","peers":["#.utf8)
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
                    listed: try fields.optionalBool("listed") ?? true,
                    recording: try fields.object["recording"].flatMap { value throws(ControlDecodeError) in
                        value == .null ? nil : try readRecording(Fields(try objectValue(value, "recording")))
                    },
                    streaming: try fields.object["streaming"].flatMap { value throws(ControlDecodeError) in
                        value == .null ? nil : try readStreaming(Fields(try objectValue(value, "streaming")))
                    },
                    streamDestinations: fields.object["stream_destinations"] == nil
                        ? [] : try readStreamNames(fields, "stream_destinations"),
                    ending: try fields.object["ending"].flatMap { value throws(ControlDecodeError) in
                        value == .null ? nil : try readEnding(Fields(try objectValue(value, "ending")))
                    },
                    handsAllowed: try fields.optionalBool("hands_allowed") ?? true))
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
        case "recording":
            if let recording = try readRecording(fields) {
                event = .recording(recording, by: nil, reason: nil)
            } else {
                event = .recording(
                    nil,
                    by: try fields.optionalString("by", maxBytes: ControlLimits.maxIdentityBytes).flatMap {
                        $0.isEmpty ? nil : PeerID($0)
                    },
                    reason: try fields.optionalString("reason"))
            }
        case "streaming":
            event = .streaming(
                try readStreaming(fields),
                by: try fields.optionalString("by", maxBytes: ControlLimits.maxIdentityBytes).flatMap {
                    $0.isEmpty ? nil : PeerID($0)
                },
                reason: try fields.optionalString("reason"))
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
        case "bans":
            let bans = try fields.array("bans").map { value throws(ControlDecodeError) in
                let ban = Fields(try objectValue(value, "bans"), stringLimit: serverStringLimit)
                return RoomBan(
                    identity: PeerID(try ban.string("identity", maxBytes: ControlLimits.maxIdentityBytes)),
                    name: try ban.string("name", maxBytes: ControlLimits.maxIdentityBytes),
                    by: PeerID(try ban.string("by", maxBytes: ControlLimits.maxIdentityBytes)),
                    at: try ban.integer("at"),
                    reason: try ban.string("reason", maxCharacters: ControlLimits.maxReasonCharacters))
            }
            let lifted = try fields.array("lifted").map { value throws(ControlDecodeError) -> String in
                guard case .string(let id) = value, id.utf8.count <= ControlLimits.maxIdentityBytes else {
                    throw ControlDecodeError(.badRequest, "\"lifted\" holds something that is not an identity")
                }
                return id
            }
            event = .bans(bans: bans, lifted: lifted, id: try readRequestID(fields.object))
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
        case "stats":
            event = try readStats(fields)
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
}
