/// Why a room token was refused. Each case has its own code, close code and reason sentence.
///
/// `closeReason` is fixed text, never longer than 123 UTF-8 bytes, so it fits a WebSocket close frame (RFC 6455
/// §5.5: a control frame's payload is at most 125 bytes, two of them the status code). `description` adds the
/// detail for logs; it may contain text from the token and must not be sent back as a close reason.
public enum TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a token we can read: size, structure, base64url, JSON, or a claim of the wrong type.
    case malformed(String)
    /// The header's `alg` is not `HS256`; `nil` when it is missing.
    case unsupportedAlgorithm(String?)
    /// The signature does not match the header and claims under the server's secret.
    case badSignature
    /// `exp` has passed, even allowing the leeway.
    case expired(expiresAt: Int64, now: Int64)
    /// `nbf` is still ahead, even allowing the leeway.
    case notYetValid(notBefore: Int64, now: Int64)
    /// The token admits to a different room.
    case wrongRoom(tokenRoom: String, requestedRoom: String)
    /// The token's role is not in the server's role table.
    case unknownRole(String)
    /// The token names (in its `kid` header) a key that is not this server's: it was made by another server.
    case wrongServer
    /// The identity (`sub`) holds a character that could drive a terminal or hide in a name: a control
    /// character, a line or paragraph separator, a bidirectional control or an invisible space.
    case invalidIdentity(String)

    /// A stable snake_case name for the refusal, for error messages and logs.
    public var code: String {
        switch self {
        case .malformed: "token_malformed"
        case .unsupportedAlgorithm: "token_unsupported_algorithm"
        case .badSignature: "token_bad_signature"
        case .expired: "token_expired"
        case .notYetValid: "token_not_yet_valid"
        case .wrongRoom: "token_wrong_room"
        case .unknownRole: "token_unknown_role"
        case .wrongServer: "token_wrong_server"
        case .invalidIdentity: "token_invalid_identity"
        }
    }

    /// A WebSocket close status in the private-use range (RFC 6455 §7.4.2), one per refusal.
    public var closeCode: UInt16 {
        switch self {
        case .malformed: 4001
        case .unsupportedAlgorithm: 4002
        case .badSignature: 4003
        case .expired: 4004
        case .notYetValid: 4005
        case .wrongRoom: 4006
        case .unknownRole: 4007
        case .wrongServer: 4013
        case .invalidIdentity: 4008
        }
    }

    /// A sentence for the person whose token was refused; at most 123 UTF-8 bytes, and never token text.
    public var closeReason: String {
        switch self {
        case .malformed: "The token could not be read. Ask the host for a new one."
        case .unsupportedAlgorithm: "The token is not signed with HS256, the only algorithm this server accepts."
        case .badSignature: "The token's signature does not match this server's secret."
        case .expired: "The token has expired. Ask the host for a new one."
        case .notYetValid: "The token is not valid yet. Check this computer's clock or wait."
        case .wrongRoom: "The token is for a different room."
        case .unknownRole: "The token names a role this server does not know."
        case .wrongServer: "The invite is for another Clubroom server."
        case .invalidIdentity: "The token's identity contains control characters. Ask the host for a new one."
        }
    }

    public var description: String {
        switch self {
        case .malformed(let detail):
            "malformed token: \(Self.capped(detail))"
        case .unsupportedAlgorithm(let algorithm):
            if let algorithm {
                "unsupported token algorithm \(Self.quoted(algorithm)) (only HS256 is accepted)"
            } else {
                "token header has no \"alg\" (only HS256 is accepted)"
            }
        case .badSignature:
            "token signature does not match"
        case .expired(let expiresAt, let now):
            "token expired at \(expiresAt), now \(now) (Unix seconds)"
        case .notYetValid(let notBefore, let now):
            "token not valid before \(notBefore), now \(now) (Unix seconds)"
        case .wrongRoom(let tokenRoom, let requestedRoom):
            "token is for room \(Self.quoted(tokenRoom)), not \(Self.quoted(requestedRoom))"
        case .unknownRole(let role):
            "token role \(Self.quoted(role)) is not in the role table"
        case .wrongServer:
            "token was made by another server (its key id is not this server's)"
        case .invalidIdentity(let identity):
            "token identity \(Self.quoted(identity)) contains control characters"
        }
    }

    /// The most characters of text from a token a description quotes.
    public static let quotedLimit = 64

    /// Text from a token as a description shows it: in quotes, with control characters escaped, and cut to
    /// `quotedLimit` characters (marked with `…`), so that whoever made the token cannot write a line of their own
    /// into a log, drive the terminal that reads it, or fill it.
    public static func quoted(_ text: String) -> String {
        let kept = text.prefix(quotedLimit)
        let escaped = String(kept).debugDescription.unicodeScalars.map { scalar -> String in
            // debugDescription escapes quotes, backslashes and C0 controls; what it leaves is escaped here.
            switch scalar.value {
            case 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069:
                "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: String(scalar)
            }
        }.joined()
        return kept.count < text.count ? escaped + "…" : escaped
    }

    /// A longer detail (a parser's message, which quotes the token's text itself) cut to a few times the limit.
    static func capped(_ text: String) -> String {
        text.count <= 4 * quotedLimit ? text : String(text.prefix(4 * quotedLimit)) + "…"
    }
}
