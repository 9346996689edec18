import AudioCore
import Platform

/// Whether a virtual device keeps the pace of real hardware.
public enum Pacing: Sendable, Equatable {
    /// One period per period of the monotonic clock, like a sound card: for bots, demos and latency benchmarks.
    case realTime
    /// As fast as the caller asks: for tests that push a lot of audio through quickly.
    case unpaced
    /// Paced by another device on the same audio thread (the microphone of an `AudioDuplex` sets the pace for
    /// its loudspeaker): as fast as it is called, yet fit for a real-time thread, since something else waits.
    case driven

    /// Whether a thread serving a device of this pacing may run at real-time priority: not when it would spin.
    var suitsRealTimePriority: Bool { self != .unpaced }
}

/// What paces a virtual device: with `Pacing.realTime`, each period waits for its deadline on a `PeriodClock`
/// whose period is the length of the buffer asked for (480 samples: 10 ms), so a stream with longer periods is
/// paced at its own periods. Does not allocate.
struct Pacer {
    let pacing: Pacing
    private var clock = PeriodClock()

    init(_ pacing: Pacing) {
        self.pacing = pacing
    }

    /// Waits for the deadline of a period of `samples` samples (at once when unpaced).
    mutating func wait(samples: Int) {
        guard pacing == .realTime else { return }
        let period = AudioFormat.nanoseconds(samples: Int64(samples))
        if period != clock.periodNanoseconds { clock = PeriodClock(periodNanoseconds: period) }
        clock.wait()
    }
}
