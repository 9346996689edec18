import RoomCore
import StrictJSON

/// The pieces messages share: peers, chat, roles, request ids and the checks every message passes.
extension ControlCodec {
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
        guard let value = fields.optionalValue("to") else { return .everyone }
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

    /// A recording as `recording` and the snapshot's `recording` carry it: `active`, and while it is, `by` and
    /// `since`.
    static func jsonObject(_ recording: RecordingState) -> JSONObject {
        var object = JSONObject()
        object["active"] = .bool(true)
        if let by = recording.by { object["by"] = .string(by.rawValue) }
        object["since"] = .integer(recording.since)
        return object
    }

    static func json(_ recording: RecordingState) -> JSONValue { .object(jsonObject(recording)) }

    /// The recording an object says goes on (`active` true: `since`, and `by` when given), or nil when it says
    /// none does (`active` false).
    static func readRecording(_ fields: Fields) throws(ControlDecodeError) -> RecordingState? {
        guard try fields.bool("active") else { return nil }
        let by = try fields.optionalString("by", maxBytes: ControlLimits.maxIdentityBytes)
        if by?.isEmpty == true { throw ControlDecodeError(.badRequest, "the field \"by\" is empty") }
        return RecordingState(by: by.map { PeerID($0) }, since: try fields.integer("since"))
    }

    /// A snapshot's `ending`: the last host who left (`peer`, `name`) and when the room ends (`at`), as the
    /// `room_ending` event that announced it says them.
    static func json(_ ending: HostlessEnding) -> JSONValue {
        .object(
            JSONObject([
                ("peer", .string(ending.host.rawValue)), ("name", .string(ending.name)), ("at", .integer(ending.at)),
            ]))
    }

    /// Reads what `json(_: HostlessEnding)` writes; every field is needed.
    static func readEnding(_ fields: Fields) throws(ControlDecodeError) -> HostlessEnding {
        HostlessEnding(
            host: try fields.peer("peer"),
            name: try fields.string("name", maxCharacters: ControlLimits.maxNameCharacters * 2),
            at: try fields.integer("at"))
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
