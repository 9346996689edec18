/// Durations as the integers and doubles that C calls, wire fields and printed figures take, converted in one place.
extension Duration {
    /// The whole duration in milliseconds, rounded toward zero (seconds and the fraction alike).
    public var inMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The whole duration in nanoseconds, rounded toward zero.
    public var inNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The whole duration in microseconds, rounded toward zero.
    public var inMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The duration in seconds, with its fraction.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole seconds, any fraction of a second counted as a whole one (a lifetime is never
    /// shortened by rounding).
    public var inSecondsRoundedUp: Int64 {
        let (seconds, attoseconds) = components
        return seconds + (attoseconds > 0 ? 1 : 0)
    }
}
