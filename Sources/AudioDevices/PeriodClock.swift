import Glibc

/// Whether a virtual device keeps the pace of real hardware.
public enum Pacing: Sendable, Equatable {
    /// One period every 10 ms of the monotonic clock, like a sound card: for bots, demos and latency benchmarks.
    case realTime
    /// As fast as the caller asks: for tests that push a lot of audio through quickly.
    case unpaced
}

/// Wakes a thread once per period on the monotonic clock, at absolute deadlines (start + n × period), so
/// that sleeping late once does not push every later period back: the pace does not drift.
///
/// Does not allocate; safe on an audio thread.
struct PeriodClock {
    let periodNanoseconds: Int64
    /// The monotonic time, in nanoseconds, of the next period; 0 before the first wait.
    private(set) var nextDeadline: Int64 = 0
    /// Times the clock gave up on catching up after falling more than `maximumLag` periods behind (a stalled
    /// process, a suspended machine) and started counting again from now.
    private(set) var resynchronisations = 0
    private let maximumLag: Int64 = 10

    init(periodNanoseconds: Int64 = 10_000_000) {
        self.periodNanoseconds = periodNanoseconds
    }

    /// Sleeps until the next period's deadline.
    mutating func wait() {
        let now = Self.now()
        if nextDeadline == 0 {
            nextDeadline = now + periodNanoseconds
        } else if now - nextDeadline > maximumLag * periodNanoseconds {
            // Catching up would mean a burst of periods with no sleep at all; hardware would have overrun here.
            resynchronisations += 1
            nextDeadline = now + periodNanoseconds
        }
        var deadline = timespec(
            tv_sec: Int(nextDeadline / 1_000_000_000), tv_nsec: Int(nextDeadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
        nextDeadline += periodNanoseconds
    }

    /// Forgets the schedule; the next `wait` starts a new one from that moment.
    mutating func reset() {
        nextDeadline = 0
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
