import Platform
import RoomCore

/// What a recorder says when it joins: who asked for the recording (`started_by`), so that everyone reads who
/// started it. It travels in the upgrade request, as the guest's name does (`GuestHeaders`): the header
/// `X-Clubroom-Started-By`, the identity percent-encoded as UTF-8 (`docs/protocol.md`, "Connecting").
extension ControlCodec {
    /// The upgrade request's header that carries a recorder's `started_by`.
    public static let startedByHeader = "X-Clubroom-Started-By"

    /// The header's value for `peer`: its identity, every byte but letters, digits and `-._~` percent-encoded.
    public static func encodeStartedBy(_ peer: PeerID) -> String {
        GuestHeaders.encodeName(peer.rawValue)
    }

    /// The identity a `started_by` header names; nil when there is none. A value that is not percent-encoded
    /// UTF-8 of an identity (1 to 128 bytes, nothing invisible or that moves the cursor) is refused.
    public static func decodeStartedBy(_ text: String?) throws(ControlDecodeError) -> PeerID? {
        guard let text else { return nil }
        guard text.utf8.count <= 3 * ControlLimits.maxIdentityBytes, let identity = PercentEncoding.decode(text) else {
            throw ControlDecodeError(.badRequest, "\"started_by\" is not a percent-encoded identity")
        }
        guard !identity.isEmpty, identity.utf8.count <= ControlLimits.maxIdentityBytes else {
            throw ControlDecodeError(
                .badRequest, "\"started_by\" must name an identity of 1 to \(ControlLimits.maxIdentityBytes) bytes")
        }
        guard !identity.unicodeScalars.contains(where: DisplayName.isInvisibleControl) else {
            throw ControlDecodeError(.badRequest, "\"started_by\" holds control characters")
        }
        return PeerID(identity)
    }
}
