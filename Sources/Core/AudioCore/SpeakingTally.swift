/// How much each person has spoken: total speaking time and number of turns, and whether they are talking now.
///
/// Fed with talk spurts: ``start(_:at:)`` when someone starts talking and ``stop(_:at:)`` when they stop (both
/// idempotent), or ``update(talking:at:)`` with who is talking at a moment, from a report of levels. A turn is
/// one talk spurt; a pause no longer than the `hold` between the end of one spurt and the start of the next is
/// part of the same turn and counts as speaking, so a speaker's breath between words is not two turns. Time
/// counted ends at the last stop, never at the stop plus the hold. Keys are whatever names a person across their
/// connections (an identity), so a person who comes back continues their tally: call ``stop(_:at:)`` when they
/// leave. Spurts that come already held (``TalkerActivity``'s) need no hold here. Pure: time comes in as
/// milliseconds on any monotonic clock; times going backwards count as no time.
public struct SpeakingTally<Key: Hashable & Sendable>: Sendable {
    /// One person's tally at a moment.
    public struct Entry: Sendable, Equatable {
        /// Speaking time so far in milliseconds, the current turn up to the moment asked included.
        public var milliseconds: Int64
        /// Turns taken so far, the current one included.
        public var turns: Int
        /// When the current turn began, while they are talking; nil when they are not.
        public var talkingSince: Int64?

        /// Whether they are talking now.
        public var isTalking: Bool { talkingSince != nil }

        /// Speaking time so far in seconds.
        public var seconds: Double { Double(milliseconds) / 1000 }
    }

    /// One person's tally as it stands inside, to carry a tally elsewhere (a copy of a room on another machine)
    /// and back: ``init(hold:records:)`` makes a tally that goes on exactly as the one ``records`` came from.
    public struct Record: Sendable, Equatable {
        /// Time of the turns that are over, and of the current turn up to its last stop.
        public var closed: Int64 = 0
        public var turns = 0
        /// When the current turn began; nil before the first.
        public var turnStart: Int64?
        /// When the current spurt began, while talking.
        public var spurtStart: Int64?
        /// When the last spurt stopped, while not talking.
        public var lastStop: Int64?

        /// A record of `closed` milliseconds in `turns` turns, with the moments of the current turn.
        public init(
            closed: Int64 = 0, turns: Int = 0, turnStart: Int64? = nil, spurtStart: Int64? = nil,
            lastStop: Int64? = nil
        ) {
            self.closed = closed
            self.turns = turns
            self.turnStart = turnStart
            self.spurtStart = spurtStart
            self.lastStop = lastStop
        }
    }

    private typealias Person = Record

    /// How long a pause may last and still belong to the turn it interrupts, in milliseconds (0: every spurt is a
    /// turn of its own).
    public let hold: Int64
    private var people: [Key: Person] = [:]

    /// An empty tally whose turns last through pauses up to `hold` milliseconds (none by default).
    public init(hold: Int64 = 0) {
        self.hold = max(0, hold)
    }

    /// A tally that goes on from `records` (another tally's ``records``).
    public init(hold: Int64 = 0, records: [Key: Record]) {
        self.hold = max(0, hold)
        people = records
    }

    /// Each person's tally as it stands inside.
    public var records: [Key: Record] { people }

    /// `key` starts talking at `time`: a new turn, or the turn they paused within the hold. Nothing when they
    /// are talking already.
    public mutating func start(_ key: Key, at time: Int64) {
        var person = people[key] ?? Person()
        guard person.spurtStart == nil else { return }
        if let stop = person.lastStop, person.turnStart != nil, time.subtractingSaturating(stop) <= hold {
            // The pause belongs to the turn: counted as speaking, from the last stop on.
            person.spurtStart = stop
        } else {
            person.turns += 1
            person.turnStart = time
            person.spurtStart = time
        }
        person.lastStop = nil
        people[key] = person
    }

    /// `key` stops talking at `time`: the spurt's time is added to their total. Nothing when they are not
    /// talking.
    public mutating func stop(_ key: Key, at time: Int64) {
        guard var person = people[key], let spurtStart = person.spurtStart else { return }
        person.closed += max(0, time.subtractingSaturating(spurtStart))
        person.spurtStart = nil
        person.lastStop = max(time, spurtStart)
        people[key] = person
    }

    /// Who is talking at `time`, from a report: everyone in `talking` starts (or goes on) talking, everyone
    /// else who was talking stops.
    public mutating func update(talking: Set<Key>, at time: Int64) {
        for (key, person) in people where person.spurtStart != nil && !talking.contains(key) {
            stop(key, at: time)
        }
        for key in talking { start(key, at: time) }
    }

    /// Stops everyone talking at `time` (the room ends, or the source of reports went away).
    public mutating func stopAll(at time: Int64) {
        for (key, person) in people where person.spurtStart != nil { stop(key, at: time) }
    }

    /// `key`'s tally at `time`; nil for someone who never spoke.
    public func entry(for key: Key, at time: Int64) -> Entry? {
        guard let person = people[key] else { return nil }
        return entry(person, at: time)
    }

    /// Everyone who has spoken, with their tally at `time`.
    public func entries(at time: Int64) -> [Key: Entry] {
        people.mapValues { entry($0, at: time) }
    }

    private func entry(_ person: Person, at time: Int64) -> Entry {
        var milliseconds = person.closed
        var since: Int64?
        if let spurtStart = person.spurtStart {
            milliseconds += max(0, time.subtractingSaturating(spurtStart))
            since = person.turnStart
        }
        return Entry(milliseconds: milliseconds, turns: person.turns, talkingSince: since)
    }
}

extension SpeakingTally where Key: Comparable {
    /// Everyone who has spoken with their tally at `time`, most speaking time first (then by key, so the order
    /// is stable).
    public func ranked(at time: Int64) -> [(key: Key, entry: Entry)] {
        entries(at: time).map { (key: $0.key, entry: $0.value) }
            .sorted {
                $0.entry.milliseconds != $1.entry.milliseconds
                    ? $0.entry.milliseconds > $1.entry.milliseconds : $0.key < $1.key
            }
    }
}
