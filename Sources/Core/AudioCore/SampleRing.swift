import Synchronization

/// A lock-free single-producer/single-consumer ring of S16 samples between a real-time audio thread and the rest.
///
/// One thread writes, one other thread reads; each side is wait-free and never allocates after `init`. The
/// producer publishes written samples with a releasing store of `writeCount`, which the consumer reads with an
/// acquiring load before it copies them out (and the same the other way for `readCount`), so a reader never sees a
/// slot before the samples in it.
///
/// Both counters only grow (wrapping after 2^63 samples, some six million years at 48 kHz); their difference is
/// the fill level, so the ring holds exactly `capacity` samples with no wasted slot.
public final class SampleRing: @unchecked Sendable {
    // Safe to share: `storage` is only written by the producer in slots the consumer cannot see yet, and only read
    // by the consumer in slots the producer will not touch until `readCount` moves past them; the two counters are
    // atomics with acquire/release ordering.
    private let storage: UnsafeMutablePointer<Int16>
    private let writeCount = Atomic<Int>(0)
    private let readCount = Atomic<Int>(0)

    /// The most samples the ring can hold.
    public let capacity: Int

    /// Allocates a ring for `capacity` samples (at least one), filled with silence.
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage = UnsafeMutablePointer<Int16>.allocate(capacity: self.capacity)
        storage.initialize(repeating: 0, count: self.capacity)
    }

    deinit {
        storage.deallocate()
    }

    /// Samples ready to read. Exact on the consumer's thread; a lower bound anywhere else.
    public var availableToRead: Int {
        writeCount.load(ordering: .acquiring) &- readCount.load(ordering: .relaxed)
    }

    /// Free slots. Exact on the producer's thread; a lower bound anywhere else.
    public var availableToWrite: Int {
        capacity - (writeCount.load(ordering: .relaxed) &- readCount.load(ordering: .acquiring))
    }

    /// Producer only: copies as many of `samples` as fit and returns how many were written.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let written = writeCount.load(ordering: .relaxed)
        let free = capacity - (written &- readCount.load(ordering: .acquiring))
        let count = min(free, samples.count)
        guard count > 0, let source = samples.baseAddress else { return 0 }
        let start = written % capacity
        let first = min(count, capacity - start)
        (storage + start).update(from: source, count: first)
        if count > first {
            storage.update(from: source + first, count: count - first)
        }
        writeCount.store(written &+ count, ordering: .releasing)
        return count
    }

    /// Producer only: copies as many of `samples` as fit and returns how many were written.
    @discardableResult
    public func write(_ samples: borrowing [Int16]) -> Int {
        samples.withUnsafeBufferPointer { write($0) }
    }

    /// Producer only: appends up to `count` zero samples and returns how many were written.
    @discardableResult
    public func writeSilence(count requested: Int) -> Int {
        let written = writeCount.load(ordering: .relaxed)
        let free = capacity - (written &- readCount.load(ordering: .acquiring))
        let count = min(free, max(0, requested))
        guard count > 0 else { return 0 }
        let start = written % capacity
        let first = min(count, capacity - start)
        (storage + start).update(repeating: 0, count: first)
        if count > first {
            storage.update(repeating: 0, count: count - first)
        }
        writeCount.store(written &+ count, ordering: .releasing)
        return count
    }

    /// Consumer only: fills the front of `destination` with as many samples as are ready and returns how many.
    @discardableResult
    public func read(into destination: UnsafeMutableBufferPointer<Int16>) -> Int {
        let read = readCount.load(ordering: .relaxed)
        let ready = writeCount.load(ordering: .acquiring) &- read
        let count = min(ready, destination.count)
        guard count > 0, let target = destination.baseAddress else { return 0 }
        let start = read % capacity
        let first = min(count, capacity - start)
        target.update(from: storage + start, count: first)
        if count > first {
            (target + first).update(from: storage, count: count - first)
        }
        readCount.store(read &+ count, ordering: .releasing)
        return count
    }

    /// Consumer only: drops up to `count` ready samples without copying them and returns how many were dropped.
    @discardableResult
    public func discard(count requested: Int) -> Int {
        let read = readCount.load(ordering: .relaxed)
        let ready = writeCount.load(ordering: .acquiring) &- read
        let count = min(ready, max(0, requested))
        readCount.store(read &+ count, ordering: .releasing)
        return count
    }
}
