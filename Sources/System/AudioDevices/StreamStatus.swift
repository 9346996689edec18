import AudioCore
import Foundation
import Platform

/// What happened to a stream's device, in words a person can read (`message`). Delivered by `poll`, on the
/// thread that calls it, never on the audio thread.
public enum DeviceStatus: Sendable, Equatable {
    /// The device could not be opened when the stream started; it runs on the silent `fallback` instead and
    /// does not try again.
    case unavailable(DeviceDirection, device: String, error: AudioDeviceError, fallback: String)
    /// The device stopped working; the stream keeps time on silence and reopens it with backoff.
    case lost(DeviceDirection, device: String, error: AudioDeviceError)
    /// Reopening failed; the next try is after `retryIn`.
    case reopenFailed(DeviceDirection, device: String, error: AudioDeviceError, retryIn: Duration)
    /// The device works again.
    case reopened(DeviceDirection, device: String)
    /// The device ran out of audio (playback) or overflowed (capture) `count` more times: sound had gaps. Said by
    /// whoever watches the stream's statistics (the client's control thread, at most every 10 s).
    case xruns(DeviceDirection, device: String, count: Int)

    /// One sentence for the status line.
    public var message: String {
        switch self {
        case .unavailable(let direction, _, let error, let fallback):
            let option = direction == .capture ? "--input" : "--output"
            let what = direction == .capture ? "microphone" : "speaker"
            // The advice comes before the details, so that a notice cut to the screen's width keeps it.
            return "No \(what) (\(error.briefDescription)); using “\(fallback)”. Choose one with \(option) NAME "
                + "(see clubroom devices). Details: \(error)."
        case .lost(let direction, let device, let error):
            return "\(Self.noun(direction)) “\(device)” stopped working (\(error)); trying to reopen it."
        case .reopenFailed(let direction, let device, _, let retryIn):
            let seconds = retryIn.inSeconds
            return "\(Self.noun(direction)) “\(device)” is still unavailable; trying again in "
                + "\(seconds.formatted(.number.precision(.fractionLength(0...1)))) s."
        case .reopened(let direction, let device):
            return "\(Self.noun(direction)) “\(device)” is back."
        case .xruns(let direction, let device, let count):
            let times = count == 1 ? "once" : "\(count) times"
            let effect = direction == .capture ? "some of your voice was lost" : "what you hear had gaps"
            return "\(Self.noun(direction)) “\(device)” could not keep up \(times) (\(effect)); the machine may be too "
                + "busy."
        }
    }

    private static func noun(_ direction: DeviceDirection) -> String {
        direction == .capture ? "Microphone" : "Speaker"
    }
}

/// How long a stream waits between attempts to reopen a lost device: `initial`, doubling up to `maximum`.
public struct ReopenBackoff: Sendable, Equatable {
    /// Wait before the first attempt.
    public var initial: Duration
    /// The longest wait between attempts.
    public var maximum: Duration

    /// Creates a backoff; the defaults retry quickly at first and settle at one try every 8 s.
    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(8)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after `failures` failed attempts.
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initial
        for _ in 0..<min(failures, 32) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}

/// Counts of what a stream has done, read at any time without disturbing the audio thread.
public struct StreamStatistics: Sendable, Equatable {
    /// Periods moved between the device and the ring.
    public var periods = 0
    /// Overruns (capture) or underruns (playback) the device had and recovered from.
    public var xruns = 0
    /// Capture periods that did not fit in the sink (the reader is behind); their samples were dropped.
    public var droppedPeriods = 0
    /// Playback periods the source could not fill; the gap was played as silence.
    public var starvedPeriods = 0
    /// Times the device stopped working.
    public var deviceLosses = 0
    /// Attempts to reopen a lost device.
    public var reopenAttempts = 0
}

/// Options for the thread behind a stream.
public struct StreamOptions: Sendable {
    /// Ask for real-time scheduling (`SCHED_FIFO`) for the audio thread; where that is not allowed the thread
    /// runs at normal priority. It is used only while the device suits it (`suitsRealTimePriority`): ALSA
    /// hardware and paced virtual devices do; unpaced virtual devices, which would starve the machine, and a
    /// sound server's plugins (`pulse`, `pipewire`, `jack`), whose server keeps the pace, do not.
    public var realTimePriority: Bool
    /// How lost devices are retried.
    public var backoff: ReopenBackoff
    /// Called once on the audio thread just before its first period, for instrumentation (naming the thread
    /// for a profiler, counting allocations in tests). Must not block.
    public var onAudioThreadStart: (@Sendable () -> Void)?
    /// Samples moved per period: how often the audio thread wakes. 480 (10 ms) by default; open an ALSA device
    /// with the same period (`ALSAOptions.periodMilliseconds`) so that each transfer is one wake-up.
    public var periodSamples: Int

    /// Creates options; every parameter has the default for a session.
    public init(
        realTimePriority: Bool = true, backoff: ReopenBackoff = ReopenBackoff(),
        onAudioThreadStart: (@Sendable () -> Void)? = nil, periodSamples: Int = AudioFormat.samplesPerPeriod
    ) {
        self.realTimePriority = realTimePriority
        self.backoff = backoff
        self.onAudioThreadStart = onAudioThreadStart
        self.periodSamples = max(1, periodSamples)
    }
}
