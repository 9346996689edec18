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
        Self.unit(seed: seed, index: index, stream: 1) * 100 < lossPercent
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
