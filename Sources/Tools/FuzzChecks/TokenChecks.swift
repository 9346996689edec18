import Crypto
import RoomCore
import RoomProtocol

/// Room tokens as the server reads them: base64url, the claims' JSON, and the whole verification, with the real
/// HMAC-SHA256 of libcrypto under a fixed secret.
enum TokenChecks {
    static let secret = Array("the fuzzing secret, not a real one".utf8)
    static let room = "lobby"
    static let roles: Set<String> = ["host", "moderator", "speaker", "audience"]
    /// The moment every verification happens at, in Unix seconds.
    static let now: Int64 = 1_700_000_000

    static func authenticator(_ message: [UInt8]) -> [UInt8]? {
        HMACSHA256.sign(key: secret, message: message)
    }

    static func verify(_ token: String) throws(TokenError) -> TokenClaims {
        try RoomToken.verify(
            token, room: room, now: now, isKnownRole: { roles.contains($0) }, authenticator: authenticator)
    }

    /// Input: a byte choosing which byte of a signed token to change, one for its new value, then bytes read as
    /// base64url, as claims JSON and as a token.
    static func token(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let position = Int(choices.uint16())
        let replacement = choices.byte()
        let data = choices.rest

        if let decoded = Base64URL.decode(utf8: data) {
            try expect(
                Array(Base64URL.encode(decoded).utf8) == data, "base64url \(data) decodes but is not canonical")
        }
        try expect(Base64URL.decode(Base64URL.encode(data)) == data, "base64url of \(data.count) bytes does not decode")

        if let text = String(validating: data, as: UTF8.self) {
            switch Result(catching: { () throws(TokenError) in try verify(text) }) {
            case .success(let claims):
                try checkAccepted(claims)
                let resigned = try sign(claims)
                try expect((try? verify(resigned)) == claims, "re-signed claims \(claims) do not verify the same")
            case .failure(let error):
                try expect(
                    !error.closeReason.isEmpty && error.closeReason.utf8.count <= 123, "close reason of \(error)")
                try expect((4001...4008).contains(error.closeCode), "close code \(error.closeCode) for \(error)")
            }
        }

        guard let claims = try? TokenClaims.parse(json: data) else { return }
        try checkClaims(claims)
        let reparsed = try? TokenClaims.parse(json: Array(claims.json.utf8))
        try expect(
            reparsed == claims,
            "claims \(claims) written as \(claims.json) read back as \(String(describing: reparsed))")

        // The same claims for this room, signed, verify to themselves; a token with any byte changed is refused.
        var valid = claims
        valid.room = room
        valid.role = roles.sorted()[position % roles.count]
        valid.notBefore = now - 10
        valid.expiresAt = now + 3600
        let token = try sign(valid)
        let verified = try? verify(token)
        try expect(verified == valid, "signed claims \(valid) verify as \(String(describing: verified))")
        var bytes = Array(token.utf8)
        let index = position % bytes.count
        guard bytes[index] != replacement else { return }
        bytes[index] = replacement
        let changed = String(decoding: bytes, as: UTF8.self)
        if let accepted = try? verify(changed) {
            throw FuzzFailure("a token with byte \(index) changed to \(replacement) was accepted: \(accepted)")
        }
    }

    static func sign(_ claims: TokenClaims) throws(FuzzFailure) -> String {
        do {
            return try RoomToken.sign(claims, authenticator: authenticator)
        } catch {
            throw FuzzFailure("signing failed: \(error)")
        }
    }

    static func checkClaims(_ claims: TokenClaims) throws(FuzzFailure) {
        for text in [claims.subject, claims.name, claims.room, claims.role] {
            try expect(text.utf8.count <= TokenClaims.maximumFieldBytes, "a claim of \(text.utf8.count) bytes")
        }
        try expect(!claims.subject.isEmpty, "an empty subject")
        try expect(
            claims.subject.unicodeScalars.allSatisfy { !DisplayName.isInvisibleControl($0) },
            "an identity with control characters: \(claims.subject.debugDescription)")
    }

    static func checkAccepted(_ claims: TokenClaims) throws(FuzzFailure) {
        try checkClaims(claims)
        try expect(claims.room == room && roles.contains(claims.role), "accepted \(claims)")
        try expect(
            now < claims.expiresAt + RoomToken.defaultLeeway && now + RoomToken.defaultLeeway >= claims.notBefore,
            "accepted claims outside their time: \(claims)")
    }

    // MARK: Seeds

    static func seeds() -> [[UInt8]] {
        let claims = TokenClaims(
            subject: "ana", name: "Ana Lima", room: room, role: "host", expiresAt: now + 3600, notBefore: now,
            issuedAt: now)
        let token = (try? RoomToken.sign(claims, authenticator: authenticator)) ?? ""
        let prefix: [UInt8] = [0, 40, 0x41]
        var seeds = [prefix + Array(token.utf8), prefix + Array(claims.json.utf8)]
        seeds.append(
            prefix + Array(#"{"sub":"eli","room":"lobby","role":"audience","nbf":1.5e9,"exp":17e8,"aud":"x"}"#.utf8))
        seeds.append(prefix + Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
        seeds.append(prefix + Array(Base64URL.encode(Array(RoomToken.headerJSON.utf8)).utf8))
        seeds.append(prefix + Array("eyJhbGciOiJIUzI1NiJ9.e30.".utf8))
        return seeds
    }
}
