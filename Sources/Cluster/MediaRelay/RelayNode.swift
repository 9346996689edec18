import MediaTransport

/// Another node of a room, as the relay sends to it and checks what comes from it.
public struct RelayNode: Sendable, Hashable {
    public var name: String
    public var incarnation: UInt64
    /// Its relay socket's address.
    public var address: UDPAddress
}

extension RelayNode {
    /// A node as the cluster publishes it, its relay socket's address as text (`UDPAddress`'s description); nil
    /// when that is no address (a node without a relay publishes none).
    public init?(name: String, incarnation: UInt64, relayAddress: String) {
        guard let address = UDPAddress(relayAddress) else { return nil }
        self.init(name: name, incarnation: incarnation, address: address)
    }
}
