import Platform
import StrictJSON

/// What an invite says: a token that admits whoever holds it, not one person, in one role, to one room (a room
/// invite) or to the server's lobby and any room listed there (a server invite). See `docs/tokens.md`.
///
/// An invite carries no identity: each holder's client sends a key of its own, from which the server derives
/// the holder's identity, so two people who paste the same link are two people.
public struct InviteClaims: Sendable, Equatable {
    /// The `use` claim that marks a token as an invite.
    public static let use = "invite"

    /// `role`: the role holders join with.
    public var role: String
    /// `room`: the one room a room invite admits to; nil for a server invite.
    public var room: String?
    /// `jti`: the invite's own id, so two invites made in the same second differ (and logs can name one).
    public var id: String
    /// `exp`, `nbf`, `iat`: as a room token's, in Unix seconds.
    public var expiresAt: Int64
    public var notBefore: Int64
    public var issuedAt: Int64?
    /// `by`: the identity of the person who made it in a room (`/link`); nil for the operator's
    /// (`clubroom invite`). Their links are withdrawn when they are lowered or removed.
    public var creator: String?
    /// `max`: how many identities it may admit; nil for no limit.
    public var maxUses: Int64?

    public init(
        role: String, room: String?, id: String, expiresAt: Int64, notBefore: Int64, issuedAt: Int64? = nil,
        creator: String? = nil, maxUses: Int64? = nil
    ) {
        self.creator = creator
        self.maxUses = maxUses
        self.role = role
        self.room = room
        self.id = id
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.issuedAt = issuedAt
    }

    /// The claims as compact JSON, members in a fixed order.
    public var json: String {
        var members: [(String, JSONValue)] = [("use", .string(Self.use)), ("role", .string(role))]
        if let room { members.append(("room", .string(room))) }
        members.append(("jti", .string(id)))
        if let creator { members.append(("by", .string(creator))) }
        if let maxUses { members.append(("max", .integer(maxUses))) }
        if let issuedAt { members.append(("iat", .integer(issuedAt))) }
        members.append(("nbf", .integer(notBefore)))
        members.append(("exp", .integer(expiresAt)))
        return JSONValue.object(JSONObject(members)).encodedString
    }
}

/// A verified token: a room token for one identity, or an invite.
public enum TokenCredential: Sendable, Equatable {
    case person(TokenClaims)
    case invite(InviteClaims)

    /// The role it admits with.
    public var role: String {
        switch self {
        case .person(let claims): claims.role
        case .invite(let claims): claims.role
        }
    }
}

extension RoomToken {
    /// The header of an invite: the usual one and the id of the key that signed it (`kid`, RFC 7515 §4.1.4),
    /// so that a server can tell an invite made elsewhere from a forged one.
    public static func inviteHeaderJSON(keyID: String) -> String {
        JSONValue.object(JSONObject([("alg", .string("HS256")), ("typ", .string("JWT")), ("kid", .string(keyID))]))
            .encodedString
    }

    /// Signs an invite under the key `keyID` names.
    public static func signInvite(
        _ claims: InviteClaims, keyID: String, authenticator: TokenAuthenticator
    ) throws(TokenSigningError) -> String {
        let signingInput =
            Base64URL.encode(Array(inviteHeaderJSON(keyID: keyID).utf8)) + "."
            + Base64URL.encode(Array(claims.json.utf8))
        guard let signature = authenticator(Array(signingInput.utf8)), signature.count == signatureBytes else {
            throw TokenSigningError()
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Verifies a room token or an invite at `now` (Unix seconds), in the order of `verify`, with one check more:
    /// a header `kid` that is not `keyID` is `wrongServer`, before the signature is checked. The room is not
    /// checked here: what a credential may open depends on where it is used (the caller decides).
    public static func verifyCredential(
        _ token: String, keyID: String, now: Int64, leeway: Int64 = defaultLeeway, isKnownRole: (String) -> Bool,
        authenticator: TokenAuthenticator
    ) throws(TokenError) -> TokenCredential {
        let parts = try split(token)
        let header = try readHeader(parts.header)
        switch header["kid"] {
        case .none: break
        case .string(let kid)?: if kid != keyID { throw .wrongServer }
        case _?: throw .malformed("header \"kid\" is not a string")
        }
        let signingInput = Array(token.utf8.prefix(parts.signedBytes))
        guard parts.signature.count == signatureBytes, let expected = authenticator(signingInput),
            constantTimeEqual(expected, parts.signature)
        else {
            throw .badSignature
        }
        let credential = try readCredential(parts.claims)
        let (expiresAt, notBefore): (Int64, Int64) =
            switch credential {
            case .person(let claims): (claims.expiresAt, claims.notBefore)
            case .invite(let claims): (claims.expiresAt, claims.notBefore)
            }
        if now >= expiresAt.addingClamped(leeway) { throw .expired(expiresAt: expiresAt, now: now) }
        if now.addingClamped(leeway) < notBefore { throw .notYetValid(notBefore: notBefore, now: now) }
        if !isKnownRole(credential.role) { throw .unknownRole(credential.role) }
        return credential
    }

    /// The claims of a verified token: an invite when its `use` is `invite`, else a room token.
    static func readCredential(_ bytes: [UInt8]) throws(TokenError) -> TokenCredential {
        let members = try TokenClaims.parseObject(bytes, "claims are")
        switch members["use"] {
        case .none:
            return .person(try TokenClaims.parse(json: bytes))
        case .string(InviteClaims.use)?:
            break
        case _?:
            throw .malformed("claim \"use\" is not \"invite\"")
        }
        func text(_ key: String) throws(TokenError) -> String? {
            guard let member = members[key] else { return nil }
            guard case .string(let text) = member, text.utf8.count <= TokenClaims.maximumFieldBytes else {
                throw .malformed("claim \"\(key)\" is not a string of at most \(TokenClaims.maximumFieldBytes) bytes")
            }
            return text
        }
        func time(_ key: String) throws(TokenError) -> Int64? {
            switch members[key] {
            case .none: return nil
            case .integer(let whole)? where whole.magnitude <= (Int64(1) << 53).magnitude: return whole
            case .double(let real)? where real.isFinite && real.magnitude <= Double(Int64(1) << 53):
                return Int64(real.rounded(.down))
            default: throw .malformed("claim \"\(key)\" is not a time")
            }
        }
        guard let role = try text("role") else { throw .malformed("claim \"role\" is missing") }
        guard let expiresAt = try time("exp") else { throw .malformed("claim \"exp\" is missing") }
        guard let notBefore = try time("nbf") else { throw .malformed("claim \"nbf\" is missing") }
        if members["sub"] != nil { throw .malformed("an invite names no one: it has a \"sub\" claim") }
        let maxUses: Int64?
        switch members["max"] {
        case .none: maxUses = nil
        case .integer(let count)? where count > 0: maxUses = count
        default: throw .malformed("claim \"max\" is not a positive whole number")
        }
        return .invite(
            InviteClaims(
                role: role, room: try text("room"), id: try text("jti") ?? "", expiresAt: expiresAt,
                notBefore: notBefore, issuedAt: try time("iat"), creator: try text("by"), maxUses: maxUses))
    }
}

/// What an invite holder's client says about itself in the upgrade request: its key (from which the server
/// derives the holder's identity) and the name it wants to be shown with.
public enum GuestHeaders {
    /// The key: 32 random bytes in base64url without padding (43 characters), kept by the client.
    public static let key = "X-Clubroom-Guest"
    /// The display name, percent-encoded UTF-8.
    public static let name = "X-Clubroom-Name"
    /// The length of a key, in bytes.
    public static let keyBytes = 32

    /// The key's bytes when `text` is exactly a key (43 canonical base64url characters).
    public static func decodeKey(_ text: String?) -> [UInt8]? {
        guard let text, text.utf8.count == 43, let bytes = Base64URL.decode(utf8: Array(text.utf8)),
            bytes.count == keyBytes
        else { return nil }
        return bytes
    }

    /// A name as the header carries it: UTF-8, every byte but letters, digits and `-._~` percent-encoded.
    public static func encodeName(_ name: String) -> String {
        var text = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                text += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
            }
        }
        return text
    }

    /// The name from the header, or nil when it is not percent-encoded UTF-8 (at most 1 KiB of it).
    public static func decodeName(_ text: String?) -> String? {
        guard let text, text.utf8.count <= 1024 else { return nil }
        return PercentEncoding.decode(text)
    }
}

extension RoomToken {
    /// Whether a token says it is an invite, read without checking it (the server checks): a client uses it only
    /// to know whether to send its guest key.
    public static func looksLikeInvite(_ token: String) -> Bool {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let claims = Base64URL.decode(utf8: parts[1]),
            case .object(let members)? = try? TokenClaims.parser.parse(claims)
        else { return false }
        return members["use"] == .string(InviteClaims.use)
    }
}
