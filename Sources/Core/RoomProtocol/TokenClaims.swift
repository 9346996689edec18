import RoomCore
import StrictJSON

/// What a room token says about its bearer: the claims of an HS256 JSON Web Token (RFC 7519).
///
/// Times are NumericDate values: whole seconds since the Unix epoch (not the milliseconds of `Timestamp`).
public struct TokenClaims: Sendable, Equatable {
    /// `sub`: the stable identity of the bearer (a `PeerID`).
    public var subject: String
    /// `name`: the display name. A token without `name` is read with the identity as its name.
    public var name: String
    /// `room`: the one room this token admits to.
    public var room: String
    /// `role`: the role name the bearer joins with, checked against the server's role table.
    public var role: String
    /// `exp`: the first second at which the token is no longer accepted (before the leeway).
    public var expiresAt: Int64
    /// `nbf`: the first second at which the token is accepted (before the leeway).
    public var notBefore: Int64
    /// `iat`: when the token was issued; informational, never checked.
    public var issuedAt: Int64?

    /// Creates claims from their parts.
    public init(
        subject: String, name: String, room: String, role: String, expiresAt: Int64, notBefore: Int64,
        issuedAt: Int64? = nil
    ) {
        self.subject = subject
        self.name = name
        self.room = room
        self.role = role
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.issuedAt = issuedAt
    }

    /// The largest number of UTF-8 bytes accepted in `sub`, `name`, `room` or `role`.
    public static let maximumFieldBytes = 256

    /// The claims as compact JSON, members in a fixed order so the same claims always give the same token.
    public var json: String {
        var members: [(String, JSONValue)] = [
            ("sub", .string(subject)), ("name", .string(name)), ("room", .string(room)), ("role", .string(role)),
        ]
        if let issuedAt {
            members.append(("iat", .integer(issuedAt)))
        }
        members.append(("nbf", .integer(notBefore)))
        members.append(("exp", .integer(expiresAt)))
        return JSONValue.object(JSONObject(members)).encodedString
    }

    /// Whether `identity` may name a peer: it holds no control character (C0, DEL, C1), no line or paragraph
    /// separator, no bidirectional control and no invisible space (`DisplayName.isInvisibleControl`). Everyone
    /// names the peer by it, on screens and on command lines, so it must print as it reads.
    public static func isValidIdentity(_ identity: String) -> Bool {
        identity.unicodeScalars.allSatisfy { !DisplayName.isInvisibleControl($0) }
    }

    /// Token JSON is small and flat; these limits refuse anything a token could not honestly contain.
    static let parser = StrictJSONParser(maxDepth: 16, maxBytes: RoomToken.maximumBytes)

    /// The members of one part of a token, which must be a JSON object; `subject` begins the error's words
    /// ("claims are", "header is").
    static func parseObject(_ bytes: [UInt8], _ subject: String) throws(TokenError) -> JSONObject {
        let value: JSONValue
        do {
            value = try parser.parse(bytes)
        } catch {
            throw .malformed("\(subject) not valid JSON: \(error)")
        }
        guard case .object(let members) = value else { throw .malformed("\(subject) not a JSON object") }
        return members
    }

    /// Reads claims from the JSON of a token's payload, checking every claim's type.
    ///
    /// `sub`, `room`, `role`, `exp` and `nbf` are required; `name` and `iat` are optional. Claims this program does
    /// not use (`iss`, `aud`, `jti`, ...) are allowed and ignored. Duplicate member names are refused.
    public static func parse(json bytes: [UInt8]) throws(TokenError) -> TokenClaims {
        let members = try parseObject(bytes, "claims are")
        let subject = try requiredText("sub", in: members)
        guard !subject.isEmpty else {
            throw .malformed("claim \"sub\" is empty")
        }
        guard isValidIdentity(subject) else {
            throw .invalidIdentity(subject)
        }
        let room = try requiredText("room", in: members)
        let role = try requiredText("role", in: members)
        let name = try optionalText("name", in: members) ?? subject
        let expiresAt = try time("exp", in: members)
        let notBefore = try time("nbf", in: members)
        let issuedAt = members["iat"] == nil ? nil : try time("iat", in: members)
        return TokenClaims(
            subject: subject, name: name, room: room, role: role, expiresAt: expiresAt, notBefore: notBefore,
            issuedAt: issuedAt)
    }

    private static func requiredText(
        _ key: String, in members: JSONObject
    ) throws(TokenError)
        -> String
    {
        guard let text = try optionalText(key, in: members) else {
            throw .malformed("claim \"\(key)\" is missing")
        }
        return text
    }

    private static func optionalText(
        _ key: String, in members: JSONObject
    ) throws(TokenError)
        -> String?
    {
        guard let member = members[key] else {
            return nil
        }
        guard case .string(let text) = member else {
            throw .malformed("claim \"\(key)\" is not a string")
        }
        guard text.utf8.count <= maximumFieldBytes else {
            throw .malformed("claim \"\(key)\" is longer than \(maximumFieldBytes) bytes")
        }
        return text
    }

    /// Reads a NumericDate. Fractions are allowed by RFC 7519 and rounded down; anything outside ±2^53 is refused.
    private static func time(_ key: String, in members: JSONObject) throws(TokenError) -> Int64 {
        guard let member = members[key] else {
            throw .malformed("claim \"\(key)\" is missing")
        }
        let limit: Int64 = 1 << 53
        switch member {
        case .integer(let whole) where whole.magnitude <= limit.magnitude:
            return whole
        case .double(let real) where real.isFinite && real.magnitude <= Double(limit):
            return Int64(real.rounded(.down))
        case .integer, .double:
            throw .malformed("claim \"\(key)\" is out of range")
        default:
            throw .malformed("claim \"\(key)\" is not a number")
        }
    }
}
