import Arguments

/// A line typed on the command line, parsed and with names resolved to peers. See `docs/commands.md`.
public enum Command: Sendable, Equatable {
    case invite(PeerID)
    /// Invite the first raised hand whose invitation is not out yet (the screen's `n`).
    case inviteNext
    /// Take back a pending invitation to speak.
    case withdraw(PeerID)
    /// Answer this client's own invitation to speak.
    case accept
    case decline
    /// Give someone a role; naming oneself steps down, or back up to a role one stepped down from.
    case move(PeerID, RoleName)
    /// Mute someone (or oneself, when the name is one's own or left out).
    case mute(PeerID)
    /// Unmute oneself.
    case unmute
    /// Mute everyone on the stage below oneself (asks first).
    case muteAll
    /// Remove someone; `withdrawLink` (`--link`) withdraws the room's links that let them in too.
    case remove(PeerID, reason: String?, withdrawLink: Bool = false, ban: Bool = false)
    /// Raise the hand, or lower it when it is up.
    case hand
    /// Raise the hand (refused when it is up), or lower it (refused when it is not): the words people reach for
    /// first, each doing only what it says.
    case raiseHand
    case lowerHand
    /// Lower someone else's hand (`/lower NAME`).
    case lowerHandOf(PeerID)
    /// Lower every raised hand (asks first).
    case clearHands
    /// Turn raising hands on or off for the room (`/hands on`, `/hands off`).
    case handsAllowed(Bool)
    case chat(String)
    case dm(PeerID, String)
    /// A message to everyone holding a role.
    case toRole(RoleName, String)
    /// Say who is on stage, in the queue and listening. Local: answered from the client's own state.
    case who
    case topic(String)
    /// Say the room's topic (`/topic` alone). Local: answered from the client's own state.
    case showTopic
    case end(reason: String?)
    /// How loud someone sounds to this person, in percent (0–200); nil asks what it is. Local: never sent.
    case volume(PeerID, percent: Int?)
    /// Show the room in the lobby (`/list`) or take it out (`/unlist`).
    case listed(Bool)
    /// Make an invite link for a role, valid for `ttl` seconds (the server's default when nil), for at most
    /// `uses` people (no limit when nil).
    case link(RoleName, ttl: Int64?, uses: Int64? = nil)
    /// List the room's invite links (hosts).
    case links
    /// Withdraw one of the room's links by its id, or every one with `all` (hosts).
    case revoke(String)
    /// List the server's bans, or lift one by identity or name (hosts).
    case bans
    case unban(String)
    /// Lock the room to newcomers with links, or open it again (hosts).
    case locked(Bool)
    /// Start recording the room (`/record`), or stop it (`/record stop`; asks first) (hosts and moderators).
    case record(Bool)
    /// List the server's stream destinations, or start or stop streaming the room to one (hosts).
    case stream(StreamCommand)
    /// Let in, or turn away, a newcomer waiting at the locked room (hosts and moderators).
    case admit(String)
    case deny(String)
    /// Each person's speaking time and turns since the room went live (hosts and moderators).
    case stats
    /// Which happenings ring the bell and mark the status line; nil values ask what they are. Local.
    case notify(NotifyTopic?, on: Bool?)
    /// Send a reaction, shown briefly beside your name (anyone may).
    case react(Reaction)
    /// Try the connection again now, while reconnecting. Local.
    case retry
    /// Play a file into the room, stop it, or ask what plays. Local: the client plays it and tells the server.
    case play(PlayCommand)
    case leave
    case help

    /// The commands with their arguments, in the order `/help` lists them. The one table of the command line:
    /// the parser, `/help`, the screen's help and docs/commands.md are made from it.
    public static let usages: [(name: String, usage: String, summary: String)] = [
        ("chat", "/chat TEXT", "say something to everyone (a line without / does the same)"),
        ("dm", "/dm NAME TEXT", "message one person"),
        ("to", "/to ROLE TEXT", "message a role and those above it: /to mods, /to speakers"),
        ("who", "/who", "who is on stage, in the queue (with invitations) and listening"),
        ("react", "/react clap|up|haha|heart|wave", "react, shown briefly beside your name: 👏 👍 😂 ❤️ ✋"),
        ("hand", "/hand", "raise your hand, or lower it"),
        ("raise", "/raise", "raise your hand to ask to speak"),
        ("lower", "/lower [NAME]", "lower your hand, or someone's (hosts, moderators)"),
        ("clearhands", "/clearhands", "lower every raised hand (asks first)"),
        ("hands", "/hands on|off", "let people raise hands, or not (off lowers every hand)"),
        ("accept", "/accept", "accept an invitation to speak"),
        ("decline", "/decline", "decline an invitation to speak"),
        ("mute", "/mute [NAME]", "mute yourself, or someone else"),
        ("unmute", "/unmute", "unmute yourself"),
        ("muteall", "/muteall", "mute every speaker but you (asks first)"),
        ("invite", "/invite NAME", "invite someone from the audience onto the stage"),
        ("next", "/next", "invite the next raised hand not invited yet"),
        ("withdraw", "/withdraw NAME", "take back an invitation to speak"),
        ("move", "/move NAME ROLE", "give someone a role; /move me ROLE steps you down or back up"),
        ("remove", "/remove NAME [--link] [REASON]", "remove someone; --link withdraws the link they came in with"),
        ("ban", "/ban NAME [REASON]", "remove someone and keep them out of every room of this server"),
        ("topic", "/topic [TEXT]", "set the room's topic; alone, say what it is"),
        ("end", "/end [REASON]", "end the room for everyone"),
        (
            "record", "/record [stop]",
            "record the room (everyone sees REC); /record stop stops it, asking first (hosts, mods)"
        ),
        ("stream", "/stream [NAME|stop NAME]", "stream the room live to NAME (all see LIVE); alone, list them (hosts)"),
        ("volume", "/volume NAME [PERCENT]", "how loud someone sounds to you, 0 to 200 % (only you hear it)"),
        (
            "play", "/play [FILE|stop]",
            "play a WAV or Ogg Opus file into the room; /play stop ends it; /play: what plays"
        ),
        (
            "link", "/link [ROLE] [TIME] [USES]",
            "make an invite link for a role (listener unless named), valid 7d or TIME, for USES people at most"
        ),
        ("links", "/links", "list this room's invite links, with their ids (hosts)"),
        ("revoke", "/revoke ID|all", "withdraw one invite link, or every link made until now (hosts)"),
        ("bans", "/bans", "list who is banned from this server's rooms (hosts)"),
        ("unban", "/unban NAME|IDENTITY", "lift a ban (hosts)"),
        ("lock", "/lock", "let no one new in with a link; who was in before still comes back (hosts)"),
        ("unlock", "/unlock", "let newcomers with links in again (hosts)"),
        ("admit", "/admit NAME", "let in someone waiting at the locked room (hosts, moderators)"),
        ("deny", "/deny NAME", "turn away someone waiting at the locked room (hosts, moderators)"),
        ("stats", "/stats", "each person's speaking time and turns so far (hosts, moderators)"),
        ("list", "/list", "show this room in the lobby"),
        ("unlist", "/unlist", "take this room out of the lobby; links still work"),
        ("notify", "/notify [messages|hands|bell] [on|off]", "what rings the bell and marks the status line"),
        ("retry", "/retry", "try the connection again now, while reconnecting"),
        ("leave", "/leave", "leave the room"),
        ("help", "/help", "show this help"),
    ]

    /// Words people type for a command that has another name here, and that name: suggested, not obeyed (so a
    /// typo never leaves a room).
    static let wordsPeopleTry = ["quit": "leave", "exit": "leave", "bye": "leave", "say": "chat", "msg": "dm"]

    /// Every command's name, in the order of `usages`.
    public static var names: [String] { usages.map(\.name) }

    /// The help the screen shows for `/help`.
    public static var helpText: String {
        let width = usages.map(\.usage.count).max() ?? 0
        var lines = usages.map { entry in
            entry.usage + String(repeating: " ", count: width - entry.usage.count + 2) + entry.summary
        }
        lines.append("")
        lines.append(
            "NAME is the start of a display name (or identity), any case; quote names with spaces: \"Ana Lee\".")
        lines.append("A line without a leading / is chat; start with // to send a line that begins with /.")
        return lines.joined(separator: "\n")
    }

    /// The most candidates an ambiguous or unknown name lists.
    public static let maxCandidates = 5

    /// Parses one command line. `peers` are the people who can be named; `roles` the roles `/move` and `/to`
    /// accept (by name, label, or a unique prefix of either, singular or plural); `selfID` is this client, whom
    /// `me` names and a `/mute` without a name mutes.
    public static func parse(
        _ line: String, peers: some Collection<Peer>, roles: RoleTable, selfID: PeerID? = nil
    )
        -> Result<Command, CommandError>
    {
        let trimmed = Substring(line).trimmingWhitespace()
        if trimmed.isEmpty { return .failure(.empty) }
        guard trimmed.first == "/" else { return .success(.chat(String(trimmed))) }
        if trimmed.hasPrefix("//") { return .success(.chat(String(trimmed.dropFirst()))) }

        var scanner = Scanner(trimmed.dropFirst())
        let name: String
        switch scanner.word() {
        case .success(let word?): name = word.lowercased()
        case .success(nil): return .failure(.unknownCommand("", suggestion: nil))
        case .failure(let error): return .failure(error)
        }
        guard let entry = usages.first(where: { $0.name == name }) else {
            let suggestion = wordsPeopleTry[name] ?? closestMatch(to: name, among: names)
            return .failure(.unknownCommand(name, suggestion: suggestion))
        }
        let usage = entry.usage

        func argument(_ what: String) -> Result<String, CommandError> {
            switch scanner.word() {
            case .success(let word?) where !word.isEmpty: .success(word)
            case .success: .failure(.missingArgument(command: name, argument: what, usage: usage))
            case .failure(let error): .failure(error)
            }
        }
        func person(_ typed: String) -> Result<PeerID, CommandError> {
            if let selfID, typed.lowercased() == "me",
                !peers.contains(where: { $0.name.lowercased() == "me" || $0.id.rawValue.lowercased() == "me" })
            {
                return .success(selfID)
            }
            return resolvePeer(typed, among: peers)
        }
        func person() -> Result<PeerID, CommandError> {
            argument("NAME").flatMap { person($0) }
        }
        func noMore(_ command: Command) -> Result<Command, CommandError> {
            let rest = scanner.rest()
            return rest.isEmpty
                ? .success(command) : .failure(.unexpectedArgument(command: name, text: rest, usage: usage))
        }
        func text() -> Result<String, CommandError> {
            let rest = scanner.rest()
            return rest.isEmpty
                ? .failure(.missingArgument(command: name, argument: "TEXT", usage: usage)) : .success(rest)
        }
        func optionalReason() -> String? {
            let rest = scanner.rest()
            return rest.isEmpty ? nil : rest
        }

        switch name {
        case "invite": return person().flatMap { noMore(.invite($0)) }
        case "next": return noMore(.inviteNext)
        case "withdraw": return person().flatMap { noMore(.withdraw($0)) }
        case "accept": return noMore(.accept)
        case "decline": return noMore(.decline)
        case "mute":
            switch scanner.word() {
            case .success(nil):
                guard let selfID else {
                    return .failure(.missingArgument(command: name, argument: "NAME", usage: usage))
                }
                return .success(.mute(selfID))
            case .success(let word?): return person(word).flatMap { noMore(.mute($0)) }
            case .failure(let error): return .failure(error)
            }
        case "unmute": return noMore(.unmute)
        case "muteall": return noMore(.muteAll)
        case "move":
            return person().flatMap { id in
                argument("ROLE").flatMap { resolveRole($0, in: roles) }.flatMap { noMore(.move(id, $0)) }
            }
        case "remove":
            return person().map { id in
                let rest = scanner.rest()
                let withdrawLink = rest == "--link" || rest.hasPrefix("--link ")
                let reason = withdrawLink ? String(rest.dropFirst(6)).trimmingCharacters(in: .whitespaces) : rest
                return .remove(id, reason: reason.isEmpty ? nil : reason, withdrawLink: withdrawLink)
            }
        case "ban":
            return person().map { id in
                let reason = scanner.rest()
                return .remove(id, reason: reason.isEmpty ? nil : reason, ban: true)
            }
        case "hand": return noMore(.hand)
        case "raise": return noMore(.raiseHand)
        case "lower":
            switch scanner.word() {
            case .success(nil): return .success(.lowerHand)
            case .success(let word?):
                return person(word).flatMap { noMore($0 == selfID ? .lowerHand : .lowerHandOf($0)) }
            case .failure(let error): return .failure(error)
            }
        case "clearhands": return noMore(.clearHands)
        case "hands":
            return argument("on|off").flatMap { word in
                switch word.lowercased() {
                case "on": noMore(.handsAllowed(true))
                case "off": noMore(.handsAllowed(false))
                default: .failure(.unexpectedArgument(command: name, text: word, usage: usage))
                }
            }
        case "chat": return text().map { .chat($0) }
        case "dm": return person().flatMap { id in text().map { .dm(id, $0) } }
        case "to":
            return argument("ROLE").flatMap { resolveRole($0, in: roles) }.flatMap { role in
                text().map { .toRole(role, $0) }
            }
        case "who": return noMore(.who)
        case "react":
            return argument("a reaction").flatMap { word in
                guard let reaction = Reaction(parsing: word) else { return .failure(.unknownReaction(word)) }
                return noMore(.react(reaction))
            }
        case "topic":
            let rest = scanner.rest()
            return .success(rest.isEmpty ? .showTopic : .topic(rest))
        case "end": return .success(.end(reason: optionalReason()))
        case "list": return noMore(.listed(true))
        case "links": return noMore(.links)
        case "bans": return noMore(.bans)
        case "stats": return noMore(.stats)
        case "unban": return argument("NAME|IDENTITY").flatMap { noMore(.unban($0)) }
        case "lock": return noMore(.locked(true))
        case "unlock": return noMore(.locked(false))
        case "admit": return argument("NAME").flatMap { noMore(.admit($0)) }
        case "deny": return argument("NAME").flatMap { noMore(.deny($0)) }
        case "revoke":
            return argument("ID").flatMap { id in
                noMore(.revoke(id.lowercased() == ClientRequest.allLinks ? ClientRequest.allLinks : id))
            }
        case "unlist": return noMore(.listed(false))
        case "record":
            let rest = scanner.rest()
            if rest.isEmpty || rest.lowercased() == "stop" { return .success(.record(rest.isEmpty)) }
            return .failure(.unexpectedArgument(command: name, text: rest, usage: usage))
        case "stream":
            return scanner.word().flatMap { word -> Result<Command, CommandError> in
                guard let word else { return .success(.stream(.list)) }
                if word.lowercased() != "stop" { return noMore(.stream(.start(word.lowercased()))) }
                return argument("NAME").flatMap { noMore(.stream(.stop($0.lowercased()))) }
            }
        case "link":
            var role = RoleName.audience
            var roleGiven = false
            var ttl: Int64?
            var uses: Int64?
            while true {
                switch scanner.word() {
                case .success(nil):
                    return .success(.link(role, ttl: ttl, uses: uses))
                case .success(let word?):
                    if ttl == nil, let seconds = parseLifetime(word) {
                        ttl = seconds
                        continue
                    }
                    // A bare whole number is how many people the link may let in (a lifetime has a unit).
                    if uses == nil, !word.isEmpty, word.count <= 7, word.allSatisfy({ $0.isASCII && $0.isNumber }),
                        let count = Int64(word)
                    {
                        uses = count
                        continue
                    }
                    if !roleGiven {
                        switch resolveRole(word, in: roles) {
                        case .success(let found):
                            role = found
                            roleGiven = true
                            continue
                        case .failure(let error):
                            return .failure(error)
                        }
                    }
                    return .failure(.unexpectedArgument(command: name, text: word, usage: usage))
                case .failure(let error):
                    return .failure(error)
                }
            }
        case "volume":
            return person().flatMap { id in
                switch scanner.word() {
                case .success(nil): return .success(.volume(id, percent: nil))
                case .success(let word?):
                    guard let percent = parsePercent(word) else {
                        return .failure(.badPercent(word, usage: usage))
                    }
                    return noMore(.volume(id, percent: percent))
                case .failure(let error): return .failure(error)
                }
            }
        case "notify": return parseNotify(&scanner, usage: usage)
        case "retry": return noMore(.retry)
        case "play":
            // The rest of the line is the path, spaces and all; `stop` alone stops (play a file named so as ./stop).
            let rest = scanner.rest()
            if rest.isEmpty { return .success(.play(.status)) }
            if rest.lowercased() == "stop" { return .success(.play(.stop)) }
            return .success(.play(.file(rest)))
        case "leave": return noMore(.leave)
        default: return noMore(.help)
        }
    }

    /// `/notify [TOPIC] [on|off]`, in either order of the two words.
    private static func parseNotify(_ scanner: inout Scanner, usage: String) -> Result<Command, CommandError> {
        var topic: NotifyTopic?
        var on: Bool?
        while true {
            switch scanner.word() {
            case .success(nil): return .success(.notify(topic, on: on))
            case .success(let word?):
                let lowered = word.lowercased()
                if on == nil, lowered == "on" || lowered == "off" {
                    on = lowered == "on"
                } else if topic == nil,
                    let found = NotifyTopic.allCases.first(where: { $0.rawValue.hasPrefix(lowered) })
                {
                    topic = found
                } else {
                    return .failure(.unexpectedArgument(command: "notify", text: word, usage: usage))
                }
            case .failure(let error): return .failure(error)
            }
        }
    }

    /// Finds the one peer a typed name means: an exact match (name or identity, any case) wins; otherwise
    /// the name must be the start of exactly one peer's name or identity.
    public static func resolvePeer(_ typed: String, among peers: some Collection<Peer>) -> Result<PeerID, CommandError>
    {
        let wanted = typed.lowercased()
        var exact: [Peer] = []
        var prefixed: [Peer] = []
        for peer in peers {
            let name = peer.name.lowercased()
            let id = peer.id.rawValue.lowercased()
            if name == wanted || id == wanted {
                exact.append(peer)
            } else if name.hasPrefix(wanted) || id.hasPrefix(wanted) {
                prefixed.append(peer)
            }
        }
        let matches = exact.isEmpty ? prefixed : exact
        if matches.count == 1 { return .success(matches[0].id) }
        if matches.isEmpty {
            // The standard library's search: Foundation's `contains` traps on some text with NUL characters in it
            // ("émile" searched for "e" and seven NULs), which a line read in --plain can hold.
            let similar = peers.filter { $0.name.lowercased().firstRange(of: wanted) != nil }
            let (listed, more) = describe(similar)
            return .failure(.unknownName(typed, similar: listed, more: more))
        }
        let (listed, more) = describe(matches)
        return .failure(.ambiguousName(typed, candidates: listed, more: more))
    }

    /// A volume as typed: a whole number from 0 to 200, with or without a `%` sign.
    public static func parsePercent(_ typed: String) -> Int? {
        let digits = typed.hasSuffix("%") ? typed.dropLast() : Substring(typed)
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let value = Int(digits), (0...200).contains(value)
        else { return nil }
        return value
    }

    /// A link's lifetime as typed: a whole number and a unit, `s`, `m`, `h` or `d` (`30m`, `12h`, `7d`).
    public static func parseLifetime(_ typed: String) -> Int64? {
        guard let unit = typed.last, let scale: Int64 = ["s": 1, "m": 60, "h": 3600, "d": 86_400][unit] else {
            return nil
        }
        let digits = typed.dropLast()
        guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let value = Int64(digits)
        else { return nil }
        return value * scale
    }

    /// Finds a role by name or label, or a unique start of one, in any case.
    public static func resolveRole(_ typed: String, in roles: RoleTable) -> Result<RoleName, CommandError> {
        let lowered = typed.lowercased()
        if case .success(let role) = resolveRoleExactly(lowered, in: roles) { return .success(role) }
        // A plural names the role's holders: speakers, mods, listeners.
        if lowered.count > 1, lowered.hasSuffix("s"),
            case .success(let role) = resolveRoleExactly(String(lowered.dropLast()), in: roles)
        {
            return .success(role)
        }
        return .failure(.unknownRole(typed, known: roles.roles.map(\.name.rawValue)))
    }

    private static func resolveRoleExactly(_ wanted: String, in roles: RoleTable) -> Result<RoleName, CommandError> {
        if let role = roles.roles.first(where: { $0.name.rawValue == wanted || $0.label.lowercased() == wanted }) {
            return .success(role.name)
        }
        let matches = roles.roles.filter {
            $0.name.rawValue.hasPrefix(wanted) || $0.label.lowercased().hasPrefix(wanted)
        }
        if matches.count == 1 { return .success(matches[0].name) }
        return .failure(.unknownRole(wanted, known: roles.roles.map(\.name.rawValue)))
    }

    /// Candidates as "Name (identity)", in audience order, at most `maxCandidates` of them.
    private static func describe(_ peers: [Peer]) -> ([String], Int) {
        let sorted = peers.sorted { AudienceKey(name: $0.name, id: $0.id) < AudienceKey(name: $1.name, id: $1.id) }
        let listed = sorted.prefix(maxCandidates).map { "\($0.name) (\($0.id))" }
        return (listed, sorted.count - listed.count)
    }
}

/// Why a command line could not be parsed. `description` is the sentence the status line shows.
public enum CommandError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    /// No command has this name; `suggestion` is the one it was probably meant to be.
    case unknownCommand(String, suggestion: String?)
    case missingArgument(command: String, argument: String, usage: String)
    case unexpectedArgument(command: String, text: String, usage: String)
    case unterminatedQuote
    /// No one matches; `similar` lists peers whose names contain the text.
    case unknownName(String, similar: [String], more: Int)
    case ambiguousName(String, candidates: [String], more: Int)
    case unknownRole(String, known: [String])
    /// A volume that is not a whole percent from 0 to 200.
    case badPercent(String, usage: String)
    /// No reaction has this name.
    case unknownReaction(String)

    public var description: String {
        switch self {
        case .empty:
            return "type a message, or /help for the commands"
        case .unknownCommand(let name, let suggestion):
            if name.isEmpty { return "a command follows the /; type /help for the commands" }
            if let suggestion { return "unknown command /\(name); did you mean /\(suggestion)? (/help lists them)" }
            return "unknown command /\(name); type /help for the commands"
        case .missingArgument(let command, let argument, let usage):
            return "/\(command) needs \(argument): \(usage)"
        case .unexpectedArgument(let command, let text, let usage):
            // The usual cause is a name with a space in it, typed without quotes.
            let hint = usage.contains("NAME") ? "; quote names with spaces: \"Ana Lee\"" : ""
            return "/\(command) does not take \"\(text)\": \(usage)\(hint)"
        case .unterminatedQuote:
            return "a quote is not closed; put names with spaces in quotes: \"Ana Lee\""
        case .unknownName(let name, let similar, let more):
            let base = "no one here is called \"\(name)\""
            return similar.isEmpty ? base : "\(base); did you mean \(Self.list(similar, more))?"
        case .ambiguousName(let name, let candidates, let more):
            return
                "\"\(name)\" matches \(candidates.count + more) people: \(Self.list(candidates, more)); type more of the name"
        case .unknownRole(let role, let known):
            return "no role \"\(role)\"; roles: \(known.joined(separator: ", "))"
        case .badPercent(let text, let usage):
            return "\"\(text)\" is not a volume; give a whole percent from 0 to 200: \(usage)"
        case .unknownReaction(let text):
            let words = Reaction.allCases.map(\.word)
            return "no reaction \"\(text)\"; reactions: \(words.joined(separator: ", "))"
        }
    }

    private static func list(_ items: [String], _ more: Int) -> String {
        items.joined(separator: ", ") + (more > 0 ? " and \(more) more" : "")
    }
}

/// What `/notify` switches: alerts for direct messages, alerts for new raised hands (for those who run the
/// stage), and the terminal bell that goes with both.
public enum NotifyTopic: String, Sendable, Equatable, CaseIterable {
    case messages
    case hands
    case bell
}

/// Splits a command line into words; a word may be quoted ("Ana Lee") with \" and \\ inside quotes.
struct Scanner {
    private var text: Substring

    init(_ text: Substring) { self.text = text }

    /// Drops whitespace scalars, not whole clusters: a combining mark typed after a space belongs to what follows.
    mutating func skipSpace() {
        text = Substring(text.unicodeScalars.drop(while: { $0.properties.isWhitespace }))
    }

    /// The next word, `nil` at the end of the line. Read scalar by scalar: a quote followed by a combining mark
    /// (a name that starts with one) is one cluster, but still opens a quoted name.
    mutating func word() -> Result<String?, CommandError> {
        skipSpace()
        let scalars = text.unicodeScalars
        guard let first = scalars.first else { return .success(nil) }
        if first != "\"" {
            let end = scalars.firstIndex(where: { $0.properties.isWhitespace }) ?? scalars.endIndex
            let word = String(Substring(scalars[..<end]))
            text = Substring(scalars[end...])
            return .success(word)
        }
        var result = String.UnicodeScalarView()
        var index = scalars.index(after: scalars.startIndex)
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if scalar == "\"" {
                text = Substring(scalars[scalars.index(after: index)...])
                return .success(String(result))
            }
            if scalar == "\\", scalars.index(after: index) < scalars.endIndex {
                index = scalars.index(after: index)
                result.append(scalars[index])
            } else {
                result.append(scalar)
            }
            index = scalars.index(after: index)
        }
        return .failure(.unterminatedQuote)
    }

    /// The rest of the line as typed, trimmed.
    mutating func rest() -> String {
        let rest = String(text.trimmingWhitespace())
        text = text[text.endIndex...]
        return rest
    }
}

extension Substring {
    /// The text without whitespace scalars at either end. Scalars, not clusters: a space followed by a combining
    /// mark is one cluster, and trimming it whole would drop the mark with the space.
    func trimmingWhitespace() -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return self[endIndex...] }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return Substring(scalars[first...last])
    }
}
