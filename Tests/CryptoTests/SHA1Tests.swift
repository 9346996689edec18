import Crypto
import Testing
import WebSocket

@Suite struct SHA1Tests {
    @Test func digestOfTheFIPSExample() {
        // FIPS 180-2 appendix A.1.
        #expect(Base64.encode(SHA1.digest(Array("abc".utf8))) == "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=")
        #expect(SHA1.digest([]).count == 20)
    }

    @Test func randomBytesHaveTheAskedLengthAndDiffer() throws {
        let first = try SecureRandom.bytes(16)
        let second = try SecureRandom.bytes(16)
        #expect(first.count == 16)
        #expect(first != second)
    }
}
