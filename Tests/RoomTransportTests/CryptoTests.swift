import RoomProtocol
import RoomTransport
import Testing

@Suite struct CryptoTests {
    @Test func acceptKeyOfTheRFCExample() {
        // RFC 6455 section 1.3.
        #expect(
            WebSocketHandshake.acceptKey(forKey: "dGhlIHNhbXBsZSBub25jZQ==", sha1: TransportCrypto.sha1)
                == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Base64.encode(TransportCrypto.sha1(Array("abc".utf8))) == "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=")
    }

    @Test func randomBytesHaveTheAskedLengthAndDiffer() {
        let first = TransportCrypto.randomBytes(count: 16)
        let second = TransportCrypto.randomBytes(count: 16)
        #expect(first.count == 16)
        #expect(first != second)
    }
}
