import Foundation
import RoomProtocol
import RoomTesting
import RoomTokens
import Testing

@testable import Crypto

let fixedSecret = TokenSecret(bytes: (0..<32).map { UInt8($0) })
let knownRoles: Set<String> = ["host", "moderator", "speaker", "audience"]

/// Runs `python3 -c script arguments...` and returns its exit status and standard output and error.
func runPython(_ script: String, _ arguments: [String]) throws -> ProcessResult {
    try ChildProcess(["python3", "-c", script] + arguments).finish()
}

let pythonIsInstalled: Bool = {
    (try? runPython("pass", []).status) == 0
}()

@Suite struct TokenInteropTests {
    let verifier = TokenVerifier(secret: fixedSecret)

    /// The example on jwt.io, signed with the secret "your-256-bit-secret". Its claims are not a room token's, so
    /// a correct signature check shows up as the claims check that follows it.
    @Test func jwtIOExampleSignatureChecksOut() {
        let token =
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2"
            + "MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        let right = TokenVerifier(secret: TokenSecret(bytes: Array("your-256-bit-secret".utf8)))
        let wrong = TokenVerifier(secret: TokenSecret(bytes: Array("your-256-bit-secreT".utf8)))
        #expect(throws: TokenError.malformed(#"claim "room" is missing"#)) {
            try right.verify(token, room: "lobby", now: 1_516_239_022, isKnownRole: { _ in true })
        }
        #expect(throws: TokenError.badSignature) {
            try wrong.verify(token, room: "lobby", now: 1_516_239_022, isKnownRole: { _ in true })
        }
    }

    /// Made once with PyJWT 2.x: `jwt.encode(claims, bytes(range(32)), algorithm="HS256")`.
    @Test func tokenMadeByPyJWTVerifies() throws {
        let token =
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbmEiLCJuYW1lIjoiQW5hIExpbWEiLCJyb29tIjoibG9iYnkiLCJyb2"
            + "xlIjoiaG9zdCIsImlhdCI6MTcwMDAwMDAwMCwibmJmIjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDM2MDB9.SJLPHzI2YVWoSvP6BsA"
            + "8QBsT_90TBjFFPyEI7EtH34g"
        let claims = try verifier.verify(token, room: "lobby", now: 1_700_000_100, isKnownRole: knownRoles.contains)
        #expect(
            claims
                == TokenClaims(
                    subject: "ana", name: "Ana Lima", room: "lobby", role: "host", expiresAt: 1_700_003_600,
                    notBefore: 1_700_000_000, issuedAt: 1_700_000_000))
    }

    @Test func ourTokensAreIdenticalToPyJWTs() throws {
        let claims = TokenClaims(
            subject: "ana", name: "Ana Lima", room: "lobby", role: "host", expiresAt: 1_700_003_600,
            notBefore: 1_700_000_000, issuedAt: 1_700_000_000)
        // PyJWT writes the same header and the same claim order, so the bytes match exactly.
        #expect(
            try TokenIssuer(secret: fixedSecret).issue(claims)
                == "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbmEiLCJuYW1lIjoiQW5hIExpbWEiLCJyb29tIjoibG9iYnki"
                + "LCJyb2xlIjoiaG9zdCIsImlhdCI6MTcwMDAwMDAwMCwibmJmIjoxNzAwMDAwMDAwLCJleHAiOjE3MDAwMDM2MDB9.SJLPHzI2YVWo"
                + "SvP6BsA8QBsT_90TBjFFPyEI7EtH34g")
    }

    @Test(.enabled(if: pythonIsInstalled, "python3 is not installed; the PyJWT interoperability test needs it"))
    func pyJWTVerifiesOurTokenAndWeVerifyItsToken() throws {
        let secretHex = SecretFile.encodeHex(fixedSecret.bytes)
        let now = Int64(Date().timeIntervalSince1970)
        let ours = try TokenIssuer(secret: fixedSecret).issue(
            TokenClaims(
                subject: "bo", name: "Bo 🎙", room: "lobby", role: "moderator", expiresAt: now + 600,
                notBefore: now, issuedAt: now))
        let script = """
            import sys, json, time
            try:
                import jwt
            except ImportError:
                sys.exit("PyJWT is missing: python3 -m pip install pyjwt (make test-deps installs it)")
            secret = bytes.fromhex(sys.argv[1])
            claims = jwt.decode(sys.argv[2], secret, algorithms=["HS256"], options={"require": ["exp", "nbf"]})
            now = int(time.time())
            theirs = jwt.encode({"sub": "cy", "name": "Cy", "room": "lobby", "role": "audience",
                                 "iat": now, "nbf": now, "exp": now + 600}, secret, algorithm="HS256")
            print(json.dumps({"claims": claims, "token": theirs}))
            """
        let result = try runPython(script, [secretHex, ours])
        try #require(result.status == 0, "python3 failed: \(result.standardError)")
        let reply = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let theirClaims = reply?["claims"] as? [String: Any]
        #expect(theirClaims?["sub"] as? String == "bo")
        #expect(theirClaims?["name"] as? String == "Bo 🎙")
        #expect(theirClaims?["role"] as? String == "moderator")
        #expect((theirClaims?["exp"] as? NSNumber)?.int64Value == now + 600)
        let theirToken = try #require(reply?["token"] as? String)
        let verified = try verifier.verify(theirToken, room: "lobby", now: now, isKnownRole: knownRoles.contains)
        #expect(verified.subject == "cy")
        #expect(verified.role == "audience")
    }

    @Test func mintWritesAVerifiableTokenWithTheServersSecretAndNeverCreatesOne() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/secret"
        #expect(throws: TokenMintError.secretFile(SecretFileError(path: path, problem: .missing))) {
            try TokenCommandCore.mint(
                room: "lobby", identity: "dara", name: nil, role: "speaker", ttl: 3600, secretFile: path,
                now: 1_700_000_000)
        }
        #expect(!FileManager.default.fileExists(atPath: path), "minting must not create a secret")
        _ = try SecretFile.loadOrCreate(at: path)
        let token = try TokenCommandCore.mint(
            room: "lobby", identity: "dara", name: nil, role: "speaker", ttl: 3600, secretFile: path,
            now: 1_700_000_000)
        let secret = try SecretFile.loadOrCreate(at: path)
        let claims = try TokenVerifier(secret: secret).verify(
            token, room: "lobby", now: 1_700_000_001, isKnownRole: knownRoles.contains)
        #expect(
            claims
                == TokenClaims(
                    subject: "dara", name: "dara", room: "lobby", role: "speaker", expiresAt: 1_700_003_600,
                    notBefore: 1_700_000_000, issuedAt: 1_700_000_000))
        #expect(throws: TokenError.expired(expiresAt: 1_700_003_600, now: 1_700_003_630)) {
            try TokenVerifier(secret: secret).verify(
                token, room: "lobby", now: 1_700_003_630, isKnownRole: knownRoles.contains)
        }
    }

    @Test func mintRefusesBadInput() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path + "/secret"
        #expect(throws: TokenMintError.empty("--room")) {
            try TokenCommandCore.mint(
                room: "", identity: "a", name: nil, role: "host", ttl: 60, secretFile: path, now: 0)
        }
        #expect(throws: TokenMintError.nonPositiveLifetime(0)) {
            try TokenCommandCore.mint(
                room: "r", identity: "a", name: nil, role: "host", ttl: 0, secretFile: path, now: 0)
        }
        #expect(throws: TokenMintError.tooLong("--name")) {
            try TokenCommandCore.mint(
                room: "r", identity: "a", name: String(repeating: "x", count: 257), role: "host", ttl: 60,
                secretFile: path, now: 0)
        }
        #expect(throws: TokenMintError.controlCharacters("--identity")) {
            try TokenCommandCore.mint(
                room: "r", identity: "a\u{1B}[2J", name: nil, role: "host", ttl: 60, secretFile: path, now: 0)
        }
        #expect(
            TokenMintError.controlCharacters("--identity").description
                == "--identity must not contain control characters, line breaks, bidirectional controls or "
                + "invisible spaces")
        try write(String(repeating: "ab", count: 32), to: path, mode: 0o604)
        #expect(
            throws: TokenMintError.secretFile(SecretFileError(path: path, problem: .permissionsTooOpen(mode: 0o604)))
        ) {
            try TokenCommandCore.mint(
                room: "r", identity: "a", name: nil, role: "host", ttl: 60, secretFile: path, now: 0)
        }
    }
}
