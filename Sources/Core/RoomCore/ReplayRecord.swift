import StrictJSON

/// A room's record (`FILE.json` beside a recording's `FILE.opus`) as a replay reads it: who was there, and what
/// happened at which offset into the audio. The format is in docs/recording.md; this is its reader, strict about
/// what it needs and lenient about what it does not (unknown members and event kinds are passed over, so a later
/// recorder may add them without a new version).
public struct ReplayRecord: Sendable, Equatable {
    /// The version of the record format this reader knows.
    public static let knownVersion: Int64 = 1
    /// The largest record read, in bytes (the recorder's own reader takes as much; an hour's busy room is a few
    /// megabytes).
    public static let maxBytes = 256 * 1024 * 1024

    /// The room's name.
    public var room: String
    /// The topic as it was last (each change is a `topic` event).
    public var topic: String
    /// When the recording began, as the recorder wrote it (ISO 8601, UTC).
    public var started: String
    /// The length of the audio the record covers, in milliseconds.
    public var durationMilliseconds: Int64
    /// Whether the recorder closed the file cleanly; false for a recording cut short.
    public var complete: Bool
    /// Everyone seen, with the role they had when the recording began or when they arrived.
    public var people: [Person]
    /// What happened, in time order (a record written out of order is put in order, keeping the written order of
    /// events at the same offset).
    public var events: [Event]

    /// One person the record saw.
    public struct Person: Sendable, Equatable {
        public var peer: PeerID
        public var name: String
        public var role: RoleName

        public init(peer: PeerID, name: String, role: RoleName) {
            self.peer = peer
            self.name = name
            self.role = role
        }
    }

    /// One thing that happened, at `at` milliseconds into the audio.
    public struct Event: Sendable, Equatable {
        /// What happened.
        public enum Kind: Sendable, Equatable {
            /// On the stage with this role when the recording began.
            case stage(PeerID, RoleName)
            /// A talk spurt, until `end` (milliseconds into the audio).
            case talk(PeerID, end: Int64)
            /// A new role, given by `by` (nil: by the server, or taken by the person).
            case role(PeerID, RoleName, by: PeerID?)
            /// A new topic (empty: cleared).
            case topic(String, by: PeerID?)
            /// A chat message to everyone.
            case chat(PeerID, name: String, text: String)
            /// Someone came in.
            case join(PeerID, name: String, role: RoleName)
            /// Someone left.
            case leave(PeerID)
        }

        public var at: Int64
        public var kind: Kind

        public init(at: Int64, _ kind: Kind) {
            self.at = at
            self.kind = kind
        }
    }

    public init(
        room: String, topic: String = "", started: String = "", durationMilliseconds: Int64, complete: Bool = true,
        people: [Person] = [], events: [Event] = []
    ) {
        self.room = room
        self.topic = topic
        self.started = started
        self.durationMilliseconds = durationMilliseconds
        self.complete = complete
        self.people = people
        self.events = events
    }

    /// Reads a record from its JSON text.
    public static func parse(_ bytes: some Collection<UInt8>) throws(ReplayRecordError) -> ReplayRecord {
        let value: JSONValue
        do {
            value = try StrictJSONParser(maxDepth: 8, maxBytes: maxBytes).parse(bytes)
        } catch {
            throw .notJSON(error)
        }
        guard case .object(let top) = value else { throw .badField("the record", "an object") }
        guard case .integer(let version)? = top["version"] else { throw .badField("version", "a whole number") }
        guard version == knownVersion else { throw .unknownVersion(version) }
        let room = try string(top, "room", in: "")
        let duration = try integer(top, "duration_ms", in: "")
        guard duration >= 0 else { throw .badField("duration_ms", "a number of milliseconds") }
        guard case .bool(let complete)? = top["complete"] else { throw .badField("complete", "true or false") }
        var record = ReplayRecord(
            room: room, topic: try optionalString(top, "topic", in: "") ?? "",
            started: try optionalString(top, "started", in: "") ?? "", durationMilliseconds: duration,
            complete: complete)
        guard case .array(let people)? = top["people"] else { throw .badField("people", "a list") }
        for (index, entry) in people.enumerated() {
            let path = "people[\(index)]"
            guard case .object(let person) = entry else { throw .badField(path, "an object") }
            record.people.append(
                Person(
                    peer: PeerID(try string(person, "peer", in: path)), name: try string(person, "name", in: path),
                    role: RoleName(try string(person, "role", in: path))))
        }
        guard case .array(let events)? = top["events"] else { throw .badField("events", "a list") }
        for (index, entry) in events.enumerated() {
            if let event = try self.event(entry, path: "events[\(index)]") { record.events.append(event) }
        }
        // A stable sort: events written at the same offset keep their order.
        record.events = record.events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
        return record
    }

    /// One event, or nil for a kind this reader does not know.
    private static func event(_ value: JSONValue, path: String) throws(ReplayRecordError) -> Event? {
        guard case .object(let event) = value else { throw .badField(path, "an object") }
        let at = try integer(event, "at_ms", in: path)
        guard at >= 0 else { throw .badField(path + ".at_ms", "a number of milliseconds") }
        func peer() throws(ReplayRecordError) -> PeerID { PeerID(try string(event, "peer", in: path)) }
        func by() throws(ReplayRecordError) -> PeerID? { try optionalString(event, "by", in: path).map { PeerID($0) } }
        func role() throws(ReplayRecordError) -> RoleName { RoleName(try string(event, "role", in: path)) }
        switch try string(event, "kind", in: path) {
        case "stage": return Event(at: at, .stage(try peer(), try role()))
        case "talk":
            let end = try integer(event, "end_ms", in: path)
            guard end >= at else { throw .badField(path + ".end_ms", "an offset not before at_ms") }
            return Event(at: at, .talk(try peer(), end: end))
        case "role": return Event(at: at, .role(try peer(), try role(), by: try by()))
        case "topic": return Event(at: at, .topic(try string(event, "topic", in: path), by: try by()))
        case "chat":
            return Event(
                at: at,
                .chat(try peer(), name: try string(event, "name", in: path), text: try string(event, "text", in: path)))
        case "join":
            return Event(at: at, .join(try peer(), name: try string(event, "name", in: path), role: try role()))
        case "leave": return Event(at: at, .leave(try peer()))
        default: return nil
        }
    }

    private static func string(
        _ object: JSONObject, _ key: String, in path: String
    ) throws(ReplayRecordError)
        -> String
    {
        guard case .string(let text)? = object[key] else { throw .badField(joined(path, key), "a string") }
        return text
    }

    private static func optionalString(
        _ object: JSONObject, _ key: String, in path: String
    )
        throws(ReplayRecordError) -> String?
    {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw .badField(joined(path, key), "a string")
        }
    }

    private static func integer(
        _ object: JSONObject, _ key: String, in path: String
    ) throws(ReplayRecordError)
        -> Int64
    {
        guard case .integer(let number)? = object[key] else {
            throw .badField(joined(path, key), "a whole number")
        }
        return number
    }

    private static func joined(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }
}

/// Why a record cannot be used.
public enum ReplayRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// It is not JSON (or too large or deep to read).
    case notJSON(JSONParseError)
    /// It is of a version this reader does not know.
    case unknownVersion(Int64)
    /// A member is missing or of the wrong kind: where, and what it should be.
    case badField(String, String)

    /// What is wrong, as the end of a sentence: "is not JSON (…)", "is of version 2, which this clubroom does
    /// not know".
    public var description: String {
        switch self {
        case .notJSON(let error): return "is not JSON (\(error))"
        case .unknownVersion(let version):
            return
                "is of version \(version), which this clubroom does not know (it reads version \(ReplayRecord.knownVersion))"
        case .badField(let path, let expected): return "is damaged: \(path) should be \(expected)"
        }
    }
}
