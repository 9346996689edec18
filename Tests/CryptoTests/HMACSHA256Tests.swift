import Crypto
import Testing

func bytes(hex: String) -> [UInt8] {
    var output: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        output.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return output
}

@Suite struct HMACSHA256Tests {
    /// RFC 4231 §4.2–4.8, the HMAC-SHA-256 results.
    @Test(arguments: [
        (
            bytes(hex: String(repeating: "0b", count: 20)), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            bytes(hex: String(repeating: "aa", count: 20)), bytes(hex: String(repeating: "dd", count: 50)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            (1...25).map { UInt8($0) }, bytes(hex: String(repeating: "cd", count: 50)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        (
            bytes(hex: String(repeating: "aa", count: 131)),
            Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            bytes(hex: String(repeating: "aa", count: 131)),
            Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
                    + "be hashed before being used by the HMAC algorithm.").utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ])
    func rfc4231Vectors(key: [UInt8], message: [UInt8], expected: String) {
        #expect(HMACSHA256.sign(key: key, message: message) == bytes(hex: expected))
    }

    /// RFC 4231 §4.6: the test of truncation compares the first 128 bits.
    @Test func rfc4231TruncatedVector() {
        let tag = HMACSHA256.sign(
            key: bytes(hex: String(repeating: "0c", count: 20)), message: Array("Test With Truncation".utf8))
        #expect(tag.map { Array($0.prefix(16)) } == bytes(hex: "a3b6167473100ee06e0c796c2955552b"))
    }

    @Test func emptyKeyAndMessage() {
        #expect(
            HMACSHA256.sign(key: [], message: [])
                == bytes(hex: "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
    }

    @Test func secureRandomGivesTheCountAskedFor() throws {
        #expect(try SecureRandom.bytes(0) == [])
        let first = try SecureRandom.bytes(32)
        let second = try SecureRandom.bytes(32)
        #expect(first.count == 32)
        // Two 256-bit draws colliding would mean the generator is broken.
        #expect(first != second)
    }
}
