import Foundation
import RoomProtocol
import Testing

/// The `json media` examples of docs/protocol.md.
func mediaExamples() throws -> [(line: Int, text: String)] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
    var examples: [(line: Int, text: String)] = []
    var open: (line: Int, lines: [String])?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        if let current = open {
            if line == "```" {
                examples.append((current.line, current.lines.joined(separator: "\n")))
                open = nil
            } else {
                open?.lines.append(String(line))
            }
        } else if line == "```json media" {
            open = (index + 1, [])
        }
    }
    return examples
}

@Suite struct MediaSignalingTests {
    @Test func theDocumentedExamplesDecodeAndEncodeBackExactly() throws {
        let examples = try mediaExamples()
        #expect(examples.count == 6)
        for example in examples {
            let signal = try #require(try MediaSignalCodec.decode(example.text), "docs/protocol.md:\(example.line)")
            #expect(MediaSignalCodec.encode(signal) == example.text, "docs/protocol.md:\(example.line)")
        }
    }

    @Test func anOfferRoundTrips() throws {
        let offer = MediaOffer(
            host: "10.0.0.1", port: 5004, ssrc: 0xFFFF_FFFF, serverSSRC: 1, sendKey: Array(0..<30),
            roomKey: Array(30..<60), epoch: 7)
        #expect(try MediaSignalCodec.decode(MediaSignalCodec.encode(.media(offer))) == .media(offer))
        #expect(offer.payloadType == 111)
        #expect(offer.clockRate == 48_000)
    }

    @Test func badMessagesAreTypedErrorsAndOtherTypesAreNotMedia() throws {
        #expect(try MediaSignalCodec.decode("{\"type\":\"raise_hand\"}") == nil)
        #expect(throws: MediaSignalError.self) {
            try MediaSignalCodec.decode("{\"type\":\"media_path\",\"path\":\"tcp\"}")
        }
        #expect(throws: MediaSignalError.self) {
            try MediaSignalCodec.decode("{\"type\":\"media_key\",\"room_key\":\"AAEC\",\"epoch\":2}")
        }
        #expect(throws: MediaSignalError.self) { try MediaSignalCodec.decode("{\"type\":\"media\"}") }
        #expect(throws: MediaSignalError.self) { try MediaSignalCodec.decode("{\"type\":\"media_path\",") }
        let text = MediaSignalCodec.encode(.mediaKey(roomKey: Array(0..<30), epoch: 3))
        for length in 0..<text.utf8.count {
            let prefix = String(decoding: Array(text.utf8)[..<length], as: UTF8.self)
            #expect(throws: MediaSignalError.self, "cut at \(length)") { try MediaSignalCodec.decode(prefix) }
        }
    }
}
