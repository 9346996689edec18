import Foundation

/// The tests of one process share its file descriptors. Code some tests run in the process waits on its sockets
/// with select(2), which ends the whole process for a descriptor numbered FD_SETSIZE (1024) or above (libshout,
/// under an Icecast output, does); a test holding a thousand connections open pushes every new descriptor past
/// that. Such tests take turns through this lock: a test of either kind runs its body alone among them.
public enum DescriptorTurns {
    private static let lock = NSLock()

    /// Runs `body` while no other test of either kind runs its own.
    public static func alone<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
