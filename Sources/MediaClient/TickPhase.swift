import AudioCore

/// Moves the media thread's 20 ms tick to just after the packets it plays arrive.
///
/// The tick runs on its own clock, at a phase unrelated to the speakers' senders, so a packet may wait up to a
/// whole frame after it is due before the tick that plays it: on average half a frame of delay, for nothing.
/// Each tick reports how long the frames it played had been due (the least over its speakers). When every
/// frame played over a second had been due for more than 3 ms, the next tick comes that much earlier, less
/// 1 ms of margin. The tick only ever moves earlier: the playback queue absorbs the frame that comes early
/// and trims it back (see `PlaybackQueue` in the room screen's sound), where a later tick could starve the
/// loudspeaker. With several speakers it follows the one closest to being late, so it never makes anyone late.
struct TickPhase: Sendable, Equatable {
    /// Ticks with frames played over which the least slack is watched.
    static let window = 50
    /// Slack above this is moved out of the schedule, in µs.
    static let threshold: Int64 = 3_000
    /// Slack left after a move, in µs.
    static let margin: Int64 = 1_000

    private var leastSlack = Int64.max
    private var ticks = 0

    /// Reports one tick: `slack` is how long, in µs, the frames played had been due (the least over the
    /// speakers), or nil when no packet was played. Returns how many µs earlier the next tick should come.
    mutating func observe(slack: Int64?) -> Int64 {
        guard let slack else { return 0 }
        leastSlack = min(leastSlack, slack)
        ticks += 1
        guard ticks >= Self.window else { return 0 }
        defer {
            leastSlack = .max
            ticks = 0
        }
        guard leastSlack > Self.threshold else { return 0 }
        return min(leastSlack, AudioFormat.frameMicroseconds) - Self.margin
    }
}
