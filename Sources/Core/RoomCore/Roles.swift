import Foundation
import StrictJSON

/// One role in the role table.
public struct RoleDefinition: Sendable, Equatable {
    public var name: RoleName
    /// The short word the screen shows next to a name ("mod").
    public var label: String
    /// Standing: 0 is the highest. A peer may act only on peers with a larger rank number.
    public var rank: Int
    /// Whether holders appear on the stage (and may be heard) rather than in the audience.
    public var onStage: Bool
    public var permissions: Set<Permission>

    public init(name: RoleName, label: String, rank: Int, onStage: Bool, permissions: Set<Permission>) {
        self.name = name
        self.label = label
        self.rank = rank
        self.onStage = onStage
        self.permissions = permissions
    }
}

/// Why an action is not allowed; `reason` is a plain sentence for the status line or an error reply.
public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// The roles of a room and what each may do. One table, loaded from `roles.json`, shared by client and server.
///
/// The file format is documented in `docs/state.md`.
public struct RoleTable: Sendable, Equatable {
    /// The roles, highest standing (lowest rank) first.
    public let roles: [RoleDefinition]
    private let byName: [RoleName: Int]

    /// Builds a table from definitions that are already valid; `parse` is the checked way in.
    init(validated roles: [RoleDefinition]) {
        self.roles = roles.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }
            .map(\.element)
        self.byName = Dictionary(
            self.roles.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { first, _ in first })
    }

    /// Reads and checks a role table file.
    public static func load(contentsOf url: URL) throws(RoleTableError) -> RoleTable {
        let source = url.isFileURL ? url.path : url.absoluteString
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = url.isFileURL && FileManager.default.fileExists(atPath: url.path)
            throw RoleTableError(source: source, path: "", problem: exists ? .unreadable : .missingFile)
        }
        return try parse(data, source: source)
    }

    /// Checks a role table given as JSON text; `source` names it in errors (a file path, or "built-in").
    /// The text is read with the strict JSON parser, so a key written twice is an error, not a guess.
    public static func parse(_ data: Data, source: String) throws(RoleTableError) -> RoleTable {
        try RoleTableParser(source: source).parse(Array(data))
    }

    /// Checks roles that were already read from some form (a file, a server's snapshot) against the table's
    /// rules: valid unique names, ranks from 0, a `host` and an off-stage `audience`. `path` is where the list
    /// sits in its document, for errors such as `roles[2].name`.
    public init(
        checking definitions: [RoleDefinition], source: String, path: String = "roles"
    )
        throws(RoleTableError)
    {
        func fail(_ place: String, _ problem: RoleTableError.Problem) -> RoleTableError {
            RoleTableError(source: source, path: place, problem: problem)
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-_")
        var seen: [RoleName: String] = [:]
        for (index, role) in definitions.enumerated() {
            let at = "\(path)[\(index)]"
            let name = role.name.rawValue
            if name.isEmpty { throw fail("\(at).name", .emptyName) }
            if !name.allSatisfy({ allowed.contains($0) }) { throw fail("\(at).name", .invalidName(name)) }
            if role.rank < 0 { throw fail("\(at).rank", .negativeRank(role.rank)) }
            if let firstAt = seen[role.name] { throw fail("\(at).name", .duplicateRole(name, firstAt: firstAt)) }
            seen[role.name] = at
        }
        for required in [RoleName.host, .audience] where seen[required] == nil {
            throw fail(path, .missingRole(required))
        }
        if let audience = definitions.first(where: { $0.name == .audience }), audience.onStage {
            throw fail("\(seen[.audience]!).onStage", .audienceOnStage)
        }
        // The recorder only listens: the server keeps it off the stage and out of every request but leaving.
        if let recorder = definitions.first(where: { $0.name == .recorder }),
            recorder.onStage || !recorder.permissions.isEmpty
        {
            throw fail(seen[.recorder]!, .recorderNotListener)
        }
        self.init(validated: definitions)
    }

    /// The same table with each role's label replaced by `label(role)`; names, ranks and permissions are kept, so
    /// the table's rules still hold.
    public func relabeled(_ label: (RoleDefinition) -> String) -> RoleTable {
        RoleTable(
            validated: roles.map { role in
                var relabeled = role
                relabeled.label = label(role)
                return relabeled
            })
    }

    /// The recorder as a table without one gets it: off stage, no permissions, at `rank`.
    public static func recorderDefinition(rank: Int) -> RoleDefinition {
        RoleDefinition(name: .recorder, label: "recorder", rank: rank, onStage: false, permissions: [])
    }

    /// The definition of a role, or `nil` when the table has no such role.
    public func definition(of role: RoleName) -> RoleDefinition? {
        index(of: role).map { roles[$0] }
    }

    /// Where a role sits in `roles`. A handful of short names compare faster than they hash, and this is on
    /// every event's path.
    private func index(of role: RoleName) -> Int? {
        if roles.count <= 8 { return roles.firstIndex { $0.name == role } }
        return byName[role]
    }

    /// Whether a role exists in this table.
    public func contains(_ role: RoleName) -> Bool { index(of: role) != nil }

    /// Whether `role` holds permission `p`. An unknown role can do nothing.
    public func can(_ role: RoleName, _ p: Permission) -> Bool {
        index(of: role).map { roles[$0].permissions.contains(p) } ?? false
    }

    /// The rank of a role; unknown roles rank below every known one.
    public func rank(of role: RoleName) -> Int { index(of: role).map { roles[$0].rank } ?? Int.max }

    /// Whether holders of `role` sit on the stage.
    public func isOnStage(_ role: RoleName) -> Bool { index(of: role).map { roles[$0].onStage } ?? false }

    /// The role a person means by `word`: its name or the word the screen shows for it, in any case
    /// ("audience" or "listener", "moderator" or "mod"); nil when it is neither.
    public func role(named word: String) -> RoleName? {
        let lowered = word.lowercased()
        return roles.first { $0.name.rawValue.lowercased() == lowered || $0.label.lowercased() == lowered }?.name
    }

    /// The label the screen shows for a role (its name when unknown).
    public func label(of role: RoleName) -> String { index(of: role).map { roles[$0].label } ?? role.rawValue }

    /// Whom "mute all" mutes: the unmuted people on the stage that `actor` may act on, in `peers`' order.
    public func mutedByMuteAll(_ actor: Peer, among peers: some Sequence<Peer>) -> [Peer] {
        peers.filter { peer in
            peer.id != actor.id && !peer.muted && isOnStage(peer.role) && mayActOn(actor: actor.role, target: peer.role)
        }
    }

    /// Whose hands "clear hands" lowers: the raised hands of people `actor` may act on, in `peers`' order.
    public func loweredByClearHands(_ actor: Peer, among peers: some Sequence<Peer>) -> [Peer] {
        peers.filter { $0.handRaisedAt != nil && $0.id != actor.id && mayActOn(actor: actor.role, target: $0.role) }
    }

    /// What "clear hands" with no hand to lower says.
    public static let noHandsToLower = "no raised hands to lower"

    /// What "mute all" with nobody to mute says.
    public static let nobodyToMute = "everyone on the stage you may mute is muted already"

    /// Whether a holder of `holder` reads a message sent to `role`: its holders and everyone ranked above them
    /// (a message to the mods reaches the hosts too: "mods" means the people running the room).
    public func receives(_ holder: RoleName, messageTo role: RoleName) -> Bool {
        contains(holder) && contains(role) && rank(of: holder) <= rank(of: role)
    }

    /// Why a message to `role` was not sent when nobody but its sender would read it: "nobody else here is a mod
    /// or host; nothing was sent".
    public func nobodyReceives(messageTo role: RoleName) -> String {
        let labels = roles.filter { receives($0.name, messageTo: role) }.sorted { $0.rank > $1.rank }.map(\.label)
        return "nobody else here is a " + labels.joined(separator: " or ") + "; nothing was sent"
    }

    /// An actor may move, mute or remove only peers of strictly lower standing (a larger rank number).
    public func mayActOn(actor: RoleName, target: RoleName) -> Bool {
        contains(actor) && rank(of: actor) < rank(of: target)
    }

    /// An actor may give only roles of its own rank or lower standing: a moderator cannot make a host,
    /// a host can make a moderator.
    public func mayAssign(actor: RoleName, role: RoleName) -> Bool {
        contains(actor) && contains(role) && rank(of: role) >= rank(of: actor)
    }

    /// The plain refusal for lacking a permission: "only hosts and moderators can invite people to speak".
    public func refusal(lacking p: Permission) -> Refusal {
        refusal(lacking: p, phrase: p.phrase)
    }

    /// The same refusal for something else the permission allows: "only hosts can *list or unlist the room*".
    public func refusal(lacking p: Permission, phrase: String) -> Refusal {
        // "audiences" would read oddly; the audience are its listeners.
        let holders = roles.filter { $0.permissions.contains(p) }
            .map { $0.name == .audience ? "listeners" : $0.name.rawValue + "s" }
        if holders.isEmpty { return Refusal("no one in this room can \(phrase)") }
        return Refusal("only \(English.list(holders)) can \(phrase)")
    }

    /// Checks a request against the permissions and the rank rules, the part of a decision that depends
    /// only on who asks and who is affected. The server calls it before acting; the client calls it before
    /// sending, to say at once why something cannot be done. `target` is the peer a request is about, if any.
    /// State checks (is the hand already up, is there an invitation) are the caller's.
    public func check(_ request: ClientRequest, by actor: Peer, target: Peer?) -> Refusal? {
        if let refusal = recorderRule(request, by: actor, target: target) { return refusal }
        switch request {
        case .raiseHand:
            return can(actor.role, .raiseHand) ? nil : refusal(lacking: .raiseHand)
        case .lowerHand, .declineInvite, .leave, .setMicWorking:
            return nil
        case .acceptInvite:
            return nil
        case .stepDown:
            return isOnStage(actor.role) ? nil : Refusal("you are not on the stage")
        case .setMute(let muted):
            return muted || can(actor.role, .publishAudio) ? nil : refusal(lacking: .publishAudio)
        case .setPlaying(let playing):
            return !playing || can(actor.role, .publishAudio)
                ? nil : Refusal(ClientRequest.playingNeedsTheStage)
        case .invite:
            guard can(actor.role, .invite) else { return refusal(lacking: .invite) }
            guard let target else { return nil }
            if isOnStage(target.role) { return Refusal("\(target.name) is already on the stage") }
            return standing(actor, over: target, doing: "invite")
        case .withdrawInvite:
            guard can(actor.role, .invite) else { return refusal(lacking: .invite) }
            guard let target else { return nil }
            return standing(actor, over: target, doing: "withdraw the invitation of")
        case .setRole(let id, let role) where target?.id == actor.id || id == actor.id:
            // Your own role: anyone may step down to any lower role; stepping back up depends on the token and
            // on who lowered you, which only the room knows (its state check).
            guard contains(role) else { return Refusal("there is no role called \(role)") }
            if role == actor.role { return Refusal("you are already \(English.article(role.rawValue))") }
            return nil
        case .setRole(_, let role):
            guard can(actor.role, .move) else { return refusal(lacking: .move) }
            guard contains(role) else { return Refusal("there is no role called \(role)") }
            if !mayAssign(actor: actor.role, role: role) {
                return Refusal(
                    "\(English.article(actor.role.rawValue)) cannot make someone \(English.article(role.rawValue))")
            }
            guard let target else { return nil }
            if target.role == role { return Refusal("\(target.name) is already \(English.article(role.rawValue))") }
            return standing(actor, over: target, doing: "move")
        case .lowerHandOf:
            guard can(actor.role, .invite) else {
                return refusal(lacking: .invite, phrase: "lower someone else's hand")
            }
            guard let target else { return nil }
            return standing(actor, over: target, doing: "lower the hand of")
        case .clearHands:
            return can(actor.role, .invite) ? nil : refusal(lacking: .invite, phrase: "clear the raised hands")
        case .muteAll:
            return can(actor.role, .muteOthers) ? nil : refusal(lacking: .muteOthers, phrase: "mute the speakers")
        case .mutePeer:
            guard can(actor.role, .muteOthers) else { return refusal(lacking: .muteOthers) }
            guard let target else { return nil }
            return standing(actor, over: target, doing: "mute")
        case .remove(_, _, _, let ban):
            guard can(actor.role, .remove) else { return refusal(lacking: .remove) }
            // A ban reaches past the room, to every room of the server: the host's call, like the room's links.
            if ban, !can(actor.role, .endRoom) {
                return refusal(lacking: .endRoom, phrase: "ban someone from the server's rooms")
            }
            guard let target else { return nil }
            return standing(actor, over: target, doing: ban ? "ban" : "remove")
        case .setTopic:
            return can(actor.role, .setTopic) ? nil : refusal(lacking: .setTopic)
        case .endRoom:
            return can(actor.role, .endRoom) ? nil : refusal(lacking: .endRoom)
        case .setHandsAllowed:
            return can(actor.role, .invite) ? nil : refusal(lacking: .invite, phrase: "turn raised hands off or on")
        case .setListed:
            // Whether a room shows in the lobby is the host's call, like whether it goes on at all.
            return can(actor.role, .endRoom) ? nil : refusal(lacking: .endRoom, phrase: "list or unlist the room")
        case .createLink(let role, let ttl, let maxUses):
            guard can(actor.role, .invite) else { return refusal(lacking: .invite, phrase: "make invite links") }
            guard contains(role) else { return Refusal("there is no role called \(role)") }
            if role == .recorder, !can(actor.role, .record) {
                return refusal(lacking: .record, phrase: "make links for a recorder")
            }
            if !mayAssign(actor: actor.role, role: role) {
                return Refusal(
                    "\(English.article(actor.role.rawValue)) cannot make links for \(English.article(role.rawValue))")
            }
            guard ClientRequest.linkLifetimes.contains(ttl) else {
                return Refusal("a link lasts from one minute to 30 days")
            }
            if let maxUses, !ClientRequest.linkUses.contains(maxUses) {
                return Refusal("a link lets in from 1 to 1,000,000 people")
            }
            return nil
        case .listLinks:
            // Which links open the room, and withdrawing them, is the host's call, like whether it goes on.
            return can(actor.role, .endRoom) ? nil : refusal(lacking: .endRoom, phrase: "see the room's links")
        case .revokeLink:
            return can(actor.role, .endRoom) ? nil : refusal(lacking: .endRoom, phrase: "withdraw the room's links")
        case .setLocked:
            return can(actor.role, .endRoom) ? nil : refusal(lacking: .endRoom, phrase: "lock or unlock the room")
        case .listBans, .unban:
            return can(actor.role, .endRoom) ? nil : refusal(lacking: .endRoom, phrase: "see or lift the server's bans")
        case .admitWaiting, .denyWaiting:
            // Who may remove someone decides who comes in while the room is locked.
            return can(actor.role, .remove)
                ? nil : refusal(lacking: .remove, phrase: "let newcomers in or turn them away")
        case .chat:
            return can(actor.role, .chat) ? nil : refusal(lacking: .chat)
        case .stats:
            // Who may move people runs the stage, and giving the quiet ones a turn is theirs to do.
            return can(actor.role, .move) ? nil : refusal(lacking: .move, phrase: "see how long each person has spoken")
        case .react:
            // Anyone in the room may react, as in a theatre; the server limits how often (`ReactionGate`).
            return nil
        case .startRecording, .stopRecording:
            return can(actor.role, .record) ? nil : refusal(lacking: .record)
        case .startStream, .stopStream:
            return can(actor.role, .stream) ? nil : refusal(lacking: .stream)
        case .streamStatus:
            return actor.role == .recorder ? nil : Refusal("only a stream's recorder reports how its stream goes")
        case .recorderError:
            return actor.role == .recorder ? nil : Refusal("only a recorder reports why it stops")
        }
    }

    /// The recorder's rules, before any other: a recorder may only report an error and leave; nobody may act on a
    /// recorder but to remove it, nor make anyone one.
    private func recorderRule(_ request: ClientRequest, by actor: Peer, target: Peer?) -> Refusal? {
        if actor.role == .recorder {
            switch request {
            case .leave, .recorderError, .streamStatus: return nil
            default: return Refusal(ClientRequest.recorderOnlyListens)
            }
        }
        if case .setRole(_, .recorder) = request { return Refusal(ClientRequest.recorderByLinkOnly) }
        if let target, target.role == .recorder {
            if case .remove = request { return nil }
            return Refusal("\(target.name) is a recorder: it only listens")
        }
        return nil
    }

    private func standing(_ actor: Peer, over target: Peer, doing verb: String) -> Refusal? {
        if target.id == actor.id { return Refusal("you cannot \(verb) yourself") }
        if mayActOn(actor: actor.role, target: target.role) { return nil }
        return Refusal(
            "you cannot \(verb) \(target.name): \(English.article(target.role.rawValue)) is not below "
                + English.article(actor.role.rawValue))
    }
}

/// A role table that could not be loaded: which file, where in it, and what is wrong.
public struct RoleTableError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        case missingFile
        case unreadable
        case invalidJSON(String)
        /// An object has the same key twice; strict JSON refuses it rather than keep one of the two.
        case duplicateKey(String, line: Int, column: Int)
        case wrongType(expected: String)
        case missingKey(String)
        case unknownKey(String, allowed: [String])
        case unsupportedVersion(Int)
        case emptyName
        case invalidName(String)
        case negativeRank(Int)
        case unknownPermission(String)
        case duplicatePermission(String)
        case duplicateRole(String, firstAt: String)
        case missingRole(RoleName)
        case audienceOnStage
        case recorderNotListener

        public var description: String {
            switch self {
            case .missingFile: "file not found"
            case .unreadable: "file cannot be read"
            case .invalidJSON(let detail): "not valid JSON (\(detail))"
            case .duplicateKey(let key, let line, let column):
                "the key \"\(key)\" appears twice (line \(line), column \(column))"
            case .wrongType(let expected): "expected \(expected)"
            case .missingKey(let key): "missing \"\(key)\""
            case .unknownKey(let key, let allowed):
                "unknown key \"\(key)\"; allowed: \(allowed.joined(separator: ", "))"
            case .unsupportedVersion(let v): "unsupported version \(v); this Clubroom reads version 1"
            case .emptyName: "role name is empty"
            case .invalidName(let name):
                "role name \"\(name)\" may use only lowercase letters, digits, '-' and '_'"
            case .negativeRank(let rank): "rank \(rank) is negative; 0 is the highest standing"
            case .unknownPermission(let p):
                "unknown permission \"\(p)\"; known: \(Permission.allCases.map(\.rawValue).joined(separator: ", "))"
            case .duplicatePermission(let p): "permission \"\(p)\" is listed twice"
            case .duplicateRole(let name, let firstAt): "duplicate role \"\(name)\" (first defined at \(firstAt))"
            case .missingRole(let role): "no \"\(role)\" role; every table needs \"host\" and \"audience\""
            case .audienceOnStage: "the \"audience\" role must have \"onStage\": false"
            case .recorderNotListener:
                "the \"recorder\" role must have \"onStage\": false and no permissions: a recorder only listens"
            }
        }
    }

    /// The file (or other source) the table came from.
    public var source: String
    /// Where in the JSON the problem is, e.g. `roles[2].permissions[1]`; empty for the whole file.
    public var path: String
    public var problem: Problem

    public var description: String {
        path.isEmpty ? "\(source): \(problem)" : "\(source): \(Self.shown(path)): \(problem)"
    }

    /// The path as the message shows it: quoted when its first character would join the space before it (a key
    /// from the file that starts with a combining mark), so the message still reads "SOURCE: PATH: PROBLEM".
    static func shown(_ path: String) -> String {
        (" " + path).count == 1 + path.count ? path : "\"\(path)\""
    }
}

/// Reads `roles.json`: the JSON shape and types, then the table's rules (`RoleTable(checking:)`).
private struct RoleTableParser {
    let source: String
    /// A role table is a few hundred bytes; this bounds a wrong file given by mistake.
    static let parser = StrictJSONParser(maxDepth: 16, maxBytes: 1024 * 1024)

    func fail(_ path: String, _ problem: RoleTableError.Problem) -> RoleTableError {
        RoleTableError(source: source, path: path, problem: problem)
    }

    func parse(_ bytes: [UInt8]) throws(RoleTableError) -> RoleTable {
        let root: JSONValue
        do {
            root = try Self.parser.parse(bytes)
        } catch {
            let (line, column) = JSONParseError.lineAndColumn(of: error.offset, in: bytes)
            if case .duplicateKey(let key) = error.problem {
                throw fail(error.path, .duplicateKey(key, line: line, column: column))
            }
            throw fail("", .invalidJSON("\(error.description), line \(line), column \(column)"))
        }
        guard case .object(let top) = root else { throw fail("", .wrongType(expected: "an object")) }
        try checkKeys(top, allowed: ["version", "roles"], at: "")
        guard let versionValue = top["version"] else { throw fail("", .missingKey("version")) }
        let version = try integer(versionValue, at: "version")
        guard version == 1 else { throw fail("version", .unsupportedVersion(version)) }
        guard let rolesValue = top["roles"] else { throw fail("", .missingKey("roles")) }
        guard case .array(let items) = rolesValue else { throw fail("roles", .wrongType(expected: "an array")) }
        var roles: [RoleDefinition] = []
        for (index, item) in items.enumerated() {
            roles.append(try parseRole(item, at: "roles[\(index)]"))
        }
        // Every room may be recorded, and everyone told so: a table written before recording gets the recorder,
        // below every role it has.
        if !roles.contains(where: { $0.name == .recorder }) {
            roles.append(RoleTable.recorderDefinition(rank: (roles.map(\.rank).max() ?? -1) + 1))
        }
        // A table written before streaming lets its hosts stream, as the table shipped with Clubroom does.
        if !roles.contains(where: { $0.permissions.contains(.stream) }),
            let host = roles.firstIndex(where: { $0.name == .host })
        {
            roles[host].permissions.insert(.stream)
        }
        return try RoleTable(checking: roles, source: source)
    }

    private func parseRole(_ value: JSONValue, at: String) throws(RoleTableError) -> RoleDefinition {
        guard case .object(let fields) = value else { throw fail(at, .wrongType(expected: "an object")) }
        try checkKeys(fields, allowed: ["name", "label", "rank", "onStage", "permissions"], at: at)
        let name = try string(try required(fields, "name", at: at), at: "\(at).name")
        let label = try fields["label"].map { v throws(RoleTableError) in try string(v, at: "\(at).label") } ?? name
        let rank = try integer(try required(fields, "rank", at: at), at: "\(at).rank")
        guard case .bool(let onStage) = try required(fields, "onStage", at: at) else {
            throw fail("\(at).onStage", .wrongType(expected: "true or false"))
        }
        guard case .array(let list) = try required(fields, "permissions", at: at) else {
            throw fail("\(at).permissions", .wrongType(expected: "an array of permission names"))
        }
        var permissions: Set<Permission> = []
        for (index, item) in list.enumerated() {
            let place = "\(at).permissions[\(index)]"
            let raw = try string(item, at: place)
            guard let permission = Permission(rawValue: raw) else { throw fail(place, .unknownPermission(raw)) }
            if !permissions.insert(permission).inserted { throw fail(place, .duplicatePermission(raw)) }
        }
        return RoleDefinition(
            name: RoleName(name), label: label, rank: rank, onStage: onStage, permissions: permissions)
    }

    private func required(_ fields: JSONObject, _ key: String, at: String) throws(RoleTableError) -> JSONValue {
        guard let value = fields[key] else { throw fail(at, .missingKey(key)) }
        return value
    }

    private func checkKeys(_ fields: JSONObject, allowed: [String], at: String) throws(RoleTableError) {
        for key in fields.keys.sorted() where !allowed.contains(key) {
            throw fail(at.isEmpty ? key : "\(at).\(key)", .unknownKey(key, allowed: allowed))
        }
    }

    private func string(_ value: JSONValue, at: String) throws(RoleTableError) -> String {
        guard case .string(let s) = value else { throw fail(at, .wrongType(expected: "a string")) }
        return s
    }

    /// A whole number: written as an integer, or with a fraction of zero (`2.0`) as before.
    private func integer(_ value: JSONValue, at: String) throws(RoleTableError) -> Int {
        switch value {
        case .integer(let n) where abs(n) < 1_000_000_000: return Int(n)
        case .double(let n) where n.rounded() == n && abs(n) < 1e9: return Int(n)
        default: throw fail(at, .wrongType(expected: "a whole number"))
        }
    }
}
