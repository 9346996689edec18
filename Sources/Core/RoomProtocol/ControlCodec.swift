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
                    withdrawLink: try fields.optionalBool("withdraw_link") ?? false,
                    ban: try fields.optionalBool("ban") ?? false)
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
            case "list_bans": request = .listBans
            case "unban": request = .unban(try fields.string("who", maxBytes: ControlLimits.maxIdentityBytes))
            case "revoke_link": request = .revokeLink(try fields.string("link", maxBytes: 64))
            case "set_locked": request = .setLocked(try fields.bool("locked"))
            case "admit": request = .admitWaiting(try fields.string("name", maxBytes: ControlLimits.maxIdentityBytes))
            case "deny": request = .denyWaiting(try fields.string("name", maxBytes: ControlLimits.maxIdentityBytes))
            case "react": request = .react(try readReaction(fields, "emoji"))
            case "start_recording": request = .startRecording
            case "stop_recording": request = .stopRecording
            case "recorder_error":
                request = .recorderError(
                    try fields.string("reason", maxCharacters: ClientRequest.maxRecorderErrorLength))
            case "stats": request = .stats
            case "start_stream": request = .startStream(try readStreamName(fields))
            case "stop_stream": request = .stopStream(try readStreamName(fields))
            case "stream_status":
                request = .streamStatus(try fields.string("text", maxCharacters: ClientRequest.maxStreamStatusLength))
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
        case .remove(let peer, let reason, let withdrawLink, let ban):
            object["peer"] = .string(peer.rawValue)
            if let reason { object["reason"] = .string(reason) }
            if withdrawLink { object["withdraw_link"] = .bool(true) }
            if ban { object["ban"] = .bool(true) }
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
        case .listLinks, .listBans, .startRecording, .stopRecording: break
        case .recorderError(let reason): object["reason"] = .string(reason)
        case .stats: break
        case .startStream(let name), .stopStream(let name): object["to"] = .string(name)
        case .streamStatus(let text): object["text"] = .string(text)
        case .unban(let who): object["who"] = .string(who)
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
}
