import RoomCore
import RoomServer
import StrictJSON

/// A room's checkpoint (`RoomCheckpoint`) in `ClusterFormat`: every field by its name, optional ones left out when
/// absent.
extension ClusterFormat {
    /// A checkpoint alone as a document (the room's copy, `ReplicatedRoom.encoded()`, carries it with the homes).
    package static func encode(_ checkpoint: RoomCheckpoint) -> [UInt8] {
        guard case .object(let object) = json(checkpoint) else { return document(JSONObject()) }
        return document(object)
    }

    /// Reads what `encode(_:)` wrote.
    package static func checkpoint(decoding bytes: [UInt8]) throws(ClusterFormatError) -> RoomCheckpoint {
        try checkpoint(try read(bytes))
    }

    static func json(_ checkpoint: RoomCheckpoint) -> JSONValue {
        func invitations(_ list: [RoomCheckpoint.Invitation]) -> JSONValue {
            .array(
                list.map {
                    .object(
                        JSONObject([
                            ("peer", .string($0.peer.rawValue)), ("by", .string($0.by.rawValue)),
                            ("at", .integer($0.at)),
                        ]))
                })
        }
        func roles(_ list: [RoomCheckpoint.TokenRole]) -> JSONValue {
            .array(
                list.map {
                    .object(JSONObject([("peer", .string($0.peer.rawValue)), ("role", .string($0.role.rawValue))]))
                })
        }
        func peers(_ list: [PeerID]) -> JSONValue { .array(list.map { .string($0.rawValue) }) }
        var object = JSONObject()
        object["topic"] = .string(checkpoint.topic)
        object["ended"] = .bool(checkpoint.ended)
        object["seq"] = .integer(checkpoint.seq)
        object["peers"] = .array(checkpoint.peers.map(json))
        object["invitations"] = invitations(checkpoint.invitations)
        object["heldInvitations"] = invitations(checkpoint.heldInvitations)
        if let hands = checkpoint.heldHands {
            object["heldHands"] = .array(
                hands.map { .object(JSONObject([("peer", .string($0.peer.rawValue)), ("at", .integer($0.at))])) })
        }
        object["loweredByOthers"] = peers(checkpoint.loweredByOthers)
        if let loweredTo = checkpoint.loweredTo { object["loweredTo"] = roles(loweredTo) }
        object["tokenRoles"] = roles(checkpoint.tokenRoles)
        object["chat"] = .array(checkpoint.chat.map(json))
        object["removed"] = peers(checkpoint.removed)
        object["departed"] = .array(
            checkpoint.departed.map {
                .object(
                    JSONObject([
                        ("peer", .string($0.peer.rawValue)), ("role", .string($0.role.rawValue)),
                        ("at", .integer($0.at)),
                    ]))
            })
        object["departedPruneThreshold"] = .integer(Int64(checkpoint.departedPruneThreshold))
        object["listed"] = .bool(checkpoint.listed)
        if let since = checkpoint.liveSince { object["liveSince"] = .integer(since) }
        if let applied = checkpoint.applied {
            object["applied"] = .array(
                applied.map { entry in
                    var applied = JSONObject()
                    applied["peer"] = .string(entry.peer.rawValue)
                    applied["ids"] = .array(entry.ids.map { .string($0) })
                    if let refused = entry.refused {
                        applied["refused"] = .array(
                            refused.map {
                                .object(
                                    JSONObject([
                                        ("id", .string($0.id)), ("code", .string($0.code)),
                                        ("message", .string($0.message)),
                                    ]))
                            })
                    }
                    return .object(applied)
                })
        }
        if let due = checkpoint.handoverDue { object["handoverDue"] = .integer(due) }
        if let ends = checkpoint.endsAt { object["endsAt"] = .integer(ends) }
        if let allowed = checkpoint.handsAllowed { object["handsAllowed"] = .bool(allowed) }
        if let host = checkpoint.lastHost {
            object["lastHost"] = .object(
                JSONObject([("peer", .string(host.peer.rawValue)), ("name", .string(host.name))]))
        }
        if let speaking = checkpoint.speaking { object["speaking"] = json(speaking) }
        if let recording = checkpoint.recording {
            var entry = JSONObject()
            if let by = recording.by { entry["by"] = .string(by.rawValue) }
            entry["since"] = .integer(recording.since)
            object["recording"] = .object(entry)
        }
        if let streaming = checkpoint.streaming { object["streaming"] = json(streaming) }
        return .object(object)
    }

    static func checkpoint(_ fields: Reader) throws(ClusterFormatError) -> RoomCheckpoint {
        func invitations(_ key: String) throws(ClusterFormatError) -> [RoomCheckpoint.Invitation] {
            var list: [RoomCheckpoint.Invitation] = []
            for entry in try fields.objects(key) {
                list.append(.init(peer: try entry.peer("peer"), by: try entry.peer("by"), at: try entry.integer("at")))
            }
            return list
        }
        func roles(_ entries: [Reader]) throws(ClusterFormatError) -> [RoomCheckpoint.TokenRole] {
            var list: [RoomCheckpoint.TokenRole] = []
            for entry in entries { list.append(.init(peer: try entry.peer("peer"), role: try entry.role("role"))) }
            return list
        }
        var peers: [Peer] = []
        for entry in try fields.objects("peers") { peers.append(try peer(entry)) }
        var chat: [ChatMessage] = []
        for entry in try fields.objects("chat") { chat.append(try self.chat(entry)) }
        var departed: [RoomCheckpoint.Departed] = []
        for entry in try fields.objects("departed") {
            departed.append(
                .init(peer: try entry.peer("peer"), role: try entry.role("role"), at: try entry.integer("at")))
        }
        var hands: [RoomCheckpoint.Hand]?
        if let entries = try fields.optionalObjects("heldHands") {
            hands = []
            for entry in entries { hands?.append(.init(peer: try entry.peer("peer"), at: try entry.integer("at"))) }
        }
        var applied: [RoomCheckpoint.Applied]?
        if let entries = try fields.optionalObjects("applied") {
            applied = []
            for entry in entries {
                var refused: [RoomCheckpoint.Refused]?
                if let refusals = try entry.optionalObjects("refused") {
                    refused = []
                    for refusal in refusals {
                        refused?.append(
                            .init(
                                id: try refusal.string("id"), code: try refusal.string("code"),
                                message: try refusal.string("message")))
                    }
                }
                applied?.append(.init(peer: try entry.peer("peer"), ids: try entry.strings("ids"), refused: refused))
            }
        }
        let lastHost = try fields.optional("lastHost").map { _ throws(ClusterFormatError) in
            let host = try fields.object("lastHost")
            return RoomCheckpoint.LastHost(peer: try host.peer("peer"), name: try host.string("name"))
        }
        let recording = try fields.optional("recording").map { _ throws(ClusterFormatError) in
            let entry = try fields.object("recording")
            return RecordingState(
                by: try entry.optional("by").map { _ throws(ClusterFormatError) in try entry.peer("by") },
                since: try entry.integer("since"))
        }
        var checkpoint = RoomCheckpoint(
            topic: try fields.string("topic"), ended: try fields.bool("ended"), seq: try fields.integer("seq"),
            peers: peers, invitations: try invitations("invitations"),
            heldInvitations: try invitations("heldInvitations"), loweredTo: [],
            tokenRoles: try roles(try fields.objects("tokenRoles")), chat: chat,
            removed: try fields.strings("removed").map { PeerID($0) }, departed: departed,
            departedPruneThreshold: Int(clamping: try fields.integer("departedPruneThreshold")),
            listed: try fields.bool("listed"), liveSince: try fields.optionalInteger("liveSince"), applied: applied,
            heldHands: hands, handoverDue: try fields.optionalInteger("handoverDue"),
            endsAt: try fields.optionalInteger("endsAt"), lastHost: lastHost,
            handsAllowed: try fields.optionalBool("handsAllowed"), recording: recording)
        checkpoint.speaking = try speaking(fields)
        checkpoint.streaming = try streaming(fields)
        checkpoint.loweredByOthers = try fields.strings("loweredByOthers").map { PeerID($0) }
        checkpoint.loweredTo = try fields.optionalObjects("loweredTo").map { entries throws(ClusterFormatError) in
            try roles(entries)
        }
        return checkpoint
    }
}
