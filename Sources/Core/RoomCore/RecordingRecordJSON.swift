import StrictJSON

extension RecordingRecord {
    /// The record as JSON, members in the documented order.
    public var json: JSONValue {
        let people = people.map { person -> JSONValue in
            .object(
                JSONObject([
                    ("peer", .string(person.peer.rawValue)), ("identity", .string(person.identity)),
                    ("name", .string(person.name)), ("role", .string(person.role.rawValue)),
                ]))
        }
        let events = events.map { event -> JSONValue in
            var members: [(String, JSONValue)] = [("at_ms", .integer(event.at))]
            switch event.kind {
            case .stage(let peer, let role):
                members += [
                    ("kind", .string("stage")), ("peer", .string(peer.rawValue)), ("role", .string(role.rawValue)),
                ]
            case .talk(let peer, let end):
                members += [("kind", .string("talk")), ("peer", .string(peer.rawValue)), ("end_ms", .integer(end))]
            case .role(let peer, let role, let by):
                members += [
                    ("kind", .string("role")), ("peer", .string(peer.rawValue)), ("role", .string(role.rawValue)),
                ]
                if let by { members.append(("by", .string(by.rawValue))) }
            case .topic(let topic, let by):
                members += [("kind", .string("topic")), ("topic", .string(topic))]
                if let by { members.append(("by", .string(by.rawValue))) }
            case .chat(let peer, let name, let text):
                members += [
                    ("kind", .string("chat")), ("peer", .string(peer.rawValue)), ("name", .string(name)),
                    ("text", .string(text)),
                ]
            case .join(let peer, let name, let role):
                members += [
                    ("kind", .string("join")), ("peer", .string(peer.rawValue)), ("name", .string(name)),
                    ("role", .string(role.rawValue)),
                ]
            case .leave(let peer):
                members += [("kind", .string("leave")), ("peer", .string(peer.rawValue))]
            }
            return .object(JSONObject(members))
        }
        let speakers = speakers.map { speaker -> JSONValue in
            .object(
                JSONObject([
                    ("identity", .string(speaker.identity)), ("name", .string(speaker.name)),
                    ("seconds", .double((speaker.seconds * 10).rounded() / 10)),
                    ("turns", .integer(Int64(speaker.turns))),
                ]))
        }
        return .object(
            JSONObject([
                ("version", .integer(Self.version)), ("room", .string(room)), ("topic", .string(topic)),
                ("started", .string(started)), ("started_ms", .integer(startedMilliseconds)),
                ("duration_ms", .integer(durationMilliseconds)), ("complete", .bool(complete)),
                ("people", .array(people)), ("events", .array(events)), ("speakers", .array(speakers)),
            ]))
    }

    /// Reads a record from its JSON text.
    public static func parse(_ bytes: some Collection<UInt8>) throws(RecordingRecordError) -> RecordingRecord {
        let value: JSONValue
        do {
            value = try StrictJSONParser(maxDepth: maxDepth, maxBytes: maxBytes).parse(bytes)
        } catch {
            throw .notJSON(error)
        }
        guard case .object(let top) = value else { throw .badField("the record", "an object") }
        guard case .integer(let version)? = top["version"] else { throw .badField("version", "a whole number") }
        guard version == Self.version else { throw .unknownVersion(version) }
        let room = try string(top, "room", in: "")
        let duration = try integer(top, "duration_ms", in: "")
        guard duration >= 0 else { throw .badField("duration_ms", "a number of milliseconds") }
        guard case .bool(let complete)? = top["complete"] else { throw .badField("complete", "true or false") }
        var startedMilliseconds: Int64 = 0
        if top["started_ms"] != nil { startedMilliseconds = try integer(top, "started_ms", in: "") }
        var record = RecordingRecord(
            room: room, topic: try optionalString(top, "topic", in: "") ?? "",
            started: try optionalString(top, "started", in: "") ?? "", startedMilliseconds: startedMilliseconds,
            durationMilliseconds: duration, complete: complete)
        guard case .array(let people)? = top["people"] else { throw .badField("people", "a list") }
        for (index, entry) in people.enumerated() {
            let path = "people[\(index)]"
            guard case .object(let person) = entry else { throw .badField(path, "an object") }
            let peer = PeerID(try string(person, "peer", in: path))
            let name = try string(person, "name", in: path)
            let role = RoleName(try string(person, "role", in: path))
            record.people.append(
                Person(peer: peer, identity: try optionalString(person, "identity", in: path), name: name, role: role))
        }
        guard case .array(let events)? = top["events"] else { throw .badField("events", "a list") }
        for (index, entry) in events.enumerated() {
            if let event = try self.event(entry, path: "events[\(index)]") { record.events.append(event) }
        }
        // A stable sort: events written at the same offset keep their order.
        record.events = record.events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }
            .map(\.element)
        // The speaking times are the recorder's summary; a replay does without them, so a record may leave them out.
        switch top["speakers"] {
        case nil: break
        case .array(let speakers)?:
            for (index, entry) in speakers.enumerated() {
                record.speakers.append(try speaker(entry, path: "speakers[\(index)]"))
            }
        default: throw .badField("speakers", "a list")
        }
        return record
    }

    /// One event, or nil for a kind this reader does not know.
    private static func event(_ value: JSONValue, path: String) throws(RecordingRecordError) -> Event? {
        guard case .object(let event) = value else { throw .badField(path, "an object") }
        let at = try integer(event, "at_ms", in: path)
        guard at >= 0 else { throw .badField(path + ".at_ms", "a number of milliseconds") }
        func peer() throws(RecordingRecordError) -> PeerID { PeerID(try string(event, "peer", in: path)) }
        func by() throws(RecordingRecordError) -> PeerID? {
            try optionalString(event, "by", in: path).map { PeerID($0) }
        }
        func role() throws(RecordingRecordError) -> RoleName { RoleName(try string(event, "role", in: path)) }
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

    private static func speaker(_ value: JSONValue, path: String) throws(RecordingRecordError) -> Speaker {
        guard case .object(let speaker) = value else { throw .badField(path, "an object") }
        let seconds: Double
        switch speaker["seconds"] {
        case .double(let value)? where value >= 0 && value <= maxSeconds: seconds = value
        case .integer(let value)? where value >= 0 && Double(value) <= maxSeconds: seconds = Double(value)
        default: throw .badField(path + ".seconds", "a number of seconds")
        }
        let turns = try integer(speaker, "turns", in: path)
        guard turns >= 0, turns <= Int64(Int32.max) else { throw .badField(path + ".turns", "a number of turns") }
        return Speaker(
            identity: try string(speaker, "identity", in: path), name: try string(speaker, "name", in: path),
            seconds: seconds, turns: Int(turns))
    }

    private static func string(
        _ object: JSONObject, _ key: String, in path: String
    ) throws(RecordingRecordError) -> String {
        guard case .string(let text)? = object[key] else { throw .badField(joined(path, key), "a string") }
        return text
    }

    private static func optionalString(
        _ object: JSONObject, _ key: String, in path: String
    ) throws(RecordingRecordError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw .badField(joined(path, key), "a string")
        }
    }

    private static func integer(
        _ object: JSONObject, _ key: String, in path: String
    ) throws(RecordingRecordError) -> Int64 {
        guard case .integer(let number)? = object[key] else { throw .badField(joined(path, key), "a whole number") }
        return number
    }

    private static func joined(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }
}

/// Why a record cannot be used.
public enum RecordingRecordError: Error, Sendable, Equatable, CustomStringConvertible {
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
                "is of version \(version), which this clubroom does not know (it reads version \(RecordingRecord.version))"
        case .badField(let path, let expected): return "is damaged: \(path) should be \(expected)"
        }
    }
}
