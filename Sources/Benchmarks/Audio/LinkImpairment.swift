/// Network conditions for the benchmarks' impairing relay, decided per packet from a seed so that the same seed
/// loses and delays the same packets on every run and for every path compared.
public struct LinkImpairment: Sendable, Equatable {
    /// Share of packets lost, in percent (independent random loss).
    public var lossPercent: Double
    /// Delay every packet takes, in milliseconds.
    public var baseDelayMilliseconds: Double
    /// Extra delay, uniform from 0 to this many milliseconds, per packet (so packets may arrive out of order).
    public var jitterMilliseconds: Double
    /// The seed of the loss and jitter pattern.
    public var seed: UInt64
    /// The mean length of a run of lost packets: 1 is independent random loss; above 1, a two-state
    /// Gilbert–Elliott chain (every packet lost in the bad state, none in the good one) with `lossPercent` of
    /// the packets lost overall and runs of this mean length.
    public var meanBurst: Double = 1

    /// A link; clean (no loss, 1 ms, no jitter) by default.
    public init(
        lossPercent: Double = 0, baseDelayMilliseconds: Double = 1, jitterMilliseconds: Double = 0, seed: UInt64 = 1
    ) {
        self.lossPercent = lossPercent
        self.baseDelayMilliseconds = baseDelayMilliseconds
        self.jitterMilliseconds = jitterMilliseconds
        self.seed = seed
    }

    /// Whether the packet of frame `index` is lost.
    public func isLost(frame index: Int) -> Bool {
        guard meanBurst > 1 else { return Self.unit(seed: seed, index: index, stream: 1) * 100 < lossPercent }
        // The chain from frame 0, from its stationary state: leave the bad state with 1/burst per packet, enter
        // it with p/(burst·(1−p)), so that the share of time in it is p.
        let share = min(0.99, max(0, lossPercent / 100))
        let leave = 1 / meanBurst
        let enter = share * leave / (1 - share)
        var bad = Self.unit(seed: seed, index: -1, stream: 1) < share
        for frame in 0...max(0, index) {
            let draw = Self.unit(seed: seed, index: frame, stream: 1)
            if frame > 0 { bad = bad ? draw >= leave : draw < enter }
        }
        return bad
    }

    /// How long the packet of frame `index` takes, in microseconds.
    public func delay(frame index: Int) -> Int64 {
        let jitter = Self.unit(seed: seed, index: index, stream: 2) * jitterMilliseconds
        return Int64((baseDelayMilliseconds + jitter) * 1000)
    }

    /// A number in 0..<1 from the seed, the frame and the stream (SplitMix64 of their combination).
    static func unit(seed: UInt64, index: Int, stream: UInt64) -> Double {
        var z = seed &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 &+ stream &* 0xD1B5_4A32_D192_ED03
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
