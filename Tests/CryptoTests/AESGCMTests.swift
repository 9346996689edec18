import Crypto
import Testing

@Suite struct AESGCMTests {
    func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// The AES-256 test cases 13 and 14 of the GCM specification (McGrew and Viega): a zero key and nonce.
    @Test func theSpecificationsVectorsSealAndOpen() {
        let key = [UInt8](repeating: 0, count: 32)
        let nonce = [UInt8](repeating: 0, count: 12)
        #expect(
            AESGCM.seal(key: key, nonce: nonce, plaintext: [], associatedData: [])
                == hex("530f8afbc74536b9a963b4f1c4cb738b"))
        let sealed = hex("cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919")
        #expect(
            AESGCM.seal(key: key, nonce: nonce, plaintext: [UInt8](repeating: 0, count: 16), associatedData: [])
                == sealed)
        #expect(
            AESGCM.open(key: key, nonce: nonce, sealed: sealed, associatedData: [])
                == [UInt8](repeating: 0, count: 16))
    }

    /// A changed byte anywhere — ciphertext, tag, associated data, nonce, key — and nothing opens.
    @Test func anythingChangedDoesNotOpen() throws {
        let key = (0..<32).map { UInt8($0) }
        let nonce = (0..<12).map { UInt8($0) &+ 100 }
        let plain = Array("a direct message".utf8)
        let context = Array("room jazz".utf8)
        let sealed = try #require(AESGCM.seal(key: key, nonce: nonce, plaintext: plain, associatedData: context))
        #expect(AESGCM.open(key: key, nonce: nonce, sealed: sealed, associatedData: context) == plain)
        for index in sealed.indices {
            var changed = sealed
            changed[index] ^= 1
            #expect(AESGCM.open(key: key, nonce: nonce, sealed: changed, associatedData: context) == nil)
        }
        #expect(AESGCM.open(key: key, nonce: nonce, sealed: sealed, associatedData: Array("room rock".utf8)) == nil)
        var otherNonce = nonce
        otherNonce[0] ^= 1
        #expect(AESGCM.open(key: key, nonce: otherNonce, sealed: sealed, associatedData: context) == nil)
        var otherKey = key
        otherKey[31] ^= 1
        #expect(AESGCM.open(key: otherKey, nonce: nonce, sealed: sealed, associatedData: context) == nil)
        #expect(AESGCM.open(key: key, nonce: nonce, sealed: Array(sealed.prefix(15)), associatedData: context) == nil)
    }
}
