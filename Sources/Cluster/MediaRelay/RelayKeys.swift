import Crypto
import MediaTransport

/// The key a node protects a room's relayed media with: HMAC-SHA256 of the room, the node, its incarnation and
/// the relay session under the cluster secret, cut to an SRTP master key and salt.
///
/// Per session, so a node that stops relaying a room and starts again (its last listener there left, another
/// joined) never reuses a key with restarted sequence numbers and SRTCP indexes — keystream reuse, and the
/// reused-SRTP-state failure of mediasoup #435; a session number is never used twice by one incarnation, and a
/// restarted node is a new incarnation. Per room, so a room's relay key says nothing about another's; derived,
/// so no key travels between nodes. A node that does not hold the same secret derives other keys and its media
/// does not authenticate.
public enum RelayKeys {
    public static func key(
        secret: [UInt8], room: String, node: String, incarnation: UInt64, session: UInt64
    ) -> SRTPKey {
        var message = Array("clubroom relay key v2".utf8) + [0]
        message += Array(room.utf8) + [0] + Array(node.utf8) + [0]
        message += (0..<8).map { UInt8(truncatingIfNeeded: incarnation >> (56 - 8 * $0)) }
        message += (0..<8).map { UInt8(truncatingIfNeeded: session >> (56 - 8 * $0)) }
        let tag = HMACSHA256.sign(key: secret, message: message) ?? [UInt8](repeating: 0, count: HMACSHA256.tagBytes)
        return SRTPKey(bytes: Array(tag.prefix(SRTPKey.length)))!
    }

    /// The sender SSRC of a room's keepalives: the first 32 bits of HMAC-SHA256 of the room under a fixed key,
    /// so the receiver knows which room's key to check a keepalive under. It does not depend on the cluster
    /// secret, so that a node under another secret is recognised by the room it names and refused as such (and
    /// logged) rather than taken for noise.
    public static func roomTag(room: String) -> UInt32 {
        let tag =
            HMACSHA256.sign(key: Array("clubroom relay keepalive v1".utf8), message: Array(room.utf8))
            ?? [UInt8](repeating: 0, count: 4)
        return tag.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// SSRCs that carry their node's slot in the top byte, so nodes never hand out the same SSRC.
public enum SSRCSpace {
    /// An SSRC for a peer of the node with `slot` (1-255), from 24 random bits; the random ones are even, since
    /// the odd one beside each is its stream for listeners who take RED (`MediaForwarder.redSSRC`).
    public static func ssrc(slot: Int, random: UInt32 = UInt32.random(in: 0x8...0x7F_FFF8) << 1) -> UInt32 {
        UInt32(slot & 0xFF) << 24 | (random & 0xFF_FFFF)
    }

    /// The slot of the node that assigned `ssrc`.
    public static func slot(of ssrc: UInt32) -> Int { Int(ssrc >> 24) }
}
