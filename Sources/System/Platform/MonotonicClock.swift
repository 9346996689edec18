import Glibc

/// The one monotonic clock every part of Clubroom keeps time on (`CLOCK_MONOTONIC`: never going backwards,
/// unaffected by changes to the wall clock), and the CPU clocks the benchmarks read.
///
/// Reading it does not allocate or take a lock, so the audio threads may call it.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point (boot).
    public static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Microseconds since an arbitrary point (boot).
    public static func microseconds() -> Int64 {
        nanoseconds() / 1_000
    }

    /// Milliseconds since an arbitrary point (boot).
    public static func milliseconds() -> Int64 {
        nanoseconds() / 1_000_000
    }

    /// Milliseconds on `CLOCK_BOOTTIME`: monotonic like the rest, but counting on while the process is frozen
    /// or the machine is suspended, for deadlines that must lapse whatever happened to the process (leases).
    public static func bootMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// CPU time the calling thread has used, in nanoseconds.
    public static func threadCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// CPU time the whole process has used (every thread, user and system), in nanoseconds.
    public static func processCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Sleeps the calling thread for `microseconds` (nothing for zero or less), through interruptions.
    public static func sleep(microseconds: Int64) {
        guard microseconds > 0 else { return }
        sleep(untilNanoseconds: nanoseconds() + microseconds * 1_000)
    }

    /// Sleeps the calling thread until the clock reads `deadline` nanoseconds, through interruptions. An absolute
    /// deadline does not drift: a late wake-up does not push the next deadline back.
    public static func sleep(untilNanoseconds deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}

/// The wall clock (`CLOCK_REALTIME`): for times people and other machines read (timestamps in messages, logs,
/// records), never for intervals, which `MonotonicClock` measures.
public enum WallClock {
    /// Milliseconds since the Unix epoch.
    public static func milliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }
}

/// Wakes a thread once per period on the monotonic clock, at absolute deadlines (start + n × period), so that
/// sleeping late once does not push every later period back: the pace does not drift. After a stall of more
/// than ten periods (a stopped process, a suspended machine) it starts counting again from now rather than
/// catching up with a burst.
///
/// What paces the virtual audio devices like hardware, and what the benchmarks pace their rigs with. Does not
/// allocate; safe on an audio thread.
public struct PeriodClock: Sendable {
    /// The period in nanoseconds.
    public let periodNanoseconds: Int64
    /// The monotonic time, in nanoseconds, of the next period; 0 before the first wait.
    public private(set) var nextDeadline: Int64 = 0
    /// The deadline the last `wait` slept to, in nanoseconds; 0 before the first wait.
    public private(set) var lastDeadline: Int64 = 0
    /// Times the clock gave up catching up after falling more than ten periods behind.
    public private(set) var resynchronisations = 0
    private let maximumLag: Int64 = 10

    /// A clock of `periodNanoseconds` (10 ms, a device period, by default).
    public init(periodNanoseconds: Int64 = 10_000_000) {
        self.periodNanoseconds = max(1, periodNanoseconds)
    }

    /// Sleeps until the next period's deadline.
    public mutating func wait() {
        let now = MonotonicClock.nanoseconds()
        if nextDeadline == 0 {
            nextDeadline = now + periodNanoseconds
        } else if now - nextDeadline > maximumLag * periodNanoseconds {
            // Catching up would mean a burst of periods with no sleep at all; hardware would have overrun here.
            resynchronisations += 1
            nextDeadline = now + periodNanoseconds
        }
        MonotonicClock.sleep(untilNanoseconds: nextDeadline)
        lastDeadline = nextDeadline
        nextDeadline += periodNanoseconds
    }

    /// Forgets the schedule; the next `wait` starts a new one from that moment.
    public mutating func reset() {
        nextDeadline = 0
    }
}
