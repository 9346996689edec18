/// Audio levels as RFC 6464 carries them, and as the UI shows them.
///
/// A frame's level is its RMS relative to the overload point (a full-scale square wave, ±32768), in -dBov from
/// 0 (loudest) to 127 (silence or quieter), rounded to the nearest decibel. The UI level maps the top 60 dB onto
/// 0–100 linearly: 0 dBov is 100, 60 dBov and below is 0.
public enum AudioLevel {
    /// The RFC 6464 value for silence (and for anything 127 dB or more below overload).
    public static let silence: UInt8 = 127
    /// The range of the UI scale in decibels: levels this far below overload show as 0.
    public static let uiRange = 60

    /// The level of `samples` in -dBov (0 loudest, 127 silence).
    public static func dBov(_ samples: UnsafeBufferPointer<Int16>) -> UInt8 {
        guard !samples.isEmpty else { return silence }
        var sumOfSquares: Int64 = 0
        for sample in samples {
            let value = Int64(sample)
            sumOfSquares += value * value
        }
        return dBov(meanSquare: Double(sumOfSquares) / Double(samples.count) / (32_768.0 * 32_768.0))
    }

    /// The level of `samples` in -dBov (0 loudest, 127 silence).
    public static func dBov(_ samples: borrowing [Int16]) -> UInt8 {
        samples.withUnsafeBufferPointer { dBov($0) }
    }

    /// The level in -dBov of a mean square relative to full scale (1.0 is a full-scale square wave).
    public static func dBov(meanSquare: Double) -> UInt8 {
        guard meanSquare > 0, meanSquare.isFinite else { return meanSquare.isInfinite ? 0 : silence }
        let decibels = -10 * AudioMath.log10(meanSquare)
        return UInt8(min(127, max(0, decibels.rounded())))
    }

    /// The mean square (relative to full scale) that a -dBov value stands for; 0 for silence.
    public static func meanSquare(dBov: UInt8) -> Double {
        dBov >= silence ? 0 : AudioMath.pow10(-Double(dBov) / 10)
    }

    /// The 0–100 UI level of a -dBov value.
    public static func uiLevel(dBov: UInt8) -> Int {
        uiLevel(decibels: Double(dBov))
    }

    /// The 0–100 UI level of a level `decibels` below overload (fractional values allowed).
    public static func uiLevel(decibels: Double) -> Int {
        guard decibels.isFinite else { return 0 }
        let level = (Double(uiRange) - decibels) * 100 / Double(uiRange)
        return Int(min(100, max(0, level.rounded())))
    }
}

/// Meter ballistics for a UI level bar: rises at once, holds its peak, then falls at a steady rate, so the bar
/// never flickers. Pure: time comes in as milliseconds on any monotonic clock.
public struct LevelBallistics: Sendable, Equatable {
    /// How long a peak stays before falling, in milliseconds.
    public var holdMilliseconds: Int64
    /// How fast the bar falls after the hold, in decibels per second.
    public var fallDecibelsPerSecond: Double

    private var peak = Double(AudioLevel.silence)
    private var peakTime: Int64?

    /// Ballistics with a hold and a fall rate (300 ms and 20 dB/s by default).
    public init(holdMilliseconds: Int64 = 300, fallDecibelsPerSecond: Double = 20) {
        self.holdMilliseconds = max(0, holdMilliseconds)
        self.fallDecibelsPerSecond = max(0, fallDecibelsPerSecond)
    }

    /// Takes a new measurement in -dBov at `time` and returns the level to show, in decibels below overload.
    @discardableResult
    public mutating func update(dBov: UInt8, at time: Int64) -> Double {
        let shown = decibels(at: time)
        let input = Double(dBov)
        if input <= shown {
            peak = input
            peakTime = time
            return input
        }
        return shown
    }

    /// The level to show at `time` without a new measurement, in decibels below overload (0 loudest, 127 silent).
    public func decibels(at time: Int64) -> Double {
        guard let peakTime else { return peak }
        let falling = Double(time) - Double(peakTime) - Double(holdMilliseconds)
        guard falling > 0 else { return peak }
        return min(Double(AudioLevel.silence), peak + fallDecibelsPerSecond * falling / 1000)
    }

    /// The 0–100 UI level to show at `time`.
    public func uiLevel(at time: Int64) -> Int {
        AudioLevel.uiLevel(decibels: decibels(at: time))
    }
}

/// The power of one speaker's last few packets, from their RFC 6464 levels: the average a level meter shows.
struct PowerWindow: Sendable {
    private var powers: [Double]
    private var next = 0
    /// Packets recorded so far, at most the window's length.
    private(set) var filled = 0

    /// An empty window of `packets` packets (at least one).
    init(packets: Int) {
        powers = Array(repeating: 0, count: max(1, packets))
    }

    /// Records one packet's level, in place of the oldest once the window is full.
    mutating func record(dBov: UInt8) {
        powers[next] = AudioLevel.meanSquare(dBov: dBov)
        next = (next + 1) % powers.count
        filled = min(filled + 1, powers.count)
    }

    /// The power average in -dBov: over the whole window, where packets not yet recorded count as silence, or
    /// over just the packets recorded so far.
    func decibels(overRecordedOnly: Bool) -> Double {
        let count = overRecordedOnly ? max(1, filled) : powers.count
        let average = powers.reduce(0, +) / Double(count)
        return average > 0 ? -10 * AudioMath.log10(average) : Double(AudioLevel.silence)
    }

    /// The UI level (0–100) of `decibels` rounded to a multiple of `step`, and at least `step`: a talker's level.
    static func steppedLevel(decibels: Double, step: Int) -> Int {
        max(step, min(100, (AudioLevel.uiLevel(decibels: decibels) + step / 2) / step * step))
    }
}

/// The tuning shared by the trackers of speaking levels: how many packets a level averages over and the step levels
/// are rounded to, both at least 1 once ``clamped``.
protocol LevelWindowTuning {
    var window: Int { get set }
    var levelStep: Int { get set }
}

extension LevelWindowTuning {
    /// This tuning with a window and a level step of at least 1.
    var clamped: Self {
        var tuning = self
        tuning.window = max(1, window)
        tuning.levelStep = max(1, levelStep)
        return tuning
    }
}

/// The server's view of who is speaking, from the RFC 6464 levels in each speaker's packets.
///
/// Each speaker's level is the power average of its last few packets; a speaker is active while that average is
/// louder than a noise floor and packets keep coming. ``poll(at:)`` reports active speakers with UI levels 0–100,
/// quantized to steps so small wobbles are not news, at most once per interval and only when something changed.
/// Pure: time comes in as milliseconds.
public struct SpeakerActivity<Key: Hashable & Sendable>: Sendable {
    /// The tuning of a ``SpeakerActivity``.
    public struct Configuration: Sendable, Equatable, LevelWindowTuning {
        /// Packets averaged per speaker (five packets are 100 ms).
        public var window = 5
        /// Speakers averaging quieter than this many -dBov are not active.
        public var noiseFloor: UInt8 = 50
        /// A speaker whose last packet is older than this (ms) is silent (DTX sends nothing in silence).
        public var silenceTimeout: Int64 = 300
        /// The shortest time between two reports, in milliseconds.
        public var emitInterval: Int64 = 250
        /// Levels are rounded to multiples of this (and active speakers show at least this much).
        public var levelStep = 5

        /// The default tuning.
        public init() {}
    }

    private struct Speaker: Sendable {
        var powers: PowerWindow
        var lastPacket: Int64
    }

    /// The tuning in use.
    public let configuration: Configuration
    private var speakers: [Key: Speaker] = [:]
    private var lastReport: [Key: Int] = [:]
    private var lastReportTime: Int64?

    /// An empty tracker.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration.clamped
    }

    /// Records one packet's RFC 6464 level from `key` at `time`.
    public mutating func record(_ key: Key, dBov: UInt8, at time: Int64) {
        var speaker = speakers[key] ?? Speaker(powers: PowerWindow(packets: configuration.window), lastPacket: time)
        speaker.powers.record(dBov: dBov)
        speaker.lastPacket = time
        speakers[key] = speaker
    }

    /// Forgets `key`, for a speaker who left or may no longer publish.
    public mutating func remove(_ key: Key) {
        speakers[key] = nil
    }

    /// The active speakers and their UI levels at `time`.
    public func levels(at time: Int64) -> [Key: Int] {
        var result: [Key: Int] = [:]
        for (key, speaker) in speakers
        where time.subtractingSaturating(speaker.lastPacket) <= configuration.silenceTimeout {
            let decibels = speaker.powers.decibels(overRecordedOnly: false)
            guard decibels < Double(configuration.noiseFloor) else { continue }
            result[key] = PowerWindow.steppedLevel(decibels: decibels, step: configuration.levelStep)
        }
        return result
    }

    /// The report to send at `time`, or nil when nothing changed or the last report was too recent.
    public mutating func poll(at time: Int64) -> [Key: Int]? {
        if let last = lastReportTime, time.subtractingSaturating(last) < configuration.emitInterval { return nil }
        let current = levels(at: time)
        guard current != lastReport else { return nil }
        lastReport = current
        lastReportTime = time
        return current
    }
}
