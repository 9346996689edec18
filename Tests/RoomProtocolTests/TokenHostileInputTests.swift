import RoomTesting
import Testing

@testable import RoomProtocol

/// Hostile input must give a clean refusal, never a crash or an acceptance.
@Suite struct TokenHostileInputTests {
    @Test func everyTruncationIsRefused() {
        let token = sign(sampleClaims())
        for length in 0..<token.utf8.count {
            let prefix = String(decoding: token.utf8.prefix(length), as: UTF8.self)
            #expect(refusal { try verify(prefix) } != nil, "prefix of \(length) bytes")
        }
    }

    @Test func everySingleByteChangeIsRefused() {
        let token = Array(sign(sampleClaims()).utf8)
        for index in token.indices {
            for replacement in [UInt8(ascii: "A"), UInt8(ascii: "_"), UInt8(ascii: "."), 0x00, 0xFF]
            where replacement != token[index] {
                var changed = token
                changed[index] = replacement
                let text = String(decoding: changed, as: UTF8.self)
                #expect(refusal { try verify(text) } != nil, "byte \(index) set to \(replacement)")
            }
        }
    }

    @Test func randomBytesNeverParseAsAToken() {
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<2000 {
            let length = Int(generator.next() % 200)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = try? TokenClaims.parser.parse(bytes)
            let header = Base64URL.encode(bytes)
            #expect(refusal { try verify(header + "." + header + "." + header) } != nil)
        }
    }
}
