import AudioCore

/// Moves the media thread's 20 ms tick to just after what it waits for: the packets it plays, or, while it
/// plays none, the microphone's periods.
///
/// The tick runs on its own clock, at a phase unrelated to the speakers' senders, so a packet may wait up to a
/// whole frame after it is due before the tick that plays it: on average half a frame of delay, for nothing.
/// Each tick reports how long the frames it played had been due (the least over its speakers). When every
/// frame played over a second had been due for more than 3 ms, the next tick comes that much earlier, less
/// 1 ms of margin. The tick only ever moves earlier: the playback queue absorbs the frame that comes early
/// and trims it back (see `PlaybackQueue` in the room screen's sound), where a later tick could starve the
/// loudspeaker. With several speakers it follows the one closest to being late, so it never makes anyone late.
///
/// The microphone's side (``capture``) works the same way on how long the newest captured period had waited
/// when the tick took its frame, with 2 ms of margin: the capture thread wakes less punctually than packets
/// arrive, and a tick that comes before the period it needs sends nothing until the next one.
struct TickPhase: Sendable, Equatable {
    /// Ticks with frames played over which the least slack is watched.
    static let window = 50

    /// Slack above this is moved out of the schedule, in µs.
    let threshold: Int64
    /// Slack left after a move, in µs.
    let margin: Int64

    private var leastSlack = Int64.max
    private var ticks = 0

    /// Follows the packets played: 3 ms threshold, 1 ms margin.
    init(threshold: Int64 = 3_000, margin: Int64 = 1_000) {
        self.threshold = threshold
        self.margin = margin
    }

    /// Follows the microphone's periods: 4 ms threshold, 2 ms margin.
    static var capture: TickPhase { TickPhase(threshold: 4_000, margin: 2_000) }

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
        guard leastSlack > threshold else { return 0 }
        return min(leastSlack, AudioFormat.frameMicroseconds) - margin
    }
}

/// The media thread's tick: the packets played set its phase; while none has been played for a second (a
/// speaker nobody else is talking to), the microphone's periods do.
struct TickSchedule: Sendable, Equatable {
    private var playout = TickPhase()
    private var capture = TickPhase.capture
    /// Ticks since one played a packet.
    private var ticksWithoutPlayout = Int.max

    /// Reports one tick: how long the frames played had been due (nil: none played) and how long the
    /// microphone's newest period had waited (nil: no frame taken). Returns how many µs earlier the next tick
    /// should come.
    mutating func earlier(playoutSlack: Int64?, captureWait: Int64?) -> Int64 {
        let earlier = playout.observe(slack: playoutSlack)
        if playoutSlack != nil {
            ticksWithoutPlayout = 0
            capture = .capture
            return earlier
        }
        if ticksWithoutPlayout < .max { ticksWithoutPlayout += 1 }
        guard ticksWithoutPlayout > TickPhase.window else { return earlier }
        return earlier + capture.observe(slack: captureWait)
    }
}
