import AudioDevices
import Foundation
import RoomTesting
import Synchronization

/// A lock-free single-producer, single-consumer ring of samples, standing in for the session's rings.
///
/// `@unchecked Sendable`: the storage is written only by the producer between `tail` loads and read only by
/// the consumer between `head` loads; the two indices are atomics with acquire/release ordering, so each
/// side sees the other's samples before the index that publishes them.
class TestRing: SampleSink, SampleSource, @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<Int16>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)

    init(capacity: Int) {
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0)
    }

    deinit { storage.deallocate() }

    var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

    func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let tail = tail.load(ordering: .relaxed)
        let free = storage.count - (tail - head.load(ordering: .acquiring))
        let count = min(free, samples.count)
        for index in 0..<count { storage[(tail + index) % storage.count] = samples[index] }
        self.tail.store(tail + count, ordering: .releasing)
        return count
    }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        let head = head.load(ordering: .relaxed)
        let available = tail.load(ordering: .acquiring) - head
        let count = min(available, buffer.count)
        for index in 0..<count { buffer[index] = storage[(head + index) % storage.count] }
        self.head.store(head + count, ordering: .releasing)
        return count
    }

    func write(_ samples: [Int16]) -> Int { samples.withUnsafeBufferPointer { write($0) } }

    func drain() -> [Int16] {
        var samples = [Int16](repeating: 0, count: count)
        let got = samples.withUnsafeMutableBufferPointer { read(into: $0) }
        return Array(samples[..<got])
    }
}

/// Collects status reports from a stream's callback.
final class StatusLog: Sendable {
    private let entries = Mutex<[DeviceStatus]>([])
    var all: [DeviceStatus] { entries.withLock { $0 } }
    func record(_ status: DeviceStatus) { entries.withLock { $0.append(status) } }
}

/// The device tests' own helpers; tones and measurements come from RoomTesting's `Signals`.
extension Signals {
    /// Raw native-endian 16-bit samples, as the ALSA `file` plugin reads and writes them.
    static func raw(_ samples: [Int16]) -> Data { samples.withUnsafeBytes { Data($0) } }

    static func samples(_ data: Data) -> [Int16] {
        data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }
}
