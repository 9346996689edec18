import AudioCore
import Platform
import Synchronization

/// The capture thread's end of a `SampleRing`: each period the device delivers goes into the ring, and the time
/// of the write is stamped (a clock read and an atomic store, both safe on the audio thread), so the thread
/// that takes frames out knows how long the newest period has waited.
public final class RingSink: SampleSink {
    /// The ring the periods go into.
    public let ring: SampleRing
    private let stamp = Atomic<Int64>(0)

    /// The producer end of `ring`.
    public init(_ ring: SampleRing) {
        self.ring = ring
    }

    /// When the last period was written, in `MonotonicClock` microseconds; 0 before the first.
    public var lastWrite: Int64 { stamp.load(ordering: .acquiring) }

    public func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let written = ring.write(samples)
        stamp.store(MonotonicClock.microseconds(), ordering: .releasing)
        return written
    }
}

/// The playback thread's end of a `SampleRing`.
public final class RingSource: SampleSource {
    /// The ring the periods come from.
    public let ring: SampleRing

    /// The consumer end of `ring`.
    public init(_ ring: SampleRing) {
        self.ring = ring
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int { ring.read(into: buffer) }
}
