import Crypto
import RoomProtocol

/// What a server's secret says about the server without giving the secret away: the id of its signing key,
/// which invites carry so another server can tell they are not its own, and the identities of invite holders.
public struct ServerKeys: Sendable, Equatable {
    /// The `kid` invites carry: the first 9 bytes of HMAC-SHA256(secret, "clubroom key id v1"), base64url.
    public let keyID: String
    private let secret: TokenSecret

    public init(secret: TokenSecret) {
        self.secret = secret
        let tag = HMACSHA256.sign(key: secret.bytes, message: Array("clubroom key id v1".utf8)) ?? []
        keyID = Base64URL.encode(tag.prefix(9))
    }

    /// The identity of an invite holder whose client sent `key`: `guest-` and 16 hex digits of
    /// HMAC-SHA256(secret, "clubroom guest v1:" + key). Only the holder of the key can claim it; the same key on
    /// another server (another secret) gives an unrelated identity.
    public func guestIdentity(key: [UInt8]) -> String? {
        guard let tag = HMACSHA256.sign(key: secret.bytes, message: Array("clubroom guest v1:".utf8) + key) else {
            return nil
        }
        let digits = Array("0123456789abcdef")
        return "guest-" + tag.prefix(8).map { String(digits[Int($0 >> 4)]) + String(digits[Int($0 & 0xF)]) }.joined()
    }
}

extension TokenIssuer {
    /// The compact HS256 token for an invite, with this server's key id in its header.
    public func issueInvite(_ claims: InviteClaims) throws(TokenSigningError) -> String {
        let key = secret.bytes
        return try RoomToken.signInvite(claims, keyID: ServerKeys(secret: secret).keyID) {
            HMACSHA256.sign(key: key, message: $0)
        }
    }

    /// An invite for `role` (in `room`, or the whole lobby when nil), valid from `now` for `ttl` seconds, with a
    /// random id.
    public func invite(role: String, room: String?, ttl: Int64, now: Int64) throws(TokenMintError) -> String {
        try signedInvite(role: role, room: room, ttl: ttl, now: now).token
    }

    /// As `invite`, with the claims it carries (its id, for the link registry).
    public func signedInvite(
        role: String, room: String?, ttl: Int64, now: Int64, creator: String? = nil, maxUses: Int64? = nil
    ) throws(TokenMintError) -> (token: String, claims: InviteClaims) {
        let id: [UInt8]
        do {
            id = try SecureRandom.bytes(8)
        } catch {
            throw .signing
        }
        let latest: Int64 = 1 << 53
        let claims = InviteClaims(
            role: role, room: room, id: Base64URL.encode(id), expiresAt: ttl > latest - now ? latest : now + ttl,
            notBefore: now, issuedAt: now, creator: creator, maxUses: maxUses)
        do {
            return (try issueInvite(claims), claims)
        } catch {
            throw .signing
        }
    }
}

extension TokenVerifier {
    /// An issuer with the same secret, for the invites a server makes itself (`/link`).
    public var issuer: TokenIssuer { TokenIssuer(secret: secret) }

    /// The server's key id and identity derivation.
    public var keys: ServerKeys { ServerKeys(secret: secret) }

    /// A room token or an invite, checked at `now` (Unix seconds); see `RoomToken.verifyCredential`.
    public func verifyCredential(
        _ token: String, now: Int64, isKnownRole: (String) -> Bool
    ) throws(TokenError) -> TokenCredential {
        let key = secret.bytes
        return try RoomToken.verifyCredential(
            token, keyID: keys.keyID, now: now, leeway: leeway, isKnownRole: isKnownRole,
            authenticator: { HMACSHA256.sign(key: key, message: $0) })
    }
}

extension TokenCommandCore {
    /// Makes an invite for `role`, to `room` or (nil) to the server's lobby, valid from `now` for `ttl` seconds,
    /// signed with the secret in `secretFile`. A missing secret file is an error naming it, as for `mint`: a new
    /// secret would sign links no running server accepts.
    public static func mintInvite(
        room: String?, role: String, ttl: Int64, secretFile: String, now: Int64, maxUses: Int64? = nil
    ) throws(TokenMintError) -> String {
        guard !role.isEmpty else { throw .empty("--role") }
        if let room, room.isEmpty { throw .empty("--room") }
        for (option, value) in [("--room", room ?? ""), ("--role", role)]
        where value.utf8.count > TokenClaims.maximumFieldBytes {
            throw .tooLong(option)
        }
        guard ttl > 0 else { throw .nonPositiveLifetime(ttl) }
        let secret: TokenSecret
        do {
            secret = try SecretFile.load(at: secretFile)
        } catch {
            throw .secretFile(error)
        }
        return try TokenIssuer(secret: secret).signedInvite(
            role: role, room: room, ttl: ttl, now: now, maxUses: maxUses
        ).token
    }
}
