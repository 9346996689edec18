import Synchronization

/// Which address of a server name answered last, so that a client reconnecting to a name with several addresses
/// (the nodes of a cluster behind one DNS name) goes first to the node that served it, and after that node
/// fails, stays with the one that answered instead of waiting on the dead one at every reconnect.
final class AddressMemory: Sendable {
    static let shared = AddressMemory()

    /// `host:port` to the address that last opened a connection. Bounded: a client talks to a few servers.
    private let answered = Mutex<[String: [UInt8]]>([:])
    static let capacity = 64

    /// `addresses` in the order to try them: the one that answered last first, the others as resolved.
    func ordered(_ addresses: [[UInt8]], for key: String) -> [[UInt8]] {
        guard let known = answered.withLock({ $0[key] }), let index = addresses.firstIndex(of: known) else {
            return addresses
        }
        var ordered = addresses
        ordered.remove(at: index)
        ordered.insert(known, at: 0)
        return ordered
    }

    func remember(_ address: [UInt8], for key: String) {
        answered.withLock { answered in
            if answered[key] == nil, answered.count >= Self.capacity { answered.removeAll() }
            answered[key] = address
        }
    }

    func forget(_ key: String) {
        answered.withLock { $0[key] = nil }
    }
}
