import StrictJSON

/// HMAC-SHA256 of a message under the server's secret, supplied by an adapter (the `Crypto` target) so that this
/// pure target never links a C library. Returns `nil` if the underlying library fails.
public typealias TokenAuthenticator = (_ message: [UInt8]) -> [UInt8]?

/// A signing failure: the injected authenticator returned nothing.
public struct TokenSigningError: Error, Sendable, Equatable, CustomStringConvertible {
    public init() {}
    public var description: String { "could not compute the token's HMAC-SHA256 signature" }
}

/// Room tokens: JSON Web Tokens (RFC 7519) in compact JWS form (RFC 7515), signed with HMAC-SHA256 only.
///
/// Verification runs in this order, and stops at the first refusal:
/// 1. size (at most `maximumBytes`), exactly three dot-separated parts, each canonical base64url: `malformed`;
/// 2. the header is a JSON object whose `alg` is `HS256`: `unsupportedAlgorithm` (also for `none` or no `alg`);
///    a present `typ` must be `JWT` and a `crit` header is refused: `malformed`;
/// 3. the signature, compared in constant time: `badSignature`; nothing in the claims is read before this;
/// 4. the claims' JSON and types: `malformed`; an identity with control characters: `invalidIdentity`;
/// 5. `exp`: `expired`; 6. `nbf`: `notYetValid` (both with `leeway` seconds of allowance for clock skew);
/// 7. `room` equals the room asked for: `wrongRoom`; 8. `role` is known: `unknownRole`.
public enum RoomToken {
    /// The largest token accepted, in bytes. Ours are a few hundred bytes; the bound keeps hostile input cheap.
    public static let maximumBytes = 4096

    /// Seconds of clock difference allowed between the issuer and the verifier, on both `exp` and `nbf`.
    public static let defaultLeeway: Int64 = 30

    /// The only header this program writes.
    public static let headerJSON = #"{"alg":"HS256","typ":"JWT"}"#

    /// Length of an HMAC-SHA256 tag in bytes.
    public static let signatureBytes = 32

    /// Signs `claims` and returns the compact token `header.claims.signature`.
    public static func sign(
        _ claims: TokenClaims, authenticator: TokenAuthenticator
    ) throws(TokenSigningError)
        -> String
    {
        let signingInput =
            Base64URL.encode(Array(headerJSON.utf8)) + "." + Base64URL.encode(Array(claims.json.utf8))
        guard let signature = authenticator(Array(signingInput.utf8)), signature.count == signatureBytes else {
            throw TokenSigningError()
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies `token` for `room` at `now` (Unix seconds) and returns its claims.
    ///
    /// - Parameters:
    ///   - isKnownRole: answers whether a role name is in the server's role table.
    ///   - leeway: seconds of clock skew tolerated; `exp` is accepted until `exp + leeway` (exclusive) and `nbf`
    ///     from `nbf - leeway` (inclusive).
    ///   - authenticator: HMAC-SHA256 under the server's secret. If it fails, the token is refused as
    ///     `badSignature`, so a broken library never lets a token through.
    public static func verify(
        _ token: String, room: String, now: Int64, leeway: Int64 = defaultLeeway,
        isKnownRole: (String) -> Bool, authenticator: TokenAuthenticator
    ) throws(TokenError) -> TokenClaims {
        let parts = try split(token)
        try checkHeader(parts.header)
        let signingInput = Array(token.utf8.prefix(parts.signedBytes))
        guard parts.signature.count == signatureBytes, let expected = authenticator(signingInput),
            constantTimeEqual(expected, parts.signature)
        else {
            throw .badSignature
        }
        let claims = try TokenClaims.parse(json: parts.claims)
        if now >= claims.expiresAt.addingClamped(leeway) {
            throw .expired(expiresAt: claims.expiresAt, now: now)
        }
        if now.addingClamped(leeway) < claims.notBefore {
            throw .notYetValid(notBefore: claims.notBefore, now: now)
        }
        // Bytes, not String equality: Swift's `==` treats canonically equivalent spellings as equal, but the
        // server names rooms by their exact text.
        if !claims.room.utf8.elementsEqual(room.utf8) {
            throw .wrongRoom(tokenRoom: claims.room, requestedRoom: room)
        }
        if !isKnownRole(claims.role) {
            throw .unknownRole(claims.role)
        }
        return claims
    }

    /// Compares two byte strings in time that depends only on their lengths, so that a forger learns nothing
    /// from how long a refusal took. The length of an HMAC tag is public.
    public static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else {
            return false
        }
        var difference: UInt8 = 0
        for index in left.indices {
            difference |= left[index] ^ right[index]
        }
        return difference == 0
    }

    /// The decoded parts of a token, and how many bytes at its start are signed (`header.claims`).
    struct Parts {
        var header: [UInt8]
        var claims: [UInt8]
        var signature: [UInt8]
        var signedBytes: Int
    }

    /// Splits at the byte level, so that no Unicode normalisation or grapheme rule can change where a part ends.
    static func split(_ token: String) throws(TokenError) -> Parts {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumBytes else {
            throw .malformed("token is longer than \(maximumBytes) bytes")
        }
        guard !bytes.isEmpty else {
            throw .malformed("token is empty")
        }
        let pieces = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard pieces.count == 3 else {
            throw .malformed("token has \(pieces.count) parts, not 3")
        }
        guard !pieces[0].isEmpty, !pieces[1].isEmpty else {
            throw .malformed("token has an empty header or claims part")
        }
        guard let header = Base64URL.decode(utf8: pieces[0]) else {
            throw .malformed("header is not base64url")
        }
        guard let claims = Base64URL.decode(utf8: pieces[1]) else {
            throw .malformed("claims are not base64url")
        }
        guard let signature = Base64URL.decode(utf8: pieces[2]) else {
            throw .malformed("signature is not base64url")
        }
        return Parts(
            header: header, claims: claims, signature: signature, signedBytes: pieces[0].count + 1 + pieces[1].count)
    }

    static func checkHeader(_ bytes: [UInt8]) throws(TokenError) {
        _ = try readHeader(bytes)
    }

    /// Checks the header as `checkHeader` does and returns its members, for the key id an invite carries.
    static func readHeader(_ bytes: [UInt8]) throws(TokenError) -> JSONObject {
        let members = try TokenClaims.parseObject(bytes, "header is")
        switch members["alg"] {
        case .none:
            throw .unsupportedAlgorithm(nil)
        case .string(let algorithm)?:
            guard algorithm == "HS256" else {
                throw .unsupportedAlgorithm(String(algorithm.prefix(32)))
            }
        case _?:
            throw .malformed("header \"alg\" is not a string")
        }
        switch members["typ"] {
        case .none:
            break
        case .string(let type)?:
            guard type.uppercased() == "JWT" else {
                throw .malformed("header \"typ\" is not JWT")
            }
        case _?:
            throw .malformed("header \"typ\" is not a string")
        }
        if members["crit"] != nil {
            throw .malformed("header has \"crit\" extensions, which this server does not support")
        }
        return members
    }
}

extension Int64 {
    func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        if overflow {
            return other > 0 ? .max : .min
        }
        return sum
    }
}
