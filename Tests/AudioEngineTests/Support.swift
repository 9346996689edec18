import AudioCore
import AudioDevices
import CAllocationCounter
import Foundation
import Synchronization

/// One test's allocation count, added to by the threads that chose it (see `CAllocationCounter`).
///
/// `@unchecked Sendable`: the storage is only read and written through the C side's atomic operations.
final class AllocationCounter: @unchecked Sendable {
    /// Never freed: a thread may still add to it while it ends, after the test has read the count.
    private let storage = UnsafeMutablePointer<CLong>.allocate(capacity: 1)

    init() { storage.initialize(to: 0) }

    /// Allocations counted so far.
    var count: Int { Int(clubroom_allocation_counter_read(storage)) }

    /// Adds the calling thread's allocations to this counter from now on.
    @Sendable func countOnThisThread() { clubroom_allocation_counting_begin(storage) }

    /// Stops counting the calling thread's allocations.
    static func stopCountingOnThisThread() { clubroom_allocation_counting_end() }
}

/// Things that happen on other threads, collected for a test to look at.
final class Collected<Element: Sendable>: Sendable {
    private let entries = Mutex<[Element]>([])
    var all: [Element] { entries.withLock { $0 } }
    func append(_ element: Element) { entries.withLock { $0.append(element) } }
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "clubroom-engine-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Waits, polling, until `condition` holds or about `limit` seconds pass; returns whether it held. Tests use
/// it to wait for threads, never to measure time.
func waitUntil(limit: Double = 20, _ condition: () -> Bool) -> Bool {
    for _ in 0..<Int(limit * 200) {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Reads a WAV file's samples.
func readWAV(_ path: String) throws -> [Int16] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return try WAVAudio.decode([UInt8](data)).samples
}
