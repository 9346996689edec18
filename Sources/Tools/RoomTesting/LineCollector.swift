import Foundation
import Platform
import Synchronization

/// Lines read from a pipe (a child process's output) on a thread of their own, for waiting on with a timeout.
public final class LineCollector: Sendable {
    private let lines = Mutex<[String]>([])
    private let closed = Atomic<Bool>(false)

    public init(_ handle: FileHandle) {
        startThread(named: "line-collector") { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
            // A last line without its newline (a process killed mid-line) still counts.
            if !buffer.isEmpty { lines.withLock { $0.append(String(decoding: buffer, as: UTF8.self)) } }
            closed.store(true, ordering: .releasing)
        }
    }

    public var all: [String] { lines.withLock { $0 } }
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Waits until a line at or after `start` satisfies `match`; returns its index.
    public func wait(from start: Int = 0, timeout: Double = 10, _ match: (String) -> Bool) -> Int? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let snapshot = all
            if start < snapshot.count, let index = snapshot[start...].firstIndex(where: match) { return index }
            if isClosed, all.count == snapshot.count { return nil }
            usleep(10_000)
        }
        return nil
    }
}
