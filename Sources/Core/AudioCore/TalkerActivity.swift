/// One speaker as a listener's client hears them, from the RFC 6464 audio level and voice flag of each packet
/// received: how loud, whether they are talking, and since when.
public struct HeardTalker: Sendable, Equatable {
    /// The UI level (0–100) of the last packets, in steps of 5; 0 while not talking.
    public var level: Int
    /// When the current talk spurt began (the arrival of its first voiced packet), in milliseconds on the caller's
    /// monotonic clock; nil while not talking.
    public var talkingSince: Int64?

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
/// whenever someone starts or stops talking, at once, and level changes at most every `levelInterval` (or
/// never, without `reportsLevels`). Pure: time comes in as milliseconds.
public struct TalkerActivity<Key: Hashable & Sendable>: Sendable {
    /// The tuning of a ``TalkerActivity``.
    public struct Configuration: Sendable, Equatable, LevelWindowTuning {
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
        /// Whether a change of level alone makes a report. Without, reports come only when someone starts or
        /// stops talking (or appears or leaves), still with everyone's level: for a front end that draws no
        /// level bars, which then is not woken up to ten times a second while people talk.
        public var reportsLevels = true

        /// The default tuning.
        public init() {}
    }

    private struct Talker: Sendable {
        var powers: PowerWindow
        var lastSpeech: Int64?
        var since: Int64?

        /// Whether a talk spurt still lasts at `time`: its last speech packet is no older than the hold.
        func isHeld(at time: Int64, hold: Int64) -> Bool {
            guard let last = lastSpeech else { return false }
            return time.subtractingSaturating(last) <= hold
        }

        mutating func record(dBov: UInt8, voice: Bool, at time: Int64, configuration: Configuration) {
            powers.record(dBov: dBov)
            if voice && dBov < configuration.noiseFloor {
                if since == nil || !isHeld(at: time, hold: configuration.hold) { since = time }
                lastSpeech = time
            }
        }
    }

    /// The tuning in use.
    public let configuration: Configuration
    private var talkers: [Key: Talker] = [:]
    private var lastReport: [Key: HeardTalker] = [:]
    private var lastReportTime: Int64?

    /// An empty tracker.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration.clamped
    }

    /// Records one packet of `key`: its RFC 6464 level (-dBov) and voice flag, arrived at `time`.
    ///
    /// Changes the talker where it is kept: copied out of the table and back, its window of levels would be
    /// copied (an allocation) for every packet.
    @_specialize(exported:true,where Key == UInt32)
    public mutating func record(_ key: Key, dBov: UInt8, voice: Bool, at time: Int64) {
        // Every entry point is specialised for the key the media layer uses (an SSRC): called from another
        // module, the generic code would look up type metadata at run time for every packet and every tick.
        let configuration = configuration
        talkers[key, default: Talker(powers: PowerWindow(packets: configuration.window), lastSpeech: nil)]
            .record(dBov: dBov, voice: voice, at: time, configuration: configuration)
    }

    /// Forgets `key` (a speaker who left).
    @_specialize(exported:true,where Key == UInt32)
    public mutating func remove(_ key: Key) {
        talkers[key] = nil
    }

    /// Every speaker heard at `time`: talkers with their level and onset, the others at 0.
    @_specialize(exported:true,where Key == UInt32)
    public func talkers(at time: Int64) -> [Key: HeardTalker] {
        var result: [Key: HeardTalker] = [:]
        for (key, talker) in talkers { result[key] = heard(talker, at: time) }
        return result
    }

    /// The report to give at `time`, or nil when nothing changed: at once when someone started or stopped
    /// talking (or a speaker appeared or left), and for level changes alone at most every `levelInterval` (never
    /// without `reportsLevels`).
    ///
    /// Called every tick: while nothing changed it compares each talker with the last report where they are
    /// kept, building no table.
    @_specialize(exported:true,where Key == UInt32)
    public mutating func poll(at time: Int64) -> [Key: HeardTalker]? {
        guard changed(since: lastReport, at: time) else { return nil }
        let current = talkers(at: time)
        let onsetsChanged =
            current.count != lastReport.count
            || current.contains { key, talker in lastReport[key].map { $0.talkingSince != talker.talkingSince } ?? true
            }
        if !onsetsChanged, let last = lastReportTime,
            time.subtractingSaturating(last) < configuration.levelInterval
        {
            return nil
        }
        lastReport = current
        lastReportTime = time
        return current
    }

    /// Whether ``talkers(at:)`` at `time` would differ from `report`; without `reportsLevels`, whether anyone
    /// started or stopped talking since it (levels are then not even worked out).
    private func changed(since report: [Key: HeardTalker], at time: Int64) -> Bool {
        guard talkers.count == report.count else { return true }
        if configuration.reportsLevels {
            for (key, talker) in talkers where report[key] != heard(talker, at: time) { return true }
            return false
        }
        for (key, talker) in talkers {
            guard let last = report[key], last.talkingSince == onset(talker, at: time) else { return true }
        }
        return false
    }

    /// When `talker`'s talk spurt began, while it lasts at `time`; nil when they are not talking.
    private func onset(_ talker: Talker, at time: Int64) -> Int64? {
        talker.isHeld(at: time, hold: configuration.hold) ? talker.since : nil
    }

    /// How `talker` is heard at `time`: their level and onset while their spurt lasts, else at 0.
    private func heard(_ talker: Talker, at time: Int64) -> HeardTalker {
        guard let since = onset(talker, at: time) else { return HeardTalker(level: 0, talkingSince: nil) }
        let level = PowerWindow.steppedLevel(
            decibels: talker.powers.decibels(overRecordedOnly: true), step: configuration.levelStep)
        return HeardTalker(level: level, talkingSince: since)
    }
}
