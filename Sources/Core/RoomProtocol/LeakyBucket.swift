/// A leaky-bucket rate limiter for one connection: each message pours `cost` into the bucket, the bucket drains
/// at `drainPerSecond`, and a message that would overflow `capacity` is refused without being counted.
///
/// Pure: the caller passes the time, in milliseconds from any fixed origin, so tests need no clock.
public struct LeakyBucket: Sendable, Equatable {
    /// The largest burst accepted at once.
    public let capacity: Double
    /// How much drains each second: the sustained rate accepted.
    public let drainPerSecond: Double
    /// The current fill.
    public private(set) var level: Double = 0
    private var lastMilliseconds: Int64?

    public init(capacity: Double, drainPerSecond: Double) {
        self.capacity = max(0, capacity)
        self.drainPerSecond = max(0, drainPerSecond)
    }

    /// Whether a message costing `cost` is accepted at `nowMilliseconds`; an accepted one fills the bucket.
    public mutating func allow(cost: Double = 1, nowMilliseconds: Int64) -> Bool {
        if let last = lastMilliseconds, nowMilliseconds > last {
            level = max(0, level - Double(nowMilliseconds - last) * drainPerSecond / 1000)
        }
        if lastMilliseconds.map({ nowMilliseconds > $0 }) ?? true { lastMilliseconds = nowMilliseconds }
        guard level + cost <= capacity else { return false }
        level += cost
        return true
    }
}
