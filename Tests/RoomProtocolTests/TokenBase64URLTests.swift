import Testing

@testable import RoomProtocol

@Suite struct TokenBase64URLTests {
    /// RFC 4648 §10 vectors, with padding removed and the url-safe alphabet.
    @Test func rfc4648Vectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test func usesTheURLSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test func everyByteRoundTrips() {
        let bytes = (0...255).map { UInt8($0) }
        for length in 0...bytes.count {
            #expect(Base64URL.decode(Base64URL.encode(bytes.prefix(length))) == Array(bytes.prefix(length)))
        }
    }

    @Test func refusesNonCanonicalText() {
        #expect(Base64URL.decode("Zg==") == nil)
        #expect(Base64URL.decode("Zh") == nil)
        #expect(Base64URL.decode("Z") == nil)
        #expect(Base64URL.decode("Zm9v+A") == nil)
        #expect(Base64URL.decode("Zm 9v") == nil)
        #expect(Base64URL.decode("Zm9v/A") == nil)
    }
}
