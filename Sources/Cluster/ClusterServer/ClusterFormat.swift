import RoomCore
import RoomProtocol
import RoomServer
import StrictJSON

/// Why bytes read from the cluster's Redis (an entry's input, a queued request, a room's copy) are not what this
/// node writes.
public enum ClusterFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Written in another version of the format (`v`), by a node of another version of clubroom.
    case unknownVersion(Int64)
    /// Not JSON, no `v`, or a field missing or of the wrong type: `problem` says which.
    case malformed(String)

    public var description: String {
        switch self {
        case .unknownVersion(let version):
            "written in format version \(version); this node reads version \(ClusterFormat.version) only"
        case .malformed(let problem): problem
        }
    }
}

/// The one format of what nodes exchange through Redis: every document is a JSON object whose first member is
/// the format's version, `"v": 1`, and a node reads only its own version (docs/cluster.md, "What crosses Redis").
/// The keys are written here, one by one, in a fixed order: renaming a property of RoomCore or RoomServer changes
/// nothing the nodes exchange. A request travels in the control protocol's own form (`ControlCodec`).
package enum ClusterFormat {
    static let version: Int64 = 1
    /// A room's copy lists every peer: far larger than a control message, and written only by the nodes (sealed).
    static let parser = StrictJSONParser(maxDepth: 16, maxBytes: 1 << 30)

    /// `object` as a document: `v` first, then its members.
    static func document(_ object: JSONObject) -> [UInt8] {
        var members: [(String, JSONValue)] = [("v", .integer(version))]
        members += object.members.map { ($0.key, $0.value) }
        return JSONValue.object(JSONObject(members)).encoded
    }

    /// The members of a document of this version.
    static func read(_ bytes: [UInt8]) throws(ClusterFormatError) -> Reader {
        let value: JSONValue
        do {
            value = try parser.parse(bytes)
        } catch {
            throw .malformed("not JSON: \(error)")
        }
        guard case .object(let object) = value else { throw .malformed("not a JSON object") }
        let reader = Reader(document: object)
        guard case .integer(let found)? = object["v"] else { throw .malformed("no format version (\"v\")") }
        guard found == version else { throw .unknownVersion(found) }
        return reader
    }

    /// The fields of one object, read strictly: a field missing or of the wrong type is `malformed`, named with its
    /// place in the document.
    typealias Reader = JSONFields<ClusterFormatError>
}

extension JSONFields where Failure == ClusterFormatError {
    /// The fields of `object`, the document's top, read by the cluster's format.
    init(document object: JSONObject) {
        self.init(object) { problem in .malformed("\"\(problem.key)\" must be \(problem.expected)") }
    }

    func unsigned(_ key: String) throws(ClusterFormatError) -> UInt64 {
        let number = try integer(key)
        guard number >= 0 else { throw fail(key, "an integer of 0 or more") }
        return UInt64(number)
    }

    func peer(_ key: String) throws(ClusterFormatError) -> PeerID { PeerID(try string(key)) }

    func role(_ key: String) throws(ClusterFormatError) -> RoleName { RoleName(try string(key)) }

    func object(_ key: String) throws(ClusterFormatError) -> JSONFields {
        guard case .object(let inner)? = json[key] else { throw fail(key, "an object") }
        return nested(inner, place: "\(place)\(key).")
    }

    /// Each element of the array `key`, as an object.
    func objects(_ key: String) throws(ClusterFormatError) -> [JSONFields] {
        guard case .array(let elements)? = json[key] else { throw fail(key, "an array") }
        var readers: [JSONFields] = []
        for (index, element) in elements.enumerated() {
            guard case .object(let inner) = element else { throw fail("\(key)[\(index)]", "an object") }
            readers.append(nested(inner, place: "\(place)\(key)[\(index)]."))
        }
        return readers
    }

    func optionalObjects(_ key: String) throws(ClusterFormatError) -> [JSONFields]? {
        guard optional(key) != nil else { return nil }
        return try objects(key)
    }

    func strings(_ key: String) throws(ClusterFormatError) -> [String] {
        guard case .array(let elements)? = json[key] else { throw fail(key, "an array") }
        var texts: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else { throw fail("\(key)[\(index)]", "a string") }
            texts.append(text)
        }
        return texts
    }
}

// MARK: Shared pieces

extension ClusterFormat {
    static func json(_ peer: Peer) -> JSONValue {
        var object = JSONObject()
        object["id"] = .string(peer.id.rawValue)
        object["name"] = .string(peer.name)
        object["role"] = .string(peer.role.rawValue)
        object["muted"] = .bool(peer.muted)
        if let raised = peer.handRaisedAt { object["handRaisedAt"] = .integer(raised) }
        object["joinedAt"] = .integer(peer.joinedAt)
        object["level"] = .integer(Int64(peer.level))
        if !peer.metadata.isEmpty {
            object["metadata"] = .object(
                JSONObject(peer.metadata.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }))
        }
        object["micWorking"] = .bool(peer.micWorking)
        object["playing"] = .bool(peer.playing)
        return .object(object)
    }

    /// A peer; `Peer` cleans the name and bounds the level as it does for any peer.
    static func peer(_ fields: Reader) throws(ClusterFormatError) -> Peer {
        var metadata: [String: String] = [:]
        if fields.optional("metadata") != nil {
            let entries = try fields.object("metadata")
            for key in entries.json.keys { metadata[key] = try entries.string(key) }
        }
        return Peer(
            id: try fields.peer("id"), name: try fields.string("name"), role: try fields.role("role"),
            muted: try fields.bool("muted"), handRaisedAt: try fields.optionalInteger("handRaisedAt"),
            joinedAt: try fields.integer("joinedAt"), level: Int(clamping: try fields.integer("level")),
            metadata: metadata, micWorking: try fields.bool("micWorking"), playing: try fields.bool("playing"))
    }

    static func json(_ chat: ChatMessage) -> JSONValue {
        var object = JSONObject()
        object["from"] = .string(chat.from.rawValue)
        object["fromName"] = .string(chat.fromName)
        object["text"] = .string(chat.text)
        switch chat.to {
        case .everyone: break
        case .peer(let peer): object["to"] = .object(JSONObject([("peer", .string(peer.rawValue))]))
        case .role(let role): object["to"] = .object(JSONObject([("role", .string(role.rawValue))]))
        }
        object["sentAt"] = .integer(chat.sentAt)
        return .object(object)
    }

    /// A chat message; `ChatMessage` cleans the name and the text as it does for any message.
    static func chat(_ fields: Reader) throws(ClusterFormatError) -> ChatMessage {
        var audience = ChatAudience.everyone
        if fields.optional("to") != nil {
            let to = try fields.object("to")
            if let peer = try to.optionalString("peer") {
                audience = .peer(PeerID(peer))
            } else {
                audience = .role(try to.role("role"))
            }
        }
        return ChatMessage(
            from: try fields.peer("from"), fromName: try fields.string("fromName"), text: try fields.string("text"),
            to: audience, sentAt: try fields.integer("sentAt"))
    }
}
