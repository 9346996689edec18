import Crypto
import Testing
import WebSocket

@Suite struct CryptoTests {
    @Test func acceptKeyOfTheRFCExample() {
        // RFC 6455 section 1.3.
        #expect(
            WebSocketHandshake.acceptKey(forKey: "dGhlIHNhbXBsZSBub25jZQ==", sha1: SHA1.digest)
                == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
