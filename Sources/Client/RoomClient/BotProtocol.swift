import Platform
import RoomCore
import RoomProtocol
import StrictJSON

/// How `clubroom bot` exits (documented in `docs/bot.md`).
public enum BotExitStatus: Int32, Sendable, Equatable, CaseIterable {
    /// It left: end of input, a `leave` command, or the server closed normally.
    case left = 0
    /// Something unexpected failed inside the bot.
    case failure = 1
    /// A moderator removed it.
    case removed = 3
    /// The room ended.
    case roomEnded = 4
    /// It could not connect, or lost the connection and every retry failed.
    case connectionFailed = 5
    /// The server refused its token or its join (room full, removed earlier).
    case refused = 6
    /// The same identity connected from somewhere else.
    case replaced = 7

    /// The status for how a session ended.
    public init(_ end: SessionEnd) {
        switch end {
        case .left, .closedByServer: self = .left
        case .removed: self = .removed
        case .roomEnded: self = .roomEnded
        case .replaced: self = .replaced
        case .refused: self = .refused
        case .connectionFailed: self = .connectionFailed
        }
    }
}

/// What a bot's input line asks for.
public enum BotCommand: Sendable, Equatable {
    case request(ClientRequest, id: RequestID?)
    case leave
    /// Play the file at this path into the room.
    case play(String)
    /// Stop playing.
    case stopPlay
}

/// A bad input line: the `error` event's code and message.
public struct BotCommandError: Error, Sendable, Equatable {
    public var code: String
    public var message: String

    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// Reads the bot's JSON command lines and writes its JSON event lines; see `docs/bot.md`.
public enum BotProtocol {
    /// Every command name, in the order of `docs/bot.md`.
    public static let commandNames = [
        "raise_hand", "lower_hand", "invite", "set_role", "accept_invite", "decline_invite", "step_down", "mute",
        "mute_peer", "remove", "ban", "topic", "end_room", "chat", "leave", "play", "stop_play", "start_recording",
        "stop_recording", "start_stream", "stop_stream",
    ]

    static let parser = StrictJSONParser(maxDepth: 8, maxBytes: ControlLimits.maxFrameBytes)

    /// Parses one input line.
    public static func parse(_ line: String) throws(BotCommandError) -> BotCommand {
        let value: JSONValue
        do {
            value = try parser.parse(line)
        } catch {
            throw BotCommandError("invalid_json", "the command is not JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw BotCommandError("invalid_json", "a command must be a JSON object")
        }
        guard case .string(let name)? = object["cmd"] else {
            throw BotCommandError("bad_command", "the command has no \"cmd\" string")
        }
        var id: RequestID?
        switch object["id"] {
        case .string(let text)?: id = .string(text)
        case .integer(let number)?: id = .integer(number)
        case nil, .null?: id = nil
        default: throw BotCommandError("bad_command", "\"id\" must be a string or an integer")
        }
        func string(_ key: String, required: Bool = true) throws(BotCommandError) -> String? {
            switch object[key] {
            case .string(let text)?: return text
            case nil, .null?:
                if required { throw BotCommandError("bad_command", "\(name) needs \"\(key)\"") }
                return nil
            default: throw BotCommandError("bad_command", "\"\(key)\" must be a string")
            }
        }
        let request: ClientRequest
        switch name {
        case "raise_hand": request = .raiseHand
        case "lower_hand": request = try string("peer", required: false).map { .lowerHandOf(PeerID($0)) } ?? .lowerHand
        case "clear_hands": request = .clearHands
        case "invite": request = .invite(PeerID(try string("peer")!))
        case "set_role": request = .setRole(PeerID(try string("peer")!), RoleName(try string("role")!))
        case "accept_invite": request = .acceptInvite
        case "decline_invite": request = .declineInvite
        case "withdraw_invite": request = .withdrawInvite(PeerID(try string("peer")!))
        case "step_down": request = .stepDown
        case "mute":
            switch object["on"] {
            case .bool(let on)?: request = .setMute(on)
            case nil: request = .setMute(true)
            default: throw BotCommandError("bad_command", "\"on\" must be true or false")
            }
        case "set_mic":
            guard case .bool(let working)? = object["working"] else {
                throw BotCommandError("bad_command", "set_mic needs \"working\": true or false")
            }
            request = .setMicWorking(working)
        case "mute_peer": request = .mutePeer(PeerID(try string("peer")!))
        case "mute_all": request = .muteAll
        case "remove":
            let withdrawLink: Bool
            switch object["withdraw_link"] {
            case .bool(let flag)?: withdrawLink = flag
            case nil, .null?: withdrawLink = false
            default: throw BotCommandError("bad_command", "\"withdraw_link\" must be true or false")
            }
            request = .remove(
                PeerID(try string("peer")!), reason: try string("reason", required: false), withdrawLink: withdrawLink)
        case "ban":
            request = .remove(
                PeerID(try string("peer")!), reason: try string("reason", required: false), ban: true)
        case "topic": request = .setTopic(try string("text")!)
        case "end_room": request = .endRoom(reason: try string("reason", required: false))
        case "chat":
            let text = try string("text")!
            let to = try string("to", required: false)
            let role = try string("role", required: false)
            switch (to, role) {
            case (nil, nil): request = .chat(text, to: .everyone)
            case (let peer?, nil): request = .chat(text, to: .peer(PeerID(peer)))
            case (nil, let role?): request = .chat(text, to: .role(RoleName(role)))
            default: throw BotCommandError("bad_command", "chat takes \"to\" or \"role\", not both")
            }
        case "leave": return .leave
        case "play": return .play(try string("file")!)
        case "stop_play": return .stopPlay
        case "set_hands_allowed":
            guard case .bool(let allowed)? = object["allowed"] else {
                throw BotCommandError("bad_command", "set_hands_allowed needs \"allowed\": true or false")
            }
            request = .setHandsAllowed(allowed)
        case "set_listed":
            guard case .bool(let listed)? = object["listed"] else {
                throw BotCommandError("bad_command", "set_listed needs \"listed\": true or false")
            }
            request = .setListed(listed)
        case "create_link":
            let role = RoleName(try string("role", required: false) ?? RoleName.audience.rawValue)
            let maxUses: Int64?
            switch object["max_uses"] {
            case .integer(let count)?: maxUses = count
            case nil, .null?: maxUses = nil
            default: throw BotCommandError("bad_command", "\"max_uses\" must be a whole number of people")
            }
            switch object["ttl"] {
            case .integer(let ttl)?: request = .createLink(role: role, ttl: ttl, maxUses: maxUses)
            case nil, .null?:
                request = .createLink(role: role, ttl: ClientRequest.defaultLinkLifetime, maxUses: maxUses)
            default: throw BotCommandError("bad_command", "\"ttl\" must be a whole number of seconds")
            }
        case "start_recording": request = .startRecording
        case "stop_recording": request = .stopRecording
        case "start_stream": request = .startStream(try string("to")!)
        case "stop_stream": request = .stopStream(try string("to")!)
        case "list_links": request = .listLinks
        case "list_bans": request = .listBans
        case "stats": request = .stats
        case "unban": request = .unban(try string("who")!)
        case "revoke_link": request = .revokeLink(try string("link")!)
        case "set_locked":
            guard case .bool(let locked)? = object["locked"] else {
                throw BotCommandError("bad_command", "set_locked needs \"locked\": true or false")
            }
            request = .setLocked(locked)
        case "admit": request = .admitWaiting(try string("name")!)
        case "deny": request = .denyWaiting(try string("name")!)
        case "react":
            let text = try string("emoji")!
            guard let reaction = Reaction(parsing: text) else {
                let known = Reaction.allCases.map(\.emoji).joined(separator: " ")
                throw BotCommandError("bad_command", "\"emoji\" is not a reaction; send one of \(known)")
            }
            request = .react(reaction)
        default:
            throw BotCommandError("unknown_command", "unknown command \"\(name)\"")
        }
        return .request(request, id: id)
    }

    /// The output lines for one session event (usually one; none for events a bot does not report).
    public static func lines(for event: SessionEvent) -> [String] {
        switch event {
        case .message(let message):
            if case .peersJoined(let peers) = message.event {
                return peers.compactMap { json(for: .peerJoined($0), reconnected: false)?.encodedString }
            }
            if case .peersLeft(let departures) = message.event {
                return departures.compactMap {
                    json(for: .peerLeft(peer: $0.peer, reason: $0.reason), reconnected: false)?.encodedString
                }
            }
            return json(for: message.event, reconnected: false).map { [$0.encodedString] } ?? []
        case .reconnected(let message):
            return json(for: message.event, reconnected: true).map { [$0.encodedString] } ?? []
        case .reconnecting(let attempt, let delay):
            return [
                line(
                    "reconnecting",
                    [("attempt", .integer(Int64(attempt))), ("delay_ms", .integer(delay.inMilliseconds))])
            ]
        case .ended:
            return []
        }
    }

    /// The `error` line for a bad command or a failure inside the bot.
    public static func errorLine(code: String, message: String) -> String {
        line("error", [("code", .string(code)), ("message", .string(message))])
    }

    static func line(_ event: String, _ members: [(String, JSONValue)]) -> String {
        JSONValue.object(JSONObject([("event", .string(event))] + members)).encodedString
    }

    static func peerObject(_ peer: AnnouncedPeer) -> JSONValue {
        guard case .object(var object) = ControlCodec.json(peer) else { return .null }
        object["id"] = nil
        return .object(JSONObject([("id", .string(peer.peer.id.rawValue))] + object.members.map { ($0.key, $0.value) }))
    }

    /// A server event as a bot event: the wire form with `event` for `type` and without `seq`; `joined` (and
    /// `reconnected`) carry `self` as a peer object.
    static func json(for event: WireEvent, reconnected: Bool) -> JSONValue? {
        var object = JSONObject()
        switch event {
        case .joined(let snapshot):
            object["event"] = .string(reconnected ? "reconnected" : "joined")
            object["room"] = .string(snapshot.room)
            if let me = snapshot.peers.first(where: { $0.peer.id == snapshot.selfID }) {
                object["self"] = peerObject(me)
            }
            object["topic"] = .string(snapshot.topic)
            object["resumed"] = .bool(snapshot.resumed)
            object["peers"] = .array(snapshot.peers.map(peerObject))
            object["chat"] = .array(snapshot.chat.map(ControlCodec.json))
            // A bot, like a person, learns on arrival that the room is being recorded: the wire's own object.
            if snapshot.recording != nil, case .object(let wire) = ControlCodec.json(ServerMessage(event, seq: nil)) {
                object["recording"] = wire["recording"]
            }
            // And where it streams, and, for a bot that may start a stream, the server's destinations.
            if case .object(let wire) = ControlCodec.json(ServerMessage(event, seq: nil)) {
                if let streaming = wire["streaming"] { object["streaming"] = streaming }
                if let destinations = wire["stream_destinations"] { object["stream_destinations"] = destinations }
            }
            return .object(object)
        case .peerJoined(let announced):
            object["event"] = .string("peer_joined")
            object["peer"] = .string(announced.peer.id.rawValue)
            object["name"] = .string(announced.peer.name)
            object["role"] = .string(announced.peer.role.rawValue)
            object["muted"] = .bool(announced.peer.muted)
            return .object(object)
        default:
            guard case .object(let wire) = ControlCodec.json(ServerMessage(event, seq: nil)),
                case .string(let type)? = wire["type"]
            else { return nil }
            object["event"] = .string(type)
            for member in wire.members where member.key != "type" {
                object[member.key] = member.value
            }
            return .object(object)
        }
    }
}
