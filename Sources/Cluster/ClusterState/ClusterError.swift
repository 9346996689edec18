import RedisClient

/// Why a cluster call failed.
public enum ClusterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Redis could not be used just now (down, paused, unreachable): the request may be tried again.
    case unavailable(RedisError)
    /// Redis answered in a way the cluster does not expect (a bug, or keys written by something else).
    case redis(RedisError)
    /// A room or node name the cluster cannot use as a key.
    case badName(String)
    /// Another running node already uses this name.
    case nameTaken(node: String, by: String)
    /// Every node slot is held by a live node.
    case noFreeSlot
    /// This node does not hold the room's lease (or stopped trusting it): it must not act as the room's owner.
    case notOwner(room: String)
    /// The node was stopped.
    case stopped

    init(_ error: RedisError) {
        self = error.isUnavailable ? .unavailable(error) : .redis(error)
    }

    /// Whether trying again later may succeed.
    public var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .unavailable(let error): "the cluster is unavailable, try again: \(error)"
        case .redis(let error): "the cluster's Redis misbehaved: \(error)"
        case .badName(let name): "'\(name)' is not a usable name (1-64 letters, digits, '-', '_' or '.')"
        case .nameTaken(let node, let by): "node name \(node) is in use by a running node (\(by))"
        case .noFreeSlot: "every node slot of the cluster is taken by a live node"
        case .notOwner(let room): "this node does not own room \(room)"
        case .stopped: "the cluster connection was stopped"
        }
    }
}
