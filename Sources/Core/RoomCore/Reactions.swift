/// One of the few reactions anyone in a room may send: shown briefly beside the sender's name, counted rather than
/// listed when many people send them. Reactions are ephemeral: never saved, never in a checkpoint.
public enum Reaction: String, Sendable, Hashable, CaseIterable {
    case clap
    case thumbsUp = "thumbs_up"
    case laugh
    case heart
    case wave

    /// The reaction's emoji, which is also its spelling on the wire (`{"cmd":"react","emoji":"👏"}`).
    public var emoji: String {
        switch self {
        case .clap: "👏"
        case .thumbsUp: "👍"
        case .laugh: "😂"
        case .heart: "❤️"
        case .wave: "✋"
        }
    }

    /// What a terminal without emoji shows (`--ascii`, `LANG=C`).
    public var ascii: String {
        switch self {
        case .clap: "[clap]"
        case .thumbsUp: "+1"
        case .laugh: "haha"
        case .heart: "<3"
        case .wave: "o/"
        }
    }

    /// The word `/react NAME` takes.
    public var word: String {
        switch self {
        case .clap: "clap"
        case .thumbsUp: "up"
        case .laugh: "haha"
        case .heart: "heart"
        case .wave: "wave"
        }
    }

    /// The verb of the sentence `--plain` says: "3 people clapped."
    public var verb: String {
        switch self {
        case .clap: "clapped"
        case .thumbsUp: "gave a thumbs up"
        case .laugh: "laughed"
        case .heart: "sent a heart"
        case .wave: "waved"
        }
    }

    /// Other words people type for the same reaction.
    private var synonyms: [String] {
        switch self {
        case .clap: ["applause", "applaud", "clapping"]
        case .thumbsUp: ["thumbsup", "thumbs_up", "thumbs-up", "like", "yes"]
        case .laugh: ["laugh", "lol", "ha"]
        case .heart: ["love", "❤"]
        case .wave: ["hand", "hi", "hello"]
        }
    }

    /// The reaction `text` names: its emoji (with or without the emoji variation selector), its ASCII fallback, its
    /// word, its raw value or a common synonym, in any case; nil for anything else.
    public init?(parsing text: String) {
        let trimmed = text.trimmedOfWhitespace
        let lowered = trimmed.lowercased()
        guard !lowered.isEmpty else { return nil }
        for reaction in Reaction.allCases {
            let spellings = [reaction.emoji, reaction.ascii, reaction.word, reaction.rawValue] + reaction.synonyms
            if spellings.contains(lowered) || spellings.contains(trimmed) {
                self = reaction
                return
            }
        }
        return nil
    }

    /// How the reaction is drawn: its emoji, or its ASCII fallback when `ascii` is set.
    public func symbol(ascii: Bool) -> String { ascii ? self.ascii : emoji }
}

extension String {
    fileprivate var trimmedOfWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}

/// What the server sends for the reactions of a short span (`reaction` event): how many people sent each
/// reaction, and the first few of them by name, so a big room's applause is one message rather than a flood.
public struct ReactionBurst: Sendable, Equatable {
    /// One reaction and how many people sent it in the span.
    public struct Count: Sendable, Equatable {
        public var reaction: Reaction
        public var count: Int

        public init(_ reaction: Reaction, _ count: Int) {
            self.reaction = reaction
            self.count = count
        }
    }

    /// One sender and the reaction they sent last in the span (the mark shown beside their name).
    public struct Sender: Sendable, Equatable {
        public var peer: PeerID
        public var reaction: Reaction

        public init(_ peer: PeerID, _ reaction: Reaction) {
            self.peer = peer
            self.reaction = reaction
        }
    }

    /// Per reaction, in `Reaction.allCases` order, only those sent.
    public var counts: [Count]
    /// The first `ReactionGate.namedSenders` people, in the order they reacted.
    public var senders: [Sender]

    public init(counts: [Count], senders: [Sender]) {
        self.counts = counts
        self.senders = senders
    }

    /// How many people the span counts in all (a person who sent two reactions counts once per reaction).
    public var total: Int { counts.reduce(0) { $0 + $1.count } }

    /// What `--plain` says of the burst: one sentence per reaction, naming people when the burst names all of
    /// them ("Ana clapped.", "Ana and Bo clapped."), counting them otherwise ("3 people clapped.").
    public func sentences(name: (PeerID) -> String) -> [String] {
        counts.map { count in
            let named = senders.filter { $0.reaction == count.reaction }.map { name($0.peer) }
            let who: String
            if named.count == count.count && count.count == 1 {
                who = named[0]
            } else if named.count == count.count && count.count == 2 {
                who = "\(named[0]) and \(named[1])"
            } else {
                who = count.count == 1 ? "1 person" : "\(count.count) people"
            }
            return "\(who) \(count.reaction.verb)."
        }
    }
}

/// Why the server refused a reaction.
public enum ReactionRefusal: Error, Sendable, Equatable {
    /// The person sent `ReactionGate.perPersonLimit` reactions within `ReactionGate.perPersonWindow` already.
    case tooFast

    /// The sentence the sender reads.
    public var message: String {
        switch self {
        case .tooFast: "You are sending reactions too fast; wait a few seconds and try again."
        }
    }
}

/// The server's side of reactions in one room, pure (time comes in): it checks each person's rate, gathers what
/// is allowed, and gives out at most one `ReactionBurst` per `interval`.
public struct ReactionGate: Sendable, Equatable {
    /// The shortest time between two bursts of one room, in milliseconds.
    public static let interval: Timestamp = 1_000
    /// The most reactions one person may send within `perPersonWindow`.
    public static let perPersonLimit = 5
    /// The span, in milliseconds, over which `perPersonLimit` applies.
    public static let perPersonWindow: Timestamp = 10_000
    /// How many senders a burst names; the rest are counted only.
    public static let namedSenders = 5

    /// When each person's recent reactions were accepted, oldest first (at most `perPersonLimit` of them).
    private var recent: [PeerID: [Timestamp]] = [:]
    /// The people of the pending burst, per reaction, in the order they reacted.
    private var pending: [Reaction: [PeerID]] = [:]
    /// The pending senders in order, for the names of the burst.
    private var pendingSenders: [ReactionBurst.Sender] = []
    /// When the last burst went out.
    private var lastBurst: Timestamp?

    public init() {}

    /// Checks `peer`'s rate and, when allowed, adds the reaction to the pending burst; returns why it was refused,
    /// or nil when it was accepted.
    public mutating func offer(_ reaction: Reaction, from peer: PeerID, at now: Timestamp) -> ReactionRefusal? {
        let kept = (recent[peer] ?? []).filter { now - $0 < Self.perPersonWindow }
        guard kept.count < Self.perPersonLimit else {
            recent[peer] = kept
            return .tooFast
        }
        recent[peer] = kept + [now]
        var people = pending[reaction] ?? []
        if !people.contains(peer) { people.append(peer) }
        pending[reaction] = people
        if let index = pendingSenders.firstIndex(where: { $0.peer == peer }) {
            pendingSenders[index].reaction = reaction
        } else {
            pendingSenders.append(.init(peer, reaction))
        }
        return nil
    }

    /// The pending burst when one is due at `now` (something is pending and `interval` has passed since the last
    /// one); nil otherwise. Also forgets rates older than the window.
    public mutating func burst(at now: Timestamp) -> ReactionBurst? {
        recent = recent.filter { _, times in times.contains { now - $0 < Self.perPersonWindow } }
        guard !pending.isEmpty else { return nil }
        if let lastBurst, now - lastBurst < Self.interval { return nil }
        let counts = Reaction.allCases.compactMap { reaction in
            pending[reaction].map { ReactionBurst.Count(reaction, $0.count) }
        }
        let burst = ReactionBurst(counts: counts, senders: Array(pendingSenders.prefix(Self.namedSenders)))
        pending = [:]
        pendingSenders = []
        lastBurst = now
        return burst
    }

    /// When the pending burst may go out, or nil when nothing is pending.
    public var nextBurstAt: Timestamp? {
        guard !pending.isEmpty else { return nil }
        return lastBurst.map { $0 + Self.interval } ?? 0
    }

    /// Forgets a person who left (their pending reaction still counts).
    public mutating func forget(_ peer: PeerID) { recent[peer] = nil }
}

/// The reactions a client shows beside names: each named sender's last reaction, until it expires.
public struct ShownReactions: Sendable, Equatable {
    /// How long a mark stays beside a name, in milliseconds.
    public static let lifetime: Timestamp = 4_000

    private var marks: [PeerID: (reaction: Reaction, until: Timestamp)] = [:]

    public init() {}

    public static func == (lhs: ShownReactions, rhs: ShownReactions) -> Bool {
        lhs.marks.count == rhs.marks.count
            && lhs.marks.allSatisfy { key, value in
                rhs.marks[key].map { $0.reaction == value.reaction && $0.until == value.until } ?? false
            }
    }

    /// Shows the burst's named senders' reactions from `now`.
    public mutating func show(_ burst: ReactionBurst, at now: Timestamp) {
        for sender in burst.senders { marks[sender.peer] = (sender.reaction, now + Self.lifetime) }
    }

    /// The mark beside `peer` at `now`, if any.
    public func mark(for peer: PeerID, at now: Timestamp) -> Reaction? {
        guard let mark = marks[peer], now < mark.until else { return nil }
        return mark.reaction
    }

    /// Drops the marks that expired by `now`; returns whether any did (the screen then redraws).
    @discardableResult
    public mutating func expire(at now: Timestamp) -> Bool {
        let before = marks.count
        marks = marks.filter { now < $0.value.until }
        return marks.count != before
    }

    /// When the next mark expires, or nil with none shown (the runtime's timer).
    public var nextExpiry: Timestamp? { marks.values.map(\.until).min() }

    /// Whether no mark is shown.
    public var isEmpty: Bool { marks.isEmpty }
}
