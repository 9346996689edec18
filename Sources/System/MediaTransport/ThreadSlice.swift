internal import CMediaIO

/// A thread's time slice under the kernel's EEVDF scheduler. From Linux 6.12 a thread may ask for a slice
/// shorter than the default (a few milliseconds): it then waits less for a CPU it shares, and a wake-up of it
/// preempts threads with longer slices sooner, at the cost of more switches while the CPU is contended.
/// Earlier kernels accept the request and ignore it.
public enum ThreadSlice {
    /// Asks for slices of `nanoseconds` (the kernel takes 0.1–100 ms) for the calling thread, keeping its
    /// scheduling policy and nice value; false when the kernel refuses, or the thread runs under a real-time or
    /// idle policy (which has no slice).
    @discardableResult
    public static func request(nanoseconds: UInt64) -> Bool {
        clubroom_set_thread_slice(nanoseconds) == 0
    }

    /// The slice the kernel holds for thread `thread` (a kernel thread ID; 0 for the calling thread), in
    /// nanoseconds (on Linux 6.12 and later, the default slice until one is asked for; 0 on earlier kernels);
    /// nil when it cannot be read.
    public static func current(thread: Int = 0) -> Int64? {
        let slice = clubroom_thread_slice(Int32(truncatingIfNeeded: thread))
        return slice < 0 ? nil : slice
    }
}
