import StrictJSON

/// One change to the stored rooms, as the journal keeps it and the database applies it. Times are milliseconds
/// since the Unix epoch; identities, roles and actions are plain strings.
public enum DatabaseChange: Sendable, Equatable {
    /// Makes sure the room exists (open, no topic); nothing changes when it does.
    case openRoom(room: String, at: Int64)
    case setTopic(room: String, topic: String, at: Int64)
    /// Ends the room with a reason; it also forgets the roles held in it.
    case endRoom(room: String, reason: String, at: Int64)
    case reopenRoom(room: String, at: Int64)
    /// A chat message; the room keeps its newest `chatRetention`.
    case appendChat(
        room: String, at: Int64, fromIdentity: String, fromName: String, audience: ChatAudienceRecord, text: String)
    case appendAudit(room: String, at: Int64, actor: String, action: String, target: String?, detail: String?)
    /// `identity` is in the room now and holds `role` (since `at`).
    case holdRole(room: String, identity: String, role: String, at: Int64)
    /// `identity` left the room at `at` holding `role`; kept for a reconnect, pruned after `recentRoleRetention`.
    case releaseRole(room: String, identity: String, role: String, at: Int64)
    /// Forgets the role `identity` held in the room.
    case forgetRole(room: String, identity: String)
    /// `inviter` invited `invitee` to speak at `at`; the invitation is pending until `endInvitation`.
    case invite(room: String, invitee: String, inviter: String, at: Int64)
    /// `invitee`'s invitation is answered, withdrawn or lapsed.
    case endInvitation(room: String, invitee: String)
    /// Lists the room in the lobby (`listed`), or takes it out, as its host decided at `at`.
    case setListed(room: String, listed: Bool, at: Int64)
    /// Turns raising hands on (`allowed`) or off for the room, as a host or moderator decided at `at`.
    case setHandsAllowed(room: String, allowed: Bool, at: Int64)
    /// Someone else moved `identity` down to `role` at `at`: the most it comes back with, until `endDemotion`.
    case demote(room: String, identity: String, role: String, at: Int64)
    /// `identity`'s demotion is lifted (someone raised it again).
    case endDemotion(room: String, identity: String)
    /// `identity` raised its hand at `at` (kept while it is away within the reconnect grace), or (nil) its hand
    /// is down.
    case setHand(room: String, identity: String, raisedAt: Int64?)
    /// The room has had people in it since this time, or (nil) is empty.
    case setLive(room: String, since: Int64?)
    /// The room's deadline (a handover due, or its end, with the last host), or (nil) none waits.
    case setDeadline(room: String, deadline: DeadlineRecord?)

    /// The room the change belongs to.
    public var room: String {
        switch self {
        case .openRoom(let room, _), .setTopic(let room, _, _), .endRoom(let room, _, _), .reopenRoom(let room, _),
            .appendChat(let room, _, _, _, _, _), .appendAudit(let room, _, _, _, _, _), .holdRole(let room, _, _, _),
            .releaseRole(let room, _, _, _), .forgetRole(let room, _), .invite(let room, _, _, _),
            .endInvitation(let room, _), .setListed(let room, _, _), .setHandsAllowed(let room, _, _),
            .demote(let room, _, _, _),
            .endDemotion(let room, _), .setHand(let room, _, _), .setLive(let room, _), .setDeadline(let room, _):
            room
        }
    }
}

/// A journal entry that cannot be read: which entry, and why.
public struct JournalEntryError: Error, Sendable, Equatable, CustomStringConvertible {
    public var seq: Int64
    public var problem: String

    public var description: String { "journal entry \(seq): \(problem)" }
}

extension DatabaseChange {
    /// The changes of one commit as the journal stores them: a JSON array of objects, one per change, each with
    /// its `kind` (see `docs/persistence.md`).
    static func encode(_ changes: [DatabaseChange]) -> String {
        JSONValue.array(changes.map { .object($0.json) }).encodedString
    }

    /// Reads what `encode` wrote; anything else is an error naming the entry.
    static func decode(_ text: String, seq: Int64) throws(JournalEntryError) -> [DatabaseChange] {
        let value: JSONValue
        do {
            value = try StrictJSONParser(maxDepth: 4, maxBytes: Int.max).parse(text)
        } catch {
            throw JournalEntryError(seq: seq, problem: error.description)
        }
        guard case .array(let elements) = value else {
            throw JournalEntryError(seq: seq, problem: "not a JSON array")
        }
        var changes: [DatabaseChange] = []
        changes.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .object(let object) = element else {
                throw JournalEntryError(seq: seq, problem: "[\(index)] is not an object")
            }
            do throws(JournalFieldError) {
                changes.append(try DatabaseChange(object))
            } catch {
                throw JournalEntryError(seq: seq, problem: "[\(index)]: \(error.problem)")
            }
        }
        return changes
    }

    private var json: JSONObject {
        func object(_ kind: String, _ room: String, _ fields: [(String, JSONValue)]) -> JSONObject {
            JSONObject([("kind", .string(kind)), ("room", .string(room))] + fields)
        }
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        switch self {
        case .openRoom(let room, let at):
            return object("open_room", room, [("at", .integer(at))])
        case .setTopic(let room, let topic, let at):
            return object("set_topic", room, [("at", .integer(at)), ("topic", .string(topic))])
        case .endRoom(let room, let reason, let at):
            return object("end_room", room, [("at", .integer(at)), ("reason", .string(reason))])
        case .reopenRoom(let room, let at):
            return object("reopen_room", room, [("at", .integer(at))])
        case .appendChat(let room, let at, let fromIdentity, let fromName, let audience, let text):
            let (kind, value): (String, String?) =
                switch audience {
                case .everyone: ("everyone", nil)
                case .peer(let identity): ("peer", identity)
                case .role(let role): ("role", role)
                }
            return object(
                "chat", room,
                [
                    ("at", .integer(at)), ("from", .string(fromIdentity)), ("name", .string(fromName)),
                    ("audience", .string(kind)), ("to", optional(value)), ("text", .string(text)),
                ])
        case .appendAudit(let room, let at, let actor, let action, let target, let detail):
            return object(
                "audit", room,
                [
                    ("at", .integer(at)), ("actor", .string(actor)), ("action", .string(action)),
                    ("target", optional(target)), ("detail", optional(detail)),
                ])
        case .holdRole(let room, let identity, let role, let at):
            return object(
                "hold_role", room, [("at", .integer(at)), ("identity", .string(identity)), ("role", .string(role))])
        case .releaseRole(let room, let identity, let role, let at):
            return object(
                "release_role", room,
                [("at", .integer(at)), ("identity", .string(identity)), ("role", .string(role))])
        case .forgetRole(let room, let identity):
            return object("forget_role", room, [("identity", .string(identity))])
        case .invite(let room, let invitee, let inviter, let at):
            return object(
                "invite", room, [("at", .integer(at)), ("invitee", .string(invitee)), ("inviter", .string(inviter))])
        case .endInvitation(let room, let invitee):
            return object("end_invitation", room, [("invitee", .string(invitee))])
        case .setListed(let room, let listed, let at):
            return object("set_listed", room, [("at", .integer(at)), ("listed", .bool(listed))])
        case .setHandsAllowed(let room, let allowed, let at):
            return object("set_hands_allowed", room, [("allowed", .bool(allowed)), ("at", .integer(at))])
        case .demote(let room, let identity, let role, let at):
            return object(
                "demote", room, [("at", .integer(at)), ("identity", .string(identity)), ("role", .string(role))])
        case .endDemotion(let room, let identity):
            return object("end_demotion", room, [("identity", .string(identity))])
        case .setHand(let room, let identity, let raisedAt):
            return object(
                "set_hand", room,
                [("identity", .string(identity)), ("raised_at", raisedAt.map { .integer($0) } ?? .null)])
        case .setLive(let room, let since):
            return object("set_live", room, [("since", since.map { .integer($0) } ?? .null)])
        case .setDeadline(let room, let deadline):
            return object(
                "set_deadline", room,
                [
                    ("handover_due", deadline?.handoverDue.map { .integer($0) } ?? .null),
                    ("ends_at", deadline?.endsAt.map { .integer($0) } ?? .null),
                    ("host", optional(deadline?.lastHost)), ("host_name", optional(deadline?.lastHostName)),
                ])
        }
    }

    private init(_ object: JSONObject) throws(JournalFieldError) {
        let fields = JSONFields(object) { problem in
            JournalFieldError(
                problem: "\"\(problem.key)\" is " + (problem.required ? "missing or not " : "not ") + problem.expected)
        }
        let room = try fields.string("room")
        switch try fields.string("kind") {
        case "open_room": self = .openRoom(room: room, at: try fields.integer("at"))
        case "set_topic":
            self = .setTopic(room: room, topic: try fields.string("topic"), at: try fields.integer("at"))
        case "end_room":
            self = .endRoom(room: room, reason: try fields.string("reason"), at: try fields.integer("at"))
        case "reopen_room": self = .reopenRoom(room: room, at: try fields.integer("at"))
        case "chat":
            let to = try fields.optionalString("to")
            let audience: ChatAudienceRecord
            switch (try fields.string("audience"), to) {
            case ("everyone", nil): audience = .everyone
            case ("peer", let identity?): audience = .peer(identity)
            case ("role", let role?): audience = .role(role)
            case (let kind, _): throw JournalFieldError(problem: "audience \"\(kind)\" does not fit \"to\"")
            }
            self = .appendChat(
                room: room, at: try fields.integer("at"), fromIdentity: try fields.string("from"),
                fromName: try fields.string("name"), audience: audience, text: try fields.string("text"))
        case "audit":
            self = .appendAudit(
                room: room, at: try fields.integer("at"), actor: try fields.string("actor"),
                action: try fields.string("action"), target: try fields.optionalString("target"),
                detail: try fields.optionalString("detail"))
        case "hold_role":
            self = .holdRole(
                room: room, identity: try fields.string("identity"), role: try fields.string("role"),
                at: try fields.integer("at"))
        case "release_role":
            self = .releaseRole(
                room: room, identity: try fields.string("identity"), role: try fields.string("role"),
                at: try fields.integer("at"))
        case "forget_role": self = .forgetRole(room: room, identity: try fields.string("identity"))
        case "invite":
            self = .invite(
                room: room, invitee: try fields.string("invitee"), inviter: try fields.string("inviter"),
                at: try fields.integer("at"))
        case "end_invitation": self = .endInvitation(room: room, invitee: try fields.string("invitee"))
        case "set_listed":
            self = .setListed(room: room, listed: try fields.bool("listed"), at: try fields.integer("at"))
        case "set_hands_allowed":
            self = .setHandsAllowed(room: room, allowed: try fields.bool("allowed"), at: try fields.integer("at"))
        case "demote":
            self = .demote(
                room: room, identity: try fields.string("identity"), role: try fields.string("role"),
                at: try fields.integer("at"))
        case "end_demotion": self = .endDemotion(room: room, identity: try fields.string("identity"))
        case "set_hand":
            self = .setHand(
                room: room, identity: try fields.string("identity"), raisedAt: try fields.optionalInteger("raised_at"))
        case "set_live": self = .setLive(room: room, since: try fields.optionalInteger("since"))
        case "set_deadline":
            let handoverDue = try fields.optionalInteger("handover_due")
            let endsAt = try fields.optionalInteger("ends_at")
            let deadline = DeadlineRecord(
                handoverDue: handoverDue, endsAt: endsAt, lastHost: try fields.optionalString("host"),
                lastHostName: try fields.optionalString("host_name"))
            self = .setDeadline(room: room, deadline: handoverDue == nil && endsAt == nil ? nil : deadline)
        case let kind:
            throw JournalFieldError(problem: "unknown kind \"\(kind)\" (written by a newer clubroom?)")
        }
    }
}

private struct JournalFieldError: Error {
    var problem: String
}
