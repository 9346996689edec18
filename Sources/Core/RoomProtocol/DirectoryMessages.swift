import Platform
import RoomCore
import StrictJSON

/// What the server's room directory (`/rooms`) tells a lobby: the whole list, then the changes to it. Each
/// message is numbered in the directory's own sequence (`seq`, one higher each time); a lobby that sees a gap asks
/// for the whole list again. See `docs/protocol.md`, "The room directory".
public enum DirectoryMessage: Sendable, Equatable {
    /// Every live, listed room, most listeners first.
    case rooms([RoomListing], seq: Int64)
    /// Rooms that started, changed or ended since the last message, in the order they happened. `since` is
    /// the number of the last message this lobby got before, when the directory folded several changes into one
    /// message for a lobby that reads slowly (each room as it is now); nil when it is `seq - 1`.
    case changed([ListingChange], seq: Int64, since: Int64? = nil)

    /// Whether a message numbered so follows the message numbered `last`, with nothing missed between.
    public func follows(_ last: Int64) -> Bool {
        switch self {
        case .rooms: true
        case .changed(_, let seq, let since): (since ?? seq - 1) == last
        case .error, .opened, .refused, .welcome: true
        }
    }
    /// Sent to each lobby first, before the list: who may open rooms on this server, and whether this lobby's
    /// link may. Not numbered.
    case welcome(openRooms: OpenRoomsPolicy, mayOpen: Bool)
    /// A refused request (`rate_limited`, `bad_request`, ...); not numbered.
    case error(code: ErrorCode, message: String)
    /// The answer to `open_room`: the room exists now, and `invite` is a host's link to it (a room invite for
    /// one person) that the lobby enters it with. Not numbered.
    case opened(room: String, invite: String, id: String)
    /// `open_room` refused (`forbidden`, `conflict`, `bad_request`, ...): an `error` that names the request.
    case refused(code: ErrorCode, message: String, id: String)

    /// The message's number, if it has one.
    public var seq: Int64? {
        switch self {
        case .rooms(_, let seq), .changed(_, let seq, _): seq
        case .error, .opened, .refused, .welcome: nil
        }
    }
}

/// What a lobby may ask the directory.
public enum DirectoryRequest: Sendable, Equatable {
    /// Send the whole list again (after a gap in the numbers, or when a person asks to refresh).
    case list
    /// Open a new room named `name` with `topic`, with the asker as its host (where the server lets them);
    /// `id` names the request in the answer.
    case openRoom(name: String, topic: String, id: String)
}

/// The directory's JSON, both ways, as strict as the room protocol's (`ControlCodec`).
public enum DirectoryCodec {
    /// The largest request a lobby may send; requests are tiny.
    public static let maxRequestBytes = 1024
    /// The largest message a lobby accepts: a list of 10,000 rooms with eight stage names each fits.
    public static let maxMessageBytes = ControlLimits.maxServerMessageBytes
    static let requestParser = StrictJSONParser(maxDepth: 8, maxBytes: maxRequestBytes)
    static let messageParser = StrictJSONParser(maxDepth: 8, maxBytes: maxMessageBytes)

    // MARK: Requests

    public static func decodeRequest(_ bytes: some Collection<UInt8>) throws(ControlDecodeError) -> DirectoryRequest {
        let fields = Fields(try ControlCodec.parseObject(bytes, with: requestParser))
        try ControlCodec.checkVersion(fields)
        let type = try fields.string("type", maxBytes: 64)
        switch type {
        case "list": return .list
        case "open_room":
            // The name is checked by the server, which answers a bad one in words; only its size is bounded here.
            return .openRoom(
                name: try fields.string("name", maxBytes: 256),
                topic: try fields.optionalString("topic", maxCharacters: ControlLimits.maxTopicCharacters) ?? "",
                id: try fields.string("id", maxBytes: ControlLimits.maxRequestIDBytes))
        default:
            throw ControlDecodeError(
                .unknownType,
                "unknown message type \"\(type.prefix(64))\"; the directory answers only \"list\" and \"open_room\"")
        }
    }

    public static func encode(_ request: DirectoryRequest) -> [UInt8] {
        switch request {
        case .list: Array(#"{"type":"list"}"#.utf8)
        case .openRoom(let name, let topic, let id):
            JSONValue.object(
                JSONObject([
                    ("type", .string("open_room")), ("id", .string(id)), ("name", .string(name)),
                    ("topic", .string(topic)),
                ])
            ).encoded
        }
    }

    // MARK: Messages

    public static func json(_ message: DirectoryMessage) -> JSONValue {
        var object = JSONObject()
        // `error` and `refused` are one message on the wire, an `error` that names the request when it answers one.
        func error(_ code: ErrorCode, _ text: String, id: String?) {
            object["type"] = .string("error")
            object["code"] = .string(code.rawValue)
            object["message"] = .string(text)
            if let id { object["id"] = .string(id) }
        }
        switch message {
        case .rooms(let rooms, let seq):
            object["type"] = .string("rooms")
            object["seq"] = .integer(seq)
            object["rooms"] = .array(rooms.map(json))
        case .changed(let changes, let seq, let since):
            object["type"] = .string("rooms_changed")
            object["seq"] = .integer(seq)
            if let since { object["since"] = .integer(since) }
            object["changes"] = .array(changes.map(json))
        case .error(let code, let text):
            error(code, text, id: nil)
        case .opened(let room, let invite, let id):
            object["type"] = .string("room_opened")
            object["id"] = .string(id)
            object["name"] = .string(room)
            object["invite"] = .string(invite)
        case .welcome(let rule, let mayOpen):
            object["type"] = .string("lobby")
            object["open_rooms"] = .string(rule.rawValue)
            object["may_open"] = .bool(mayOpen)
        case .refused(let code, let text, let id):
            error(code, text, id: id)
        }
        return .object(object)
    }

    public static func encode(_ message: DirectoryMessage) -> [UInt8] {
        json(message).encoded
    }

    public static func json(_ listing: RoomListing) -> JSONValue {
        var object = JSONObject([
            ("name", .string(listing.room)), ("topic", .string(listing.topic)),
            (
                "stage",
                .array(
                    listing.stage.map {
                        .object(JSONObject([("name", .string($0.name)), ("role", .string($0.role.rawValue))]))
                    })
            ),
            ("on_stage", .integer(Int64(listing.onStage))), ("listeners", .integer(Int64(listing.listeners))),
            ("raised_hands", .integer(Int64(listing.raisedHands))), ("started_at", .integer(listing.startedAt)),
        ])
        // Said only when true: a room without the field is not recorded.
        if listing.recording { object["recording"] = .bool(true) }
        // Said only when it streams: a room without the field streams nowhere.
        if !listing.streaming.isEmpty { object["streaming"] = .array(listing.streaming.map { .string($0) }) }
        // Said only when someone listens: a few names, never the whole audience.
        if !listing.audience.isEmpty { object["audience"] = .array(listing.audience.map { .string($0) }) }
        return .object(object)
    }

    public static func json(_ change: ListingChange) -> JSONValue {
        switch change {
        case .added(let listing, let arrival):
            .object(
                JSONObject([("change", .string("added")), ("why", .string(arrival.rawValue)), ("room", json(listing))]))
        case .updated(let listing):
            .object(JSONObject([("change", .string("updated")), ("room", json(listing))]))
        case .removed(let room, let departure):
            .object(
                JSONObject([
                    ("change", .string("removed")), ("why", .string(departure.rawValue)), ("name", .string(room)),
                ]))
        }
    }

    // MARK: Records between the nodes of a cluster

    /// What a node of a cluster tells the others' lobbies of a room it owns: the change a lobby that knew
    /// nothing of the room would be told (`added`, with why it arrived, or `removed`, with why it left), under
    /// the owner's lease `epoch`, written at `at` (ms since the epoch).
    public struct ClusterEntry: Sendable, Equatable {
        public var change: ListingChange
        public var epoch: UInt64
        public var at: Int64

        public init(change: ListingChange, epoch: UInt64, at: Int64) {
            self.change = change
            self.epoch = epoch
            self.at = at
        }
    }

    public static func encode(_ entry: ClusterEntry) -> [UInt8] {
        JSONValue.object(
            JSONObject([
                ("epoch", .integer(Int64(clamping: entry.epoch))), ("at", .integer(entry.at)),
                ("change", json(entry.change)),
            ])
        ).encoded
    }

    /// Reads a node's entry, as strictly as a lobby's message (Redis is shared, and its values are input).
    public static func decodeEntry(_ bytes: some Collection<UInt8>) throws(ControlDecodeError) -> ClusterEntry {
        let fields = Fields(try ControlCodec.parseObject(bytes, with: messageParser))
        return ClusterEntry(
            change: try readChange(try fields.value("change")),
            epoch: UInt64(try fields.integer("epoch", in: 0...Int64.max)), at: try fields.integer("at"))
    }

    /// Reads a directory message. Unknown message types are `unknownType`, for the caller to skip (a newer server).
    public static func decodeMessage(_ bytes: some Collection<UInt8>) throws(ControlDecodeError) -> DirectoryMessage {
        let fields = Fields(try ControlCodec.parseObject(bytes, with: messageParser))
        let type = try fields.string("type", maxBytes: 64)
        switch type {
        case "rooms":
            let rooms = try fields.array("rooms").map { value throws(ControlDecodeError) in try readListing(value) }
            return .rooms(rooms, seq: try fields.integer("seq", in: 0...Int64.max))
        case "rooms_changed":
            let changes = try fields.array("changes").map { value throws(ControlDecodeError) in try readChange(value) }
            let seq = try fields.integer("seq", in: 0...Int64.max)
            guard let since = try fields.optionalInteger("since") else { return .changed(changes, seq: seq) }
            guard (0..<seq).contains(since) else {
                throw ControlDecodeError(.badRequest, "the field \"since\" must be below \"seq\"")
            }
            return .changed(changes, seq: seq, since: since)
        case "error":
            let code = ErrorCode(rawValue: try fields.string("code", maxBytes: 64))
            let message = try fields.string("message", maxBytes: 4096)
            guard let id = try fields.optionalString("id", maxCharacters: ControlLimits.maxRequestIDBytes) else {
                return .error(code: code, message: message)
            }
            return .refused(code: code, message: message, id: id)
        case "lobby":
            let word = try fields.string("open_rooms", maxBytes: 16)
            guard let rule = OpenRoomsPolicy(rawValue: word) else {
                throw ControlDecodeError(.badRequest, "unknown rule \"\(word)\" for opening rooms")
            }
            return .welcome(openRooms: rule, mayOpen: try fields.optionalBool("may_open") ?? false)
        case "room_opened":
            let invite = try fields.string("invite", maxBytes: 4096)
            guard !invite.isEmpty, invite.utf8.allSatisfy(Self.isTokenByte) else {
                throw ControlDecodeError(.badRequest, "the field \"invite\" is not a token")
            }
            return .opened(
                room: try readRoomName(fields, "name"), invite: invite,
                id: try fields.string("id", maxBytes: ControlLimits.maxRequestIDBytes))
        default:
            throw ControlDecodeError(.unknownType, "unknown message type \"\(type)\"")
        }
    }

    /// A byte a token may hold: base64url and the dots between its parts.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    static func readRoomName(_ fields: Fields, _ key: String) throws(ControlDecodeError) -> String {
        let room = try fields.string(key, maxBytes: 64)
        guard PlainName.isValid(room) else {
            throw ControlDecodeError(.badRequest, "the field \"\(key)\" is not a room name")
        }
        return room
    }

    static func readListing(_ value: JSONValue) throws(ControlDecodeError) -> RoomListing {
        let fields = Fields(try ControlCodec.objectValue(value, "room"))
        let stage = try fields.array("stage")
        guard stage.count <= RoomListing.maxStageNames else {
            throw ControlDecodeError(.badRequest, "\"stage\" names more than \(RoomListing.maxStageNames) people")
        }
        let members = try stage.map { member throws(ControlDecodeError) -> RoomListing.StageMember in
            let member = Fields(try ControlCodec.objectValue(member, "stage"))
            return RoomListing.StageMember(
                name: try member.string("name", maxCharacters: ControlLimits.maxNameCharacters * 2),
                role: RoleName(try member.string("role", maxBytes: ControlLimits.maxRoleBytes)))
        }
        let count = 0...Int64(Int32.max)
        var audience: [String] = []
        if fields.object["audience"] != nil {
            let names = try fields.array("audience")
            guard names.count <= RoomListing.maxAudienceNames else {
                throw ControlDecodeError(
                    .badRequest, "\"audience\" names more than \(RoomListing.maxAudienceNames) people")
            }
            for name in names {
                guard case .string(let text) = name, text.count <= ControlLimits.maxNameCharacters * 2 else {
                    throw ControlDecodeError(.badRequest, "\"audience\" holds something that is not a name")
                }
                audience.append(text)
            }
        }
        return RoomListing(
            room: try readRoomName(fields, "name"),
            topic: try fields.string("topic", maxCharacters: ControlLimits.maxTopicCharacters), stage: members,
            onStage: Int(try fields.integer("on_stage", in: count)),
            listeners: Int(try fields.integer("listeners", in: count)),
            raisedHands: Int(try fields.integer("raised_hands", in: count)),
            startedAt: try fields.integer("started_at"), recording: try fields.optionalBool("recording") ?? false,
            streaming: fields.object["streaming"] == nil ? [] : try ControlCodec.readStreamNames(fields, "streaming"),
            audience: audience)
    }

    public static func readChange(_ value: JSONValue) throws(ControlDecodeError) -> ListingChange {
        let fields = Fields(try ControlCodec.objectValue(value, "changes"))
        let kind = try fields.string("change", maxBytes: 16)
        switch kind {
        case "added":
            let why = try fields.string("why", maxBytes: 16)
            guard let arrival = ListingArrival(rawValue: why) else {
                throw ControlDecodeError(.badRequest, "unknown reason \"\(why)\" for a room added")
            }
            return .added(try readListing(try fields.value("room")), arrival)
        case "updated":
            return .updated(try readListing(try fields.value("room")))
        case "removed":
            let why = try fields.string("why", maxBytes: 16)
            guard let departure = ListingDeparture(rawValue: why) else {
                throw ControlDecodeError(.badRequest, "unknown reason \"\(why)\" for a room removed")
            }
            return .removed(room: try readRoomName(fields, "name"), departure)
        default:
            throw ControlDecodeError(.badRequest, "unknown change \"\(kind)\"")
        }
    }
}
