import Glibc

/// The monotonic clock the client's sound keeps time on, in microseconds (the capture thread's write stamps,
/// the talking controls' time, the benchmarks' click times), and thread and process CPU time for `bench cpu`.
public enum MonotonicClock {
    /// Microseconds since an arbitrary point (boot), never going backwards.
    public static func microseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }

    /// CPU time the calling thread has used, in nanoseconds.
    public static func threadCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// CPU time the whole process has used (every thread, user and system), in nanoseconds.
    public static func processCPUNanoseconds() -> Int64 {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let user = Int64(usage.ru_utime.tv_sec) * 1_000_000_000 + Int64(usage.ru_utime.tv_usec) * 1_000
        let system = Int64(usage.ru_stime.tv_sec) * 1_000_000_000 + Int64(usage.ru_stime.tv_usec) * 1_000
        return user + system
    }

    /// Sleeps the calling thread for `microseconds`.
    static func sleep(microseconds: Int64) {
        var request = timespec(tv_sec: Int(microseconds / 1_000_000), tv_nsec: Int(microseconds % 1_000_000) * 1_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR {
            request = remaining
        }
    }
}
