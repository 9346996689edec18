import Dispatch
import Glibc
import Platform
import RoomTransport

/// Gives the memory a crowd's departure freed back to the system. The allocator keeps freed memory for reuse
/// and returns it only from the top of its heap, so after a thousand connections close (each with its buffers)
/// much of what they held stays resident, scattered between the blocks still in use. Once at least `threshold`
/// peers have left, the free pages are handed back (`malloc_trim`, off the loop) `delay` after the last of
/// these departures (the connections a departure closes are gone once their closing handshake is over, 3 s at
/// most), and at the latest `longestWait` after the first: a server that was big for a while does not stay big,
/// and a steady stream of departures cannot put the return off for ever.
///
/// Loop thread only (its timer runs on the loop), which makes the unchecked sendability safe.
final class MemoryReturn: @unchecked Sendable {
    /// Departures that make a return worth its cost (it walks the heap: a few milliseconds, off the loop).
    static let threshold = 100
    /// How long after the last departure the memory is returned: past the server's closing handshake (3 s).
    static let delay: Duration = .milliseconds(3_500)
    /// The longest a return waits after the departure that crossed the threshold.
    static let longestWait: Duration = .seconds(15)

    private let threshold: Int
    private let delay: Duration
    private let longestWait: Duration
    private let trim: @Sendable () -> Void
    /// Departures since the last return.
    private(set) var departures = 0
    /// The return scheduled, and when the departure that crossed the threshold was (loop milliseconds).
    private var timer: EventLoopTimer?
    private var crossedAt: Int64 = 0
    /// Whether a return is scheduled.
    var isScheduled: Bool { timer != nil }

    init(
        threshold: Int = MemoryReturn.threshold, delay: Duration = MemoryReturn.delay,
        longestWait: Duration = MemoryReturn.longestWait,
        trim: @escaping @Sendable () -> Void = { _ = returnFreeMemory(0) }
    ) {
        self.threshold = threshold
        self.delay = delay
        self.longestWait = longestWait
        self.trim = trim
    }

    /// `count` peers left; once the threshold is crossed a return is scheduled on `loop` `delay` from now (moved
    /// on by later departures, up to `longestWait` after the crossing); without a loop it is made at once.
    func departed(_ count: Int, loop: EventLoop?) {
        departures += count
        guard departures >= threshold else { return }
        guard let loop else {
            departures = 0
            trim()
            return
        }
        let now = MonotonicClock.milliseconds()
        if timer == nil { crossedAt = now }
        let latest = crossedAt + Self.milliseconds(longestWait)
        guard now + Self.milliseconds(delay) <= latest || timer == nil else { return }
        timer?.cancel()
        let trim = trim
        timer = loop.schedule(after: .milliseconds(min(Self.milliseconds(delay), max(0, latest - now)))) { [self] in
            timer = nil
            departures = 0
            DispatchQueue.global(qos: .utility).async { trim() }
        }
    }
}

extension MemoryReturn {
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.inMilliseconds
    }
}

/// glibc's `malloc_trim` (declared in <malloc.h>, which the Glibc module does not bring in): returns the free
/// pages of every arena to the system, keeping `pad` bytes at the top of the main one.
@_silgen_name("malloc_trim")
private func returnFreeMemory(_ pad: Int) -> Int32
