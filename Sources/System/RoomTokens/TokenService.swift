import Crypto
import RoomProtocol

/// Signs room tokens with the server's secret, joining `RoomToken` to OpenSSL's HMAC.
public struct TokenIssuer: Sendable {
    let secret: TokenSecret

    /// An issuer signing with `secret`.
    public init(secret: TokenSecret) {
        self.secret = secret
    }

    /// The compact HS256 token for `claims`.
    public func issue(_ claims: TokenClaims) throws(TokenSigningError) -> String {
        let key = secret.bytes
        return try RoomToken.sign(claims) { HMACSHA256.sign(key: key, message: $0) }
    }
}

/// Verifies room tokens against the server's secret; see `RoomToken.verify` for the order of checks.
public struct TokenVerifier: Sendable {
    let secret: TokenSecret
    /// Seconds of clock skew tolerated on `exp` and `nbf`.
    public let leeway: Int64

    /// A verifier checking signatures against `secret`.
    public init(secret: TokenSecret, leeway: Int64 = RoomToken.defaultLeeway) {
        self.secret = secret
        self.leeway = leeway
    }

    /// The claims of `token` if it admits to `room` at `now` (Unix seconds) with a role `isKnownRole` accepts.
    public func verify(
        _ token: String, room: String, now: Int64, isKnownRole: (String) -> Bool
    ) throws(TokenError)
        -> TokenClaims
    {
        let key = secret.bytes
        return try RoomToken.verify(
            token, room: room, now: now, leeway: leeway, isKnownRole: isKnownRole,
            authenticator: { HMACSHA256.sign(key: key, message: $0) })
    }
}

/// Why `clubroom token` could not make a token.
public enum TokenMintError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A required value is empty; the associated value names the option.
    case empty(String)
    /// A value is longer than `TokenClaims.maximumFieldBytes`.
    case tooLong(String)
    /// The identity holds a control character (see `TokenClaims.isValidIdentity`).
    case controlCharacters(String)
    /// The lifetime is zero or negative.
    case nonPositiveLifetime(Int64)
    /// The secret file could not be used.
    case secretFile(SecretFileError)
    /// OpenSSL failed to sign.
    case signing

    public var description: String {
        switch self {
        case .empty(let option): "\(option) must not be empty"
        case .tooLong(let option): "\(option) is longer than \(TokenClaims.maximumFieldBytes) bytes"
        case .controlCharacters(let option):
            "\(option) must not contain control characters, line breaks, bidirectional controls or invisible spaces"
        case .nonPositiveLifetime(let seconds): "the lifetime must be positive, not \(seconds) s"
        case .secretFile(let error): error.description
        case .signing: TokenSigningError().description
        }
    }
}

/// The work behind `clubroom token`, kept out of the executable so it can be tested.
public enum TokenCommandCore {
    /// Makes a token for `identity` in `room` with `role`, valid from `now` for `ttl` seconds.
    ///
    /// - Parameters:
    ///   - name: the display name; `nil` uses the identity.
    ///   - ttl: lifetime in seconds (`exp = now + ttl`); `nbf` and `iat` are `now`.
    ///   - secretFile: the server's secret file; a missing one is an error naming it (a new secret would sign
    ///     tokens no running server accepts).
    ///   - now: the current time in Unix seconds.
    /// The role is not checked here; the caller checks it against the role table it will serve with.
    public static func mint(
        room: String, identity: String, name: String?, role: String, ttl: Int64, secretFile: String, now: Int64
    ) throws(TokenMintError) -> String {
        for (option, value) in [("--room", room), ("--identity", identity), ("--role", role)] {
            guard !value.isEmpty else {
                throw .empty(option)
            }
        }
        for (option, value) in [("--room", room), ("--identity", identity), ("--role", role), ("--name", name ?? "")]
        where value.utf8.count > TokenClaims.maximumFieldBytes {
            throw .tooLong(option)
        }
        guard TokenClaims.isValidIdentity(identity) else {
            throw .controlCharacters("--identity")
        }
        guard ttl > 0 else {
            throw .nonPositiveLifetime(ttl)
        }
        let secret: TokenSecret
        do {
            secret = try SecretFile.load(at: secretFile)
        } catch {
            throw .secretFile(error)
        }
        // NumericDate values beyond 2^53 are refused by verifiers (and lose precision in JSON readers elsewhere).
        let latest: Int64 = 1 << 53
        let expiresAt = ttl > latest - now ? latest : now + ttl
        let claims = TokenClaims(
            subject: identity, name: name ?? identity, room: room, role: role, expiresAt: expiresAt,
            notBefore: now, issuedAt: now)
        do {
            return try TokenIssuer(secret: secret).issue(claims)
        } catch {
            throw .signing
        }
    }
}
