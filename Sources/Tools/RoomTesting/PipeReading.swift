import Foundation
import Platform

extension FileHandle {
    /// Reads this handle (a child's output pipe) to its end on a thread of its own: each chunk to `chunk` as it
    /// comes, then `ended` once. Blocking reads on a thread, not a `readabilityHandler`: the dispatch source behind
    /// a handler can outlive its descriptor, and once the number is reused libdispatch's event loop has crashed
    /// the whole test process.
    public func readToEnd(chunk: @escaping @Sendable (Data) -> Void, ended: @escaping @Sendable () -> Void = {}) {
        startThread(named: "pipe-reader") { [self] in
            while case let data = availableData, !data.isEmpty { chunk(data) }
            ended()
        }
    }
}
