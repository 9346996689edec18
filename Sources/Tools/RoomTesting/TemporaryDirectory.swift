import Foundation

/// A fresh directory under the system's temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Creates the directory, private to this user as a server's data folder should be (a folder everyone may read
    /// makes `clubroom serve` warn).
    public init() {
        path = NSTemporaryDirectory() + "clubroom-test-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Removes the directory and everything in it.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Waits, polling every `interval` seconds (5 ms unless told), until `condition` holds or about `limit` seconds
/// pass; returns whether it held. The wait counts its polls, not the clock, so a loaded machine stretches it rather
/// than cutting it short. Tests use it to wait for other threads or processes, never to measure time.
public func waitUntil(limit: Double = 10, every interval: Double = 0.005, _ condition: () -> Bool) -> Bool {
    let polls = max(1, Int((limit / interval).rounded()))
    for _ in 0..<polls {
        if condition() { return true }
        usleep(useconds_t(interval * 1_000_000))
    }
    return condition()
}
