import Foundation
import StrictJSON

/// The room's record beside a recording (`FILE.json` beside `FILE.opus`): who was there, who spoke when, what
/// changed, each at its offset into the audio, and each person's speaking time. Format version 1, as
/// docs/recording.md describes it; written by the recorder, read by replay.
public struct RecordingRecord: Sendable, Equatable {
    /// The format's version; a reader refuses any other.
    public static let version: Int64 = 1

    /// Someone seen during the recording, with the role they had when it began or when they arrived.
    public struct Person: Sendable, Equatable {
        public var peer: String
        public var identity: String
        public var name: String
        public var role: String

        public init(peer: String, identity: String, name: String, role: String) {
            self.peer = peer
            self.identity = identity
            self.name = name
            self.role = role
        }
    }

    /// What happened at `at` milliseconds into the audio.
    public enum Event: Sendable, Equatable {
        /// On the stage when the recording began (at 0).
        case stage(peer: String, role: String)
        /// A talk spurt, from `at` to `end` milliseconds.
        case talk(peer: String, end: Int64)
        case role(peer: String, role: String, by: String?)
        case topic(String, by: String?)
        case chat(peer: String, name: String, text: String)
        case join(peer: String, name: String, role: String)
        case leave(peer: String)
    }

    /// One event at its offset.
    public struct Entry: Sendable, Equatable {
        public var at: Int64
        public var event: Event

        public init(at: Int64, _ event: Event) {
            self.at = at
            self.event = event
        }
    }

    /// One person's speaking time over the recording.
    public struct Speaker: Sendable, Equatable {
        public var identity: String
        public var name: String
        public var seconds: Double
        public var turns: Int

        public init(identity: String, name: String, seconds: Double, turns: Int) {
            self.identity = identity
            self.name = name
            self.seconds = seconds
            self.turns = turns
        }
    }

    public var room: String
    public var topic: String
    /// When the audio begins, in milliseconds since the Unix epoch.
    public var startedMilliseconds: Int64
    public var durationMilliseconds: Int64
    /// Whether the recorder closed the file cleanly; false while it records and after a crash.
    public var complete: Bool
    public var people: [Person]
    /// In time order.
    public var events: [Entry]
    /// Most speaking time first.
    public var speakers: [Speaker]

    public init(
        room: String, topic: String, startedMilliseconds: Int64, durationMilliseconds: Int64, complete: Bool,
        people: [Person], events: [Entry], speakers: [Speaker]
    ) {
        self.room = room
        self.topic = topic
        self.startedMilliseconds = startedMilliseconds
        self.durationMilliseconds = durationMilliseconds
        self.complete = complete
        self.people = people
        self.events = events
        self.speakers = speakers
    }

    /// The start as UTC text, `2026-12-06T05:00:00Z`.
    public static func utcText(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The record as JSON, members in the documented order.
    public var json: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
        let people = people.map { person -> JSONValue in
            .object(
                JSONObject([
                    ("peer", .string(person.peer)), ("identity", .string(person.identity)),
                    ("name", .string(person.name)), ("role", .string(person.role)),
                ]))
        }
        let events = events.map { entry -> JSONValue in
            var members: [(String, JSONValue)] = [("at_ms", .integer(entry.at))]
            switch entry.event {
            case .stage(let peer, let role):
                members += [("kind", .string("stage")), ("peer", .string(peer)), ("role", .string(role))]
            case .talk(let peer, let end):
                members += [("kind", .string("talk")), ("peer", .string(peer)), ("end_ms", .integer(end))]
            case .role(let peer, let role, let by):
                members += [("kind", .string("role")), ("peer", .string(peer)), ("role", .string(role))]
                if let by { members.append(("by", .string(by))) }
            case .topic(let topic, let by):
                members += [("kind", .string("topic")), ("topic", .string(topic))]
                if let by { members.append(("by", .string(by))) }
            case .chat(let peer, let name, let text):
                members += [
                    ("kind", .string("chat")), ("peer", .string(peer)), ("name", .string(name)),
                    ("text", .string(text)),
                ]
            case .join(let peer, let name, let role):
                members += [
                    ("kind", .string("join")), ("peer", .string(peer)), ("name", .string(name)),
                    ("role", .string(role)),
                ]
            case .leave(let peer):
                members += [("kind", .string("leave")), ("peer", .string(peer))]
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
                ("started", .string(Self.utcText(milliseconds: startedMilliseconds))),
                ("started_ms", .integer(startedMilliseconds)), ("duration_ms", .integer(durationMilliseconds)),
                ("complete", .bool(complete)), ("people", .array(people)), ("events", .array(events)),
                ("speakers", .array(speakers)),
            ]))
    }

    /// Reads a record; throws a sentence's worth of why not.
    public static func parse(_ bytes: [UInt8]) throws(RecordingRecordError) -> RecordingRecord {
        let value: JSONValue
        do {
            value = try StrictJSONParser(maxDepth: 8, maxBytes: 256 * 1024 * 1024).parse(bytes)
        } catch {
            throw RecordingRecordError(problem: "it is not JSON (\(error.description))")
        }
        guard case .object(let root) = value else { throw RecordingRecordError(problem: "it is not a JSON object") }
        func string(_ object: JSONObject, _ key: String) throws(RecordingRecordError) -> String {
            guard case .string(let text)? = object[key] else {
                throw RecordingRecordError(problem: "\"\(key)\" is missing or not a string")
            }
            return text
        }
        func optionalString(_ object: JSONObject, _ key: String) -> String? {
            if case .string(let text)? = object[key] { return text }
            return nil
        }
        func integer(_ object: JSONObject, _ key: String) throws(RecordingRecordError) -> Int64 {
            guard case .integer(let number)? = object[key] else {
                throw RecordingRecordError(problem: "\"\(key)\" is missing or not a whole number")
            }
            return number
        }
        func objects(_ key: String) throws(RecordingRecordError) -> [JSONObject] {
            guard case .array(let items)? = root[key] else {
                throw RecordingRecordError(problem: "\"\(key)\" is missing or not a list")
            }
            var result: [JSONObject] = []
            for item in items {
                guard case .object(let object) = item else {
                    throw RecordingRecordError(problem: "\"\(key)\" holds something that is not an object")
                }
                result.append(object)
            }
            return result
        }
        let version = try integer(root, "version")
        guard version == Self.version else {
            throw RecordingRecordError(
                problem: "its version is \(version); this clubroom reads version \(Self.version)")
        }
        guard case .bool(let complete)? = root["complete"] else {
            throw RecordingRecordError(problem: "\"complete\" is missing or not true or false")
        }
        var people: [Person] = []
        for object in try objects("people") {
            people.append(
                Person(
                    peer: try string(object, "peer"), identity: try string(object, "identity"),
                    name: try string(object, "name"), role: try string(object, "role")))
        }
        var events: [Entry] = []
        for object in try objects("events") {
            let at = try integer(object, "at_ms")
            let kind = try string(object, "kind")
            let event: Event
            switch kind {
            case "stage": event = .stage(peer: try string(object, "peer"), role: try string(object, "role"))
            case "talk": event = .talk(peer: try string(object, "peer"), end: try integer(object, "end_ms"))
            case "role":
                event = .role(
                    peer: try string(object, "peer"), role: try string(object, "role"),
                    by: optionalString(object, "by"))
            case "topic": event = .topic(try string(object, "topic"), by: optionalString(object, "by"))
            case "chat":
                event = .chat(
                    peer: try string(object, "peer"), name: try string(object, "name"),
                    text: try string(object, "text"))
            case "join":
                event = .join(
                    peer: try string(object, "peer"), name: try string(object, "name"),
                    role: try string(object, "role"))
            case "leave": event = .leave(peer: try string(object, "peer"))
            // A later version's kinds of event are passed over, not refused.
            default: continue
            }
            events.append(Entry(at: at, event))
        }
        var speakers: [Speaker] = []
        for object in try objects("speakers") {
            let seconds: Double
            switch object["seconds"] {
            case .double(let value)?: seconds = value
            case .integer(let value)?: seconds = Double(value)
            default: throw RecordingRecordError(problem: "\"seconds\" is missing or not a number")
            }
            speakers.append(
                Speaker(
                    identity: try string(object, "identity"), name: try string(object, "name"), seconds: seconds,
                    turns: Int(try integer(object, "turns"))))
        }
        return RecordingRecord(
            room: try string(root, "room"), topic: try string(root, "topic"),
            startedMilliseconds: try integer(root, "started_ms"),
            durationMilliseconds: try integer(root, "duration_ms"),
            complete: complete, people: people, events: events, speakers: speakers)
    }

    /// The record's path for a recording's: the same name, `.json` in place of `.opus` (or added).
    public static func path(forAudio audio: String) -> String {
        audio.hasSuffix(".opus") ? String(audio.dropLast(5)) + ".json" : audio + ".json"
    }
}

/// Why a record could not be read.
public struct RecordingRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problem: String
    public init(problem: String) { self.problem = problem }
    public var description: String { "the record cannot be read: \(problem)" }
}
