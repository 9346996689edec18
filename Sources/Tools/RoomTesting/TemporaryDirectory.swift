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

/// Waits, polling, until `condition` holds or about `limit` seconds pass; returns whether it held. Tests use
/// it to wait for other threads (audio threads, say), never to measure time.
public func waitUntil(limit: Double = 10, _ condition: () -> Bool) -> Bool {
    for _ in 0..<Int(limit * 200) {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
