import ClusterState
import Crypto

/// What a cluster node writes to Redis, sealed under a key derived from the cluster secret, so that Redis orders
/// and stores the cluster's inputs and entries but cannot author one: a request a node submits, an entry the
/// owner appends, a checkpoint of the room. Each is AES-256-GCM with a fresh random nonce; the associated data
/// names what it is and where it belongs (the room, the submitting node, the entry's place in the chain), so a
/// sealed body moved to another room, node or place does not open. Sealing also keeps the bodies (chat
/// included, role-only and direct messages among it) out of Redis in clear.
///
/// Sealed bytes: a version byte (1), the 12-byte nonce, the ciphertext and the 16-byte tag. A request also
/// carries its node's sequence number (8 bytes, big-endian, after the version) in clear, covered by the tag:
/// the owner refuses a sequence number it has seen from that node, so a request copied back into the stream
/// takes effect at most once. See docs/cluster.md ("What Redis can and cannot do").
public struct ClusterSeal: Sendable {
    static let version: UInt8 = 1
    private let key: [UInt8]

    /// The seal of the cluster whose shared secret is `secret`.
    public init(secret: [UInt8]) {
        key =
            HMACSHA256.sign(key: secret, message: Array("clubroom cluster seal v1".utf8))
            ?? [UInt8](repeating: 0, count: AESGCM.keyBytes)
    }

    /// A request body: `plain` (a `ClusterInput`) submitted by `node` (the name the request stream records) to
    /// `room`, as that node's `sequence`-th request.
    public func sealRequest(_ plain: [UInt8], room: String, node: String, sequence: UInt64) throws -> [UInt8] {
        let number = Self.bigEndian(sequence)
        return [Self.version] + number
            + (try seal(plain, context: Self.context("request", room, node) + number))
    }

    /// The plain request and its sequence number; nil when it was not sealed by a node of this cluster for this
    /// room under this node's name.
    public func openRequest(_ sealed: [UInt8], room: String, node: String) -> (plain: [UInt8], sequence: UInt64)? {
        guard sealed.count > 9, sealed[0] == Self.version else { return nil }
        let number = Array(sealed[1..<9])
        let sequence = number.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard
            let plain = open(Array(sealed[9...]), context: Self.context("request", room, node) + number)
        else { return nil }
        return (plain, sequence)
    }

    /// An entry's body, bound to its room, its place in the chain, its kind and the request it answers.
    public func sealEntry(_ plain: [UInt8], room: String, entry: RoomEntry) throws -> [UInt8] {
        [Self.version] + (try seal(plain, context: Self.entryContext(room, entry)))
    }

    /// The entry's plain body; nil when the owner of a room of this cluster did not write it there.
    public func openEntry(_ entry: RoomEntry, room: String) -> [UInt8]? {
        guard entry.body.first == Self.version else { return nil }
        return open(Array(entry.body.dropFirst()), context: Self.entryContext(room, entry))
    }

    /// A checkpoint of the room, bound to the entry it was taken at.
    public func sealCheckpoint(_ plain: [UInt8], room: String, at id: EntryID) throws -> [UInt8] {
        [Self.version] + (try seal(plain, context: Self.context("checkpoint", room, id.description)))
    }

    /// The checkpoint's plain bytes; nil when the owner of a room of this cluster did not take it at `id`.
    public func openCheckpoint(_ sealed: [UInt8], room: String, at id: EntryID) -> [UInt8]? {
        guard sealed.first == Self.version else { return nil }
        return open(Array(sealed.dropFirst()), context: Self.context("checkpoint", room, id.description))
    }

    /// A ban's record in the cluster's bans, bound to the identity it bans.
    public func sealBan(_ plain: [UInt8], identity: String) throws -> [UInt8] {
        [Self.version] + (try seal(plain, context: Self.context("ban", identity)))
    }

    /// The ban's plain record; nil when no node of this cluster wrote it for `identity`.
    public func openBan(_ sealed: [UInt8], identity: String) -> [UInt8]? {
        guard sealed.first == Self.version else { return nil }
        return open(Array(sealed.dropFirst()), context: Self.context("ban", identity))
    }

    // MARK: Sealing

    /// libcrypto could not seal.
    struct SealError: Error, CustomStringConvertible {
        var description: String { "AES-GCM sealing failed in libcrypto" }
    }

    private func seal(_ plain: [UInt8], context: [UInt8]) throws -> [UInt8] {
        let nonce = try SecureRandom.bytes(AESGCM.nonceBytes)
        guard let sealed = AESGCM.seal(key: key, nonce: nonce, plaintext: plain, associatedData: context) else {
            throw SealError()
        }
        return nonce + sealed
    }

    private func open(_ bytes: [UInt8], context: [UInt8]) -> [UInt8]? {
        guard bytes.count >= AESGCM.nonceBytes + AESGCM.tagBytes else { return nil }
        return AESGCM.open(
            key: key, nonce: Array(bytes.prefix(AESGCM.nonceBytes)), sealed: Array(bytes.dropFirst(AESGCM.nonceBytes)),
            associatedData: context)
    }

    private static func entryContext(_ room: String, _ entry: RoomEntry) -> [UInt8] {
        context("entry", room, entry.id.description, entry.prev.description, entry.kind.rawValue, entry.requestID)
    }

    /// The parts, each followed by a zero byte (no part holds one: names, IDs and kinds are checked text).
    private static func context(_ parts: String...) -> [UInt8] {
        parts.reduce(into: Array("clubroom cluster v1".utf8) + [0]) { $0 += Array($1.utf8) + [0] }
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
