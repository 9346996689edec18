import Testing

@testable import RoomProtocol

/// A stand-in for HMAC-SHA256 so these tests stay free of C: a keyed FNV-1a expanded to 32 bytes. It is not a MAC,
/// but any change to the message or key changes its output, which is all the codec's logic relies on.
func fakeAuthenticator(key: String) -> TokenAuthenticator {
    let keyBytes = Array(key.utf8)
    return { message in
        var output: [UInt8] = []
        for lane in UInt64(0)..<4 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 &+ lane
            for byte in keyBytes + [0] + message {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            for shift in stride(from: 0, to: 64, by: 8) {
                output.append(UInt8(truncatingIfNeeded: hash >> UInt64(shift)))
            }
        }
        return output
    }
}

let now: Int64 = 1_700_000_000
let knownRoles: Set<String> = ["host", "moderator", "speaker", "audience"]

func sampleClaims(room: String = "lobby", role: String = "speaker") -> TokenClaims {
    TokenClaims(
        subject: "ana", name: "Ana Lima", room: room, role: role, expiresAt: now + 3600, notBefore: now,
        issuedAt: now)
}

func sign(_ claims: TokenClaims, key: String = "secret") -> String {
    try! RoomToken.sign(claims, authenticator: fakeAuthenticator(key: key))
}

/// Builds a token from raw header and claims JSON, signed with the fake authenticator.
func rawToken(header: String, claims: String, key: String = "secret") -> String {
    let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
    return input + "." + Base64URL.encode(fakeAuthenticator(key: key)(Array(input.utf8))!)
}

func verify(
    _ token: String, room: String = "lobby", at time: Int64 = now, key: String = "secret"
) throws(TokenError)
    -> TokenClaims
{
    try RoomToken.verify(
        token, room: room, now: time, isKnownRole: { knownRoles.contains($0) },
        authenticator: fakeAuthenticator(key: key))
}

/// The `TokenError` that `body` throws, or `nil` when it succeeds or throws something else.
func refusal(_ body: () throws -> TokenClaims) -> TokenError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? TokenError
    }
}

let validClaimsJSON =
    #"{"sub":"ana","name":"Ana","room":"lobby","role":"speaker","nbf":1700000000,"exp":1700003600}"#

@Suite struct TokenCodecTests {
    @Test func signedTokenVerifiesToTheSameClaims() throws {
        let claims = sampleClaims()
        let token = sign(claims)
        #expect(try verify(token) == claims)
    }

    @Test func headerIsTheFixedHS256Header() {
        let token = sign(sampleClaims())
        #expect(token.split(separator: ".").first == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9")
    }

    @Test func claimsJSONHasAFixedMemberOrder() {
        let claims = TokenClaims(
            subject: "a\"b", name: "Zoë\n", room: "r", role: "host", expiresAt: 20, notBefore: 10, issuedAt: 5)
        #expect(
            claims.json == #"{"sub":"a\"b","name":"Zoë\n","room":"r","role":"host","iat":5,"nbf":10,"exp":20}"#)
    }

    @Test func missingNameReadsAsTheIdentity() throws {
        let token = rawToken(
            header: #"{"alg":"HS256"}"#,
            claims: #"{"sub":"bo","room":"lobby","role":"audience","nbf":1700000000,"exp":1700003600}"#)
        let claims = try verify(token)
        #expect(claims.name == "bo")
        #expect(claims.issuedAt == nil)
    }

    @Test func unknownClaimsAreIgnoredAndFractionalTimesRoundDown() throws {
        let token = rawToken(
            header: #"{"typ":"jwt","alg":"HS256"}"#,
            claims:
                #"{"iss":"x","aud":["a"],"sub":"bo","room":"lobby","role":"host","nbf":1.7e9,"exp":1700003600.9}"#)
        let claims = try verify(token)
        #expect(claims.notBefore == 1_700_000_000)
        #expect(claims.expiresAt == 1_700_003_600)
    }

    @Test func tamperedPayloadIsABadSignature() {
        let token = sign(sampleClaims(role: "audience"))
        let parts = token.split(separator: ".")
        let forged = Base64URL.encode(Array(sampleClaims(role: "host").json.utf8))
        #expect(refusal { try verify(parts[0] + "." + forged + "." + parts[2]) } == .badSignature)
    }

    @Test func tamperedSignatureIsABadSignature() {
        let token = sign(sampleClaims())
        var signature = Base64URL.decode(token.split(separator: ".")[2])!
        signature[5] ^= 0x01
        let parts = token.split(separator: ".")
        let forged = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
        #expect(refusal { try verify(forged) } == .badSignature)
    }

    @Test func otherSecretIsABadSignature() {
        #expect(refusal { try verify(sign(sampleClaims()), key: "other") } == .badSignature)
    }

    @Test func truncatedSignatureIsABadSignature() {
        let parts = sign(sampleClaims()).split(separator: ".")
        let short = Base64URL.encode(Base64URL.decode(parts[2])!.dropLast(2))
        #expect(refusal { try verify(parts[0] + "." + parts[1] + "." + short) } == .badSignature)
    }

    @Test func algNoneIsRefusedAsUnsupported() {
        let header = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let claims = Base64URL.encode(Array(validClaimsJSON.utf8))
        #expect(refusal { try verify(header + "." + claims + ".") } == .unsupportedAlgorithm("none"))
    }

    @Test func algHS512IsRefusedAsUnsupported() {
        let token = rawToken(header: #"{"alg":"HS512","typ":"JWT"}"#, claims: validClaimsJSON)
        #expect(refusal { try verify(token) } == .unsupportedAlgorithm("HS512"))
    }

    @Test func missingAlgIsRefusedAsUnsupported() {
        let token = rawToken(header: #"{"typ":"JWT"}"#, claims: validClaimsJSON)
        #expect(refusal { try verify(token) } == .unsupportedAlgorithm(nil))
    }

    @Test func lowerCaseAlgIsRefused() {
        let token = rawToken(header: #"{"alg":"hs256"}"#, claims: validClaimsJSON)
        #expect(refusal { try verify(token) } == .unsupportedAlgorithm("hs256"))
    }

    @Test func headerProblemsAreMalformed() {
        let cases: [(String, String)] = [
            (#"{"alg":256}"#, #"header "alg" is not a string"#),
            (#"{"alg":"HS256","typ":"JWS"}"#, #"header "typ" is not JWT"#),
            (#"{"alg":"HS256","crit":["b64"]}"#, #"header has "crit" extensions, which this server does not support"#),
            (#"["HS256"]"#, "header is not a JSON object"),
            (#"{"alg":"HS256","alg":"none"}"#, #"header is not valid JSON: duplicate key "alg" at byte 15"#),
        ]
        for (header, detail) in cases {
            let token = rawToken(header: header, claims: validClaimsJSON)
            #expect(refusal { try verify(token) } == .malformed(detail), "header \(header)")
        }
    }

    @Test func expiredTokenIsRefusedAfterTheLeeway() throws {
        let token = sign(sampleClaims())
        let expiry = now + 3600
        #expect(try verify(token, at: expiry + RoomToken.defaultLeeway - 1).subject == "ana")
        #expect(
            refusal { try verify(token, at: expiry + RoomToken.defaultLeeway) }
                == .expired(expiresAt: expiry, now: expiry + 30))
    }

    @Test func tokenFromTheFutureIsRefusedBeyondTheLeeway() throws {
        let token = sign(sampleClaims())
        #expect(try verify(token, at: now - RoomToken.defaultLeeway).subject == "ana")
        #expect(refusal { try verify(token, at: now - 31) } == .notYetValid(notBefore: now, now: now - 31))
    }

    @Test func wrongRoomIsRefused() {
        let token = sign(sampleClaims(room: "backstage"))
        #expect(refusal { try verify(token) } == .wrongRoom(tokenRoom: "backstage", requestedRoom: "lobby"))
    }

    @Test func roomMustMatchByteForByte() {
        let token = sign(sampleClaims(room: "cafe\u{301}"))
        #expect(
            refusal { try verify(token, room: "caf\u{E9}") }
                == .wrongRoom(tokenRoom: "cafe\u{301}", requestedRoom: "caf\u{E9}"))
        #expect(throws: Never.self) { try verify(token, room: "cafe\u{301}") }
    }

    @Test func unknownRoleIsRefused() {
        let token = sign(sampleClaims(role: "emperor"))
        #expect(refusal { try verify(token) } == .unknownRole("emperor"))
    }

    @Test func checksRunInTheDocumentedOrder() {
        // Expired, for another room, with an unknown role: the first failing check (exp) is the one reported.
        let claims = TokenClaims(
            subject: "x", name: "x", room: "elsewhere", role: "emperor", expiresAt: now - 100, notBefore: now + 100)
        #expect(refusal { try verify(sign(claims)) } == .expired(expiresAt: now - 100, now: now))
        // A bad signature is reported before anything in the claims, even unreadable claims.
        let unreadable = rawToken(header: #"{"alg":"HS256"}"#, claims: "not json", key: "other")
        #expect(refusal { try verify(unreadable) } == .badSignature)
    }

    @Test func garbageIsMalformed() {
        #expect(refusal { try verify("") } == .malformed("token is empty"))
        #expect(refusal { try verify("hello") } == .malformed("token has 1 parts, not 3"))
        #expect(refusal { try verify("a.b.c.d") } == .malformed("token has 4 parts, not 3"))
        #expect(refusal { try verify("..") } == .malformed("token has an empty header or claims part"))
        #expect(refusal { try verify("e30=.e30.AAAA") } == .malformed("header is not base64url"))
        #expect(refusal { try verify("e30.e3+.AAAA") } == .malformed("claims are not base64url"))
        #expect(refusal { try verify("e30.e30.A") } == .malformed("signature is not base64url"))
        #expect(refusal { try verify("é.e30.AAAA") } == .malformed("header is not base64url"))
        // A combining accent after a dot would join it into one Character; splitting by bytes still sees 3 parts.
        #expect(refusal { try verify("e30.\u{301}e30.AAAA") } == .malformed("claims are not base64url"))
        #expect(
            refusal { try verify("bm90IGpzb24.e30.AAAA") }
                == .malformed("header is not valid JSON: unexpected byte 0x6f at byte 1"))
    }

    @Test func tooLongIsMalformed() {
        let token = String(repeating: "a", count: RoomToken.maximumBytes + 1)
        #expect(refusal { try verify(token) } == .malformed("token is longer than 4096 bytes"))
    }

    @Test func claimTypesAreChecked() {
        let cases: [(String, String)] = [
            (#"{"room":"lobby","role":"host","nbf":1,"exp":1700003600}"#, #"claim "sub" is missing"#),
            (#"{"sub":"","room":"lobby","role":"host","nbf":1,"exp":1700003600}"#, #"claim "sub" is empty"#),
            (#"{"sub":7,"room":"lobby","role":"host","nbf":1,"exp":1700003600}"#, #"claim "sub" is not a string"#),
            (#"{"sub":"a","room":"lobby","role":"host","nbf":1,"exp":"soon"}"#, #"claim "exp" is not a number"#),
            (#"{"sub":"a","room":"lobby","role":"host","nbf":1}"#, #"claim "exp" is missing"#),
            (#"{"sub":"a","room":"lobby","role":"host","exp":1700003600}"#, #"claim "nbf" is missing"#),
            (#"{"sub":"a","room":"lobby","role":null,"nbf":1,"exp":1700003600}"#, #"claim "role" is not a string"#),
            (#"{"sub":"a","room":"lobby","role":"host","nbf":1,"exp":1e300}"#, #"claim "exp" is out of range"#),
            (#"{"sub":"a","room":"lobby","role":"host","nbf":1,"exp":2,"iat":true}"#, #"claim "iat" is not a number"#),
            (
                #"{"sub":"a","sub":"b","room":"lobby","role":"host","nbf":1,"exp":2}"#,
                #"claims are not valid JSON: duplicate key "sub" at byte 11"#
            ),
            (#"[1]"#, "claims are not a JSON object"),
        ]
        for (claims, detail) in cases {
            let token = rawToken(header: #"{"alg":"HS256"}"#, claims: claims)
            #expect(refusal { try verify(token) } == .malformed(detail), "claims \(claims)")
        }
    }

    @Test func overlongClaimIsMalformed() {
        let name = String(repeating: "n", count: TokenClaims.maximumFieldBytes + 1)
        let token = rawToken(
            header: #"{"alg":"HS256"}"#,
            claims: #"{"sub":"a","name":"\#(name)","room":"lobby","role":"host","nbf":1,"exp":1700003600}"#)
        #expect(refusal { try verify(token) } == .malformed(#"claim "name" is longer than 256 bytes"#))
    }

    @Test func everyRefusalHasItsOwnShortCloseReason() {
        let errors: [TokenError] = [
            .malformed("x"), .unsupportedAlgorithm("none"), .badSignature, .expired(expiresAt: 1, now: 2),
            .notYetValid(notBefore: 2, now: 1), .wrongRoom(tokenRoom: "a", requestedRoom: "b"), .unknownRole("x"),
            .invalidIdentity("a\u{1B}"),
        ]
        #expect(Set(errors.map(\.closeReason)).count == errors.count)
        #expect(Set(errors.map(\.code)).count == errors.count)
        #expect(Set(errors.map(\.closeCode)).count == errors.count)
        for error in errors {
            #expect(error.closeReason.utf8.count <= 123, "\(error.code)")
            #expect((4000...4999).contains(error.closeCode))
        }
    }

    /// Everyone names a peer by its identity, on screens and command lines: a character that drives a terminal or
    /// hides in text is refused with its own close code and reason.
    @Test(arguments: [
        "a\u{1B}]0;owned\u{07}", "a\nb", "a\rb", "tab\there", "nul\u{0}", "del\u{7F}", "csi\u{9B}31m",
        "rtl\u{202E}lanA", "iso\u{2066}x", "zero\u{200B}width", "bom\u{FEFF}", "line\u{2028}sep",
    ])
    func identityWithControlCharactersIsRefused(_ identity: String) throws {
        var claims = sampleClaims()
        claims.subject = identity
        let error = try #require(refusal { try verify(sign(claims)) })
        #expect(error == .invalidIdentity(identity))
        #expect(error.code == "token_invalid_identity")
        #expect(error.closeCode == 4008)
        #expect(error.closeReason == "The token's identity contains control characters. Ask the host for a new one.")
        #expect(!error.closeReason.contains(identity))
    }

    @Test func identitiesThatPrintAsTheyReadAreAccepted() throws {
        for identity in ["ana", "Ana Lima", "李小龍", "\u{1F469}\u{200D}\u{1F4BB}", "e\u{301}", "a-b_c.d@e"] {
            var claims = sampleClaims()
            claims.subject = identity
            #expect(try verify(sign(claims)).subject == identity)
        }
    }

    @Test func failingAuthenticatorRefusesInsteadOfAccepting() {
        let token = sign(sampleClaims())
        let result = refusal {
            try RoomToken.verify(
                token, room: "lobby", now: now, isKnownRole: { _ in true }, authenticator: { _ in nil })
        }
        #expect(result == .badSignature)
        #expect(throws: TokenSigningError()) { try RoomToken.sign(sampleClaims(), authenticator: { _ in nil }) }
    }

    @Test func constantTimeEqualCompares() {
        #expect(RoomToken.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!RoomToken.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!RoomToken.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(RoomToken.constantTimeEqual([], []))
    }
}
