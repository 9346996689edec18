import Platform
import RoomTransport

/// The log's lines for departures: one per departure, up to `perSecond` a second; beyond that, in a crowd
/// leaving at once, the rest are counted and said in one line a second later. The loop writes its log itself, so
/// a thousand lines at once would cost it their formatting and writing (and wait for a slow reader of the log)
/// while others are waiting for their answers.
///
/// Loop thread only (its timer runs on the loop), which makes the unchecked sendability safe.
final class DepartureLog: @unchecked Sendable {
    /// Departure lines written one by one each second.
    static let perSecond = 20

    private let perSecond: Int
    private let summaryDelay: Duration
    private var windowStart: Int64 = -1_000_000
    private var written = 0
    /// Departures not logged one by one since the last summary.
    private(set) var unlogged = 0
    private var summaryScheduled = false

    init(perSecond: Int = DepartureLog.perSecond, summaryDelay: Duration = .seconds(1)) {
        self.perSecond = perSecond
        self.summaryDelay = summaryDelay
    }

    /// Logs `line` (built only if it is written) unless this second's lines are used up; then counts it, for the
    /// summary `loop` writes a second later (at once without a loop).
    func departed(_ line: @autoclosure () -> String, to log: ServerLog, loop: EventLoop?) {
        let now = MonotonicClock.milliseconds()
        if now - windowStart >= 1000 {
            windowStart = now
            written = 0
        }
        if written < perSecond {
            written += 1
            log.info(line())
            return
        }
        unlogged += 1
        guard !summaryScheduled else { return }
        guard let loop else {
            summarize(to: log)
            return
        }
        summaryScheduled = true
        loop.schedule(after: summaryDelay) { [self] in
            summaryScheduled = false
            summarize(to: log)
        }
    }

    private func summarize(to log: ServerLog) {
        guard unlogged > 0 else { return }
        log.info("\(unlogged) more peers left, not logged one by one (at most \(perSecond) departure lines a second)")
        unlogged = 0
    }
}
