/// A small, fast, seeded random number generator (SplitMix64), so that randomised tests are repeatable:
/// the same seed gives the same sequence on every run and every machine.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state; the next value depends only on it.
    public var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
