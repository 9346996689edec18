/// One speaker as a listener's client hears them, from the RFC 6464 audio level and voice flag of each packet
/// received: how loud, whether they are talking, and since when.
public struct HeardTalker: Sendable, Equatable {
    /// The UI level (0–100) of the last packets, in steps of 5; 0 while not talking.
    public var level: Int
    /// When the current talk spurt began (the arrival of its first voiced packet), in milliseconds on the caller's
    /// monotonic clock; nil while not talking.
    public var talkingSince: Int64?

    /// A talker at `level`, talking since `talkingSince` (nil: not talking).
    public init(level: Int, talkingSince: Int64?) {
        self.level = level
        self.talkingSince = talkingSince
    }

    /// Whether they are talking now.
    public var isTalking: Bool { talkingSince != nil }
}

/// Who is talking among the speakers a client hears, from each packet's RFC 6464 level and voice flag, for the
/// screen to highlight everyone talking at once within a packet of their onset.
///
/// A packet is speech when its sender flagged voice and its level is louder than the noise floor. The first
/// speech packet after silence starts a talk spurt at its arrival time; the spurt lasts through pauses shorter
/// than the hold (a breath, the gap between words), so a steady voice is never reported as stopping and
/// starting. Levels are the power average of the last few packets (of those there are, at first), in UI steps. ``poll(at:)`` reports every talker
/// whenever someone starts or stops talking, at once, and level changes at most every `levelInterval`. Pure:
/// time comes in as milliseconds.
public struct TalkerActivity<Key: Hashable & Sendable>: Sendable {
    /// The tuning of a ``TalkerActivity``.
    public struct Configuration: Sendable, Equatable {
        /// Packets a speaker's level averages over (three packets are 60 ms).
        public var window = 3
        /// Packets quieter than this many -dBov are not speech, whatever their voice flag says.
        public var noiseFloor: UInt8 = 50
        /// How long a talk spurt lasts after its last speech packet, in milliseconds.
        public var hold: Int64 = 500
        /// The shortest time between two reports that only change levels, in milliseconds.
        public var levelInterval: Int64 = 100
        /// Levels are rounded to multiples of this (a talker shows at least this much).
        public var levelStep = 5

        /// The default tuning.
        public init() {}
    }

    private struct Talker: Sendable {
        var powers: PowerWindow
        var lastSpeech: Int64?
        var since: Int64?
    }

    /// The tuning in use.
    public let configuration: Configuration
    private var talkers: [Key: Talker] = [:]
    private var lastReport: [Key: HeardTalker] = [:]
    private var lastReportTime: Int64?

    /// An empty tracker.
    public init(configuration: Configuration = Configuration()) {
        var configuration = configuration
        configuration.window = max(1, configuration.window)
        configuration.levelStep = max(1, configuration.levelStep)
        self.configuration = configuration
    }

    /// Records one packet of `key`: its RFC 6464 level (-dBov) and voice flag, arrived at `time`.
    public mutating func record(_ key: Key, dBov: UInt8, voice: Bool, at time: Int64) {
        var talker = talkers[key] ?? Talker(powers: PowerWindow(packets: configuration.window), lastSpeech: nil)
        talker.powers.record(dBov: dBov)
        if voice && dBov < configuration.noiseFloor {
            if talker.since == nil || !isHeld(talker, at: time) { talker.since = time }
            talker.lastSpeech = time
        }
        talkers[key] = talker
    }

    /// Forgets `key` (a speaker who left).
    public mutating func remove(_ key: Key) {
        talkers[key] = nil
    }

    /// Every speaker heard at `time`: talkers with their level and onset, the others at 0.
    public func talkers(at time: Int64) -> [Key: HeardTalker] {
        var result: [Key: HeardTalker] = [:]
        for (key, talker) in talkers {
            guard let since = talker.since, isHeld(talker, at: time) else {
                result[key] = HeardTalker(level: 0, talkingSince: nil)
                continue
            }
            let level = PowerWindow.steppedLevel(
                decibels: talker.powers.decibels(overRecordedOnly: true), step: configuration.levelStep)
            result[key] = HeardTalker(level: level, talkingSince: since)
        }
        return result
    }

    /// The report to give at `time`, or nil when nothing changed: at once when someone started or stopped
    /// talking (or a speaker appeared or left), and for level changes alone at most every `levelInterval`.
    public mutating func poll(at time: Int64) -> [Key: HeardTalker]? {
        let current = talkers(at: time)
        guard current != lastReport else { return nil }
        let onsetsChanged =
            current.count != lastReport.count
            || current.contains { key, talker in lastReport[key]?.talkingSince != talker.talkingSince }
        if !onsetsChanged, let last = lastReportTime,
            time.subtractingSaturating(last) < configuration.levelInterval
        {
            return nil
        }
        lastReport = current
        lastReportTime = time
        return current
    }

    private func isHeld(_ talker: Talker, at time: Int64) -> Bool {
        guard let last = talker.lastSpeech else { return false }
        return time.subtractingSaturating(last) <= configuration.hold
    }
}
