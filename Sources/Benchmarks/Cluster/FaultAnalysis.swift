import StrictJSON

/// What a fault run's requests and its clients' event lines say: which requests took effect, which were refused
/// and took effect anyway, what took effect twice, and who is a ghost. Pure: the run feeds it what it recorded.
public struct FaultAnalysis: Sendable {
    /// One event line of a bot, with when the run read it (monotonic ms).
    public struct Line: Sendable, Equatable {
        public var at: Int64
        public var text: String
    }

    /// Everything one bot printed, in order.
    public struct BotRecord: Sendable {
        public var identity: String
        public var lines: [Line]
    }

    /// A numbered request one bot sent.
    public struct Operation: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case chat, topic
            case raiseHand = "raise_hand"
            case lowerHand = "lower_hand"
            case setRole = "set_role"
        }

        public var id: Int
        public var bot: String
        public var kind: Kind
        /// The numbered text of a chat or topic.
        public var text: String?
        /// Who a role move is for, and to what.
        public var target: String?
        public var role: String?
        /// When it was sent (monotonic ms).
        public var at: Int64
        /// When it was sent by the wall clock (ms since 1970), to compare with the time a `hand_raised` carries:
        /// a lagging node may deliver a raise well after it happened.
        public var wallAt: Int64?

        /// The bot command line.
        public var command: String {
            var members: [(String, JSONValue)] = [("cmd", .string(kind.rawValue)), ("id", .integer(Int64(id)))]
            if let text { members.append(("text", .string(text))) }
            if let target { members.append(("peer", .string(target))) }
            if let role { members.append(("role", .string(role))) }
            return JSONValue.object(JSONObject(members)).encodedString
        }
    }

    /// The error code a request gets when the cluster could not confirm its outcome: neither a refusal nor a
    /// success, so it is never counted as refused.
    public static let unconfirmedCode = "unconfirmed"

    public let operations: [Operation]
    /// Requests whose effect some client saw.
    public private(set) var applied = 0
    /// Requests answered with an error other than `unconfirmed`.
    public private(set) var refused = 0
    /// The refusals by error code.
    public private(set) var refusedByCode: [String: Int] = [:]
    /// Requests answered `unconfirmed`.
    public private(set) var unconfirmed = 0
    /// Refused requests whose effect appeared anyway, each said in words.
    public private(set) var refusedButApplied: [String] = []
    /// Effects a client saw twice, each said in words.
    public private(set) var duplicates: [String] = []

    struct Event {
        var at: Int64
        var bot: String
        var object: JSONObject
        var name: String
    }

    public init(operations: [Operation], bots: [BotRecord]) {
        self.operations = operations
        var events: [Event] = []
        for bot in bots {
            for line in bot.lines {
                guard case .object(let object)? = try? StrictJSONParser(maxBytes: 1 << 24).parse(line.text),
                    case .string(let name)? = object["event"]
                else { continue }
                events.append(Event(at: line.at, bot: bot.identity, object: object, name: name))
            }
        }
        // Answers: the error for each numbered request (the requester alone gets it).
        var errors: [Int: String] = [:]
        for event in events where event.name == "error" {
            guard case .integer(let id)? = event.object["id"], case .string(let code)? = event.object["code"] else {
                continue
            }
            errors[Int(id)] = code
        }
        // Texts that took effect: live events, and the snapshots of those who joined later.
        var textsSeen = Set<String>()
        var liveCounts: [String: [String: Int]] = [:]
        for event in events {
            switch event.name {
            case "chat":
                guard case .string(let text)? = event.object["text"] else { continue }
                textsSeen.insert(text)
                liveCounts[event.bot, default: [:]][text, default: 0] += 1
            case "topic_changed":
                guard case .string(let topic)? = event.object["topic"] else { continue }
                textsSeen.insert(topic)
                liveCounts[event.bot, default: [:]]["topic " + topic, default: 0] += 1
            case "joined", "reconnected":
                if case .string(let topic)? = event.object["topic"] { textsSeen.insert(topic) }
                guard case .array(let chat)? = event.object["chat"] else { continue }
                var inSnapshot: [String: Int] = [:]
                for case .object(let message) in chat {
                    guard case .string(let text)? = message["text"] else { continue }
                    textsSeen.insert(text)
                    inSnapshot[text, default: 0] += 1
                }
                for (text, count) in inSnapshot where count > 1 {
                    duplicates.append("\(text) \(count) times in the chat \(event.bot) joined with")
                }
            default: continue
            }
        }
        for (bot, counts) in liveCounts.sorted(by: { $0.key < $1.key }) {
            for (text, count) in counts.sorted(by: { $0.key < $1.key }) where count > 1 {
                duplicates.append("\(text) seen \(count) times by \(bot)")
            }
        }
        // Hands and role moves carry no number of their own: the effect is the request's when it comes after
        // the request and before the next request of the same kind for the same person.
        func nextOfKind(_ operation: Operation, _ index: Int) -> Operation? {
            let subject = operation.kind == .setRole ? operation.target : operation.bot
            let later = operations[(index + 1)...].first { other in
                switch operation.kind {
                case .setRole: other.kind == .setRole && other.target == subject
                case .raiseHand, .lowerHand:
                    (other.kind == .raiseHand || other.kind == .lowerHand) && other.bot == subject
                case .chat, .topic: false
                }
            }
            return later
        }
        func windowEnd(_ operation: Operation, _ index: Int) -> Int64 {
            nextOfKind(operation, index)?.at ?? .max
        }
        let stateEvents = events.filter { ["hand_raised", "hand_lowered", "role_changed"].contains($0.name) }
        func stateEffect(_ operation: Operation, _ index: Int) -> Bool {
            stateEffect(
                operation, before: windowEnd(operation, index),
                beforeWall: nextOfKind(operation, index)?.wallAt ?? .max)
        }
        func stateEffect(_ operation: Operation, before end: Int64, beforeWall: Int64 = .max) -> Bool {
            stateEvents.contains { event in
                guard event.at > operation.at, event.at < end else { return false }
                switch operation.kind {
                case .raiseHand:
                    guard event.name == "hand_raised", event.object["peer"] == .string(operation.bot) else {
                        return false
                    }
                    // The owner's time of the raise, when both are known: not before the request was sent.
                    guard let wall = operation.wallAt, case .integer(let raisedAt)? = event.object["at"] else {
                        return true
                    }
                    return raisedAt >= wall && raisedAt < beforeWall
                case .lowerHand:
                    // Lowered by the requester itself: a role move lowers a hand too, by whoever moved it.
                    return event.name == "hand_lowered" && event.object["peer"] == .string(operation.bot)
                        && event.object["by"] == .string(operation.bot)
                case .setRole:
                    return event.name == "role_changed" && event.object["peer"] == .string(operation.target ?? "")
                        && event.object["role"] == .string(operation.role ?? "")
                        && event.object["by"] == .string(operation.bot)
                case .chat, .topic:
                    return false
                }
            }
        }
        for (index, operation) in operations.enumerated() {
            let took: Bool
            switch operation.kind {
            case .chat, .topic: took = operation.text.map { textsSeen.contains($0) } ?? false
            case .raiseHand, .lowerHand, .setRole: took = stateEffect(operation, index)
            }
            if took { applied += 1 }
            guard let code = errors[operation.id] else { continue }
            if code == Self.unconfirmedCode {
                unconfirmed += 1
                continue
            }
            refused += 1
            refusedByCode[code, default: 0] += 1
            // The same request just before, not refused and not yet seen to take effect when this one was sent,
            // may be what took effect: then this one's refusal (say, "already raised") is no broken promise.
            let earlier = operations[..<index].last { other in
                other.kind == operation.kind && other.bot == operation.bot && other.target == operation.target
                    && other.role == operation.role
            }
            let inFlight =
                operation.kind != .chat && operation.kind != .topic
                && earlier.map {
                    errors[$0.id] == nil
                        && !stateEffect($0, before: operation.at, beforeWall: operation.wallAt ?? .max)
                } ?? false
            if took, !inFlight {
                let what =
                    operation.text
                    ?? [operation.kind.rawValue, operation.target, operation.role]
                    .compactMap { $0 }.joined(separator: " ")
                refusedButApplied.append("#\(operation.id) \(what) from \(operation.bot), refused '\(code)'")
            }
        }
    }

    /// The bots that are connected and in the room as they see it (their last session event is `joined` or
    /// `reconnected`), yet missing from another such bot's list of the room.
    public static func ghosts(_ bots: [BotRecord]) -> Set<String> {
        var views: [String: Set<String>] = [:]
        for bot in bots {
            var inRoom = false
            var peers = Set<String>()
            for line in bot.lines {
                guard case .object(let event)? = try? StrictJSONParser(maxBytes: 1 << 24).parse(line.text),
                    case .string(let name)? = event["event"]
                else { continue }
                switch name {
                case "joined", "reconnected":
                    inRoom = true
                    peers = []
                    if case .array(let listed)? = event["peers"] {
                        for case .object(let peer) in listed {
                            if case .string(let id)? = peer["id"] { peers.insert(id) }
                        }
                    }
                case "peer_joined":
                    if case .string(let id)? = event["peer"] { peers.insert(id) }
                case "peer_left":
                    if case .string(let id)? = event["peer"] { peers.remove(id) }
                case "reconnecting", "removed", "room_ended":
                    inRoom = false
                default: continue
                }
            }
            if inRoom { views[bot.identity] = peers }
        }
        return Set(views.keys.filter { bot in views.contains { $0.key != bot && !$0.value.contains(bot) } })
    }
}
