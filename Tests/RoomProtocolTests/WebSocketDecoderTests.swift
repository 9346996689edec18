import RoomTesting
import Testing
import WebSocket

/// What a decoder made of some input: the messages in order, then the error that stopped it, if any.
struct DecodeOutcome: Equatable, CustomStringConvertible {
    var messages: [WebSocketMessage] = []
    var error: WebSocketProtocolError?

    var description: String { "\(messages) \(error.map { "\($0)" } ?? "no error")" }
}

/// Feeds `chunks` one after the other, draining messages after each, as a connection does.
func decode(_ chunks: [ArraySlice<UInt8>], role: WebSocketRole, maxMessageSize: Int) -> DecodeOutcome {
    var decoder = WebSocketDecoder(role: role, maxMessageSize: maxMessageSize)
    var outcome = DecodeOutcome()
    for chunk in chunks {
        decoder.feed(chunk)
        do {
            while let message = try decoder.next() { outcome.messages.append(message) }
        } catch {
            outcome.error = error
            // A failed decoder keeps failing with the same error.
            decoder.feed([0x81])
            do {
                _ = try decoder.next()
                Issue.record("a failed decoder decoded again")
            } catch let again {
                #expect(again == error)
            }
            return outcome
        }
    }
    return outcome
}

/// STYLE rule 6: the input whole, split at every byte, fed byte by byte, and truncated at every length must give
/// the expected outcome (a truncation: a prefix of the messages, and no error other than the expected one).
func verifyDecoding(
    _ bytes: [UInt8], role: WebSocketRole = .server, maxMessageSize: Int = 64 * 1024, expect expected: DecodeOutcome,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let whole = decode([bytes[...]], role: role, maxMessageSize: maxMessageSize)
    #expect(whole == expected, "whole", sourceLocation: sourceLocation)
    for split in 0...bytes.count {
        let outcome = decode([bytes[..<split], bytes[split...]], role: role, maxMessageSize: maxMessageSize)
        #expect(outcome == expected, "split at \(split)", sourceLocation: sourceLocation)
    }
    let single = decode(bytes.indices.map { bytes[$0...$0] }, role: role, maxMessageSize: maxMessageSize)
    #expect(single == expected, "byte by byte", sourceLocation: sourceLocation)
    for length in 0..<bytes.count {
        let outcome = decode([bytes[..<length]], role: role, maxMessageSize: maxMessageSize)
        let isPrefix = expected.messages.starts(with: outcome.messages)
        let errorAllowed = outcome.error == nil || outcome.error == expected.error
        #expect(isPrefix && errorAllowed, "truncated to \(length): \(outcome)", sourceLocation: sourceLocation)
    }
}

let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

func masked(_ message: WebSocketMessage) -> [UInt8] { message.encoded(maskingKey: mask) }

func maskedFrame(fin: Bool, _ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
    WebSocketFrame(fin: fin, opcode: opcode, payload: payload).encoded(maskingKey: mask)
}

@Suite struct WebSocketDecoderTests {
    @Test func rfcExamples() {
        // RFC 6455 section 5.7.
        verifyDecoding(
            [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], role: .client, expect: .init(messages: [.text("Hello")]))
        verifyDecoding(
            [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58],
            expect: .init(messages: [.text("Hello")]))
        verifyDecoding(
            [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F], role: .client,
            expect: .init(messages: [.text("Hello")]))
        verifyDecoding(
            [0x89, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], role: .client,
            expect: .init(messages: [.ping(Array("Hello".utf8))]))
        #expect(
            WebSocketMessage.text("Hello").encoded(maskingKey: mask) == [
                0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58,
            ])
    }

    @Test func lengthsOfEveryWidth() {
        for size in [0, 125, 126, 127, 1000, 65535, 65536, 70000] {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
            let expected = DecodeOutcome(messages: [.binary(payload)])
            let outcome = decode([masked(.binary(payload))[...]], role: .server, maxMessageSize: 100_000)
            #expect(outcome == expected, "size \(size)")
        }
        #expect(Array(WebSocketMessage.binary([UInt8](repeating: 0, count: 125)).encoded().prefix(2)) == [0x82, 125])
        #expect(
            Array(WebSocketMessage.binary([UInt8](repeating: 0, count: 126)).encoded().prefix(4)) == [
                0x82, 126, 0, 126,
            ])
        #expect(
            Array(WebSocketMessage.binary([UInt8](repeating: 0, count: 65535)).encoded().prefix(4)) == [
                0x82, 126, 0xFF, 0xFF,
            ])
        #expect(
            Array(WebSocketMessage.binary([UInt8](repeating: 0, count: 65536)).encoded().prefix(10))
                == [0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        verifyDecoding(
            masked(.binary([UInt8](repeating: 5, count: 300))),
            expect: .init(messages: [.binary([UInt8](repeating: 5, count: 300))]))
    }

    @Test func fragmentsWithInterleavedControlFramesAndSplitScalars() {
        let text = Array("zürich ✓ 🎙".utf8)
        // Fragment boundaries fall inside multi-byte scalars; only the whole message must be valid UTF-8.
        let bytes =
            maskedFrame(fin: false, .text, Array(text[0..<2])) + masked(.ping([1, 2]))
            + maskedFrame(fin: false, .continuation, Array(text[2..<11]))
            + maskedFrame(fin: true, .continuation, Array(text[11...])) + masked(.binary([9]))
            + masked(.close(code: .normal, reason: "bye"))
        verifyDecoding(
            bytes,
            expect: .init(messages: [
                .ping([1, 2]), .text("zürich ✓ 🎙"), .binary([9]), .close(code: .normal, reason: "bye"),
            ]))
    }

    /// The Autobahn|Testsuite's cases 6.4.1-6.4.4, as a test: each message is sent in three pieces (fragments,
    /// or chops of one frame) with the bad bytes in the second. The decoder must fail when the second piece
    /// arrives, before the third does (RFC 6455 section 8.1, "fail fast").
    @Test(
        arguments: [
            (
                "6.4.1", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5], [0xF4, 0x90, 0x80, 0x80],
                Array("edited".utf8), false
            ),
            (
                "6.4.2", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xF4], [0x90],
                [0x80, 0x80] + Array("edited".utf8), false
            ),
            (
                "6.4.3", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5], [0xF4, 0x90, 0x80, 0x80],
                Array("edited".utf8), true
            ),
            (
                "6.4.4", [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xF4], [0x90],
                [0x80, 0x80] + Array("edited".utf8), true
            ),
        ] as [(String, [UInt8], [UInt8], [UInt8], Bool)])
    func invalidTextFailsAsSoonAsItIsSeen(
        name: String, first: [UInt8], second: [UInt8], third: [UInt8], oneFrame: Bool
    ) {
        let pieces: [[UInt8]]
        if oneFrame {
            let frame = maskedFrame(fin: true, .text, first + second + third)
            let header = frame.count - first.count - second.count - third.count
            pieces = [
                Array(frame[..<(header + first.count)]),
                Array(frame[(header + first.count)..<(header + first.count + second.count)]),
                Array(frame[(header + first.count + second.count)...]),
            ]
        } else {
            pieces = [
                maskedFrame(fin: false, .text, first), maskedFrame(fin: false, .continuation, second),
                maskedFrame(fin: true, .continuation, third),
            ]
        }
        var decoder = WebSocketDecoder(role: .server)
        decoder.feed(pieces[0])
        #expect((try? decoder.next()) == .some(nil), "\(name): the first piece is valid")
        decoder.feed(pieces[1])
        #expect(throws: WebSocketProtocolError(.invalidPayload, "text message is not valid UTF-8"), "\(name)") {
            try decoder.next()
        }
    }

    @Test func aCharacterCutByTheEndOfTheMessageIsRefused() {
        verifyDecoding(
            maskedFrame(fin: false, .text, [0x61, 0xE2, 0x9C]) + maskedFrame(fin: true, .continuation, [0x93]),
            expect: .init(messages: [.text("a✓")]))
        verifyDecoding(
            maskedFrame(fin: false, .text, [0x61, 0xE2]) + maskedFrame(fin: true, .continuation, [0x9C]),
            expect: .init(error: .init(.invalidPayload, "text message is not valid UTF-8")))
        verifyDecoding(
            maskedFrame(fin: true, .text, [0x61, 0xF0, 0x9F]),
            expect: .init(error: .init(.invalidPayload, "text message is not valid UTF-8")))
        // A binary message is not text: any bytes go.
        verifyDecoding(
            maskedFrame(fin: true, .binary, [0xF0, 0x9F]), expect: .init(messages: [.binary([0xF0, 0x9F])]))
    }

    @Test func closeFrames() throws {
        verifyDecoding(masked(.close(code: nil, reason: "")), expect: .init(messages: [.close(code: nil, reason: "")]))
        verifyDecoding(
            masked(.close(code: WebSocketCloseCode(4000), reason: "room ended ✓")),
            expect: .init(messages: [.close(code: WebSocketCloseCode(4000), reason: "room ended ✓")]))
        let long = String(repeating: "é", count: 100)
        let payload = WebSocketFrame.closePayload(code: .policyViolation, reason: long)
        #expect(payload.count == 124)
        #expect(
            try WebSocketDecoder.parseClose(payload)
                == .close(code: .policyViolation, reason: String(repeating: "é", count: 61)))
    }

    @Test func messageSizeLimit() {
        verifyDecoding(
            masked(.binary([UInt8](repeating: 1, count: 100))), maxMessageSize: 100,
            expect: .init(messages: [.binary([UInt8](repeating: 1, count: 100))]))
        verifyDecoding(
            masked(.text("ok")) + masked(.binary([UInt8](repeating: 1, count: 101))), maxMessageSize: 100,
            expect: .init(messages: [.text("ok")], error: .init(.messageTooBig, "message larger than 100 bytes")))
        verifyDecoding(
            maskedFrame(fin: false, .binary, [UInt8](repeating: 1, count: 60))
                + maskedFrame(fin: true, .continuation, [UInt8](repeating: 1, count: 41)),
            maxMessageSize: 100, expect: .init(error: .init(.messageTooBig, "message larger than 100 bytes")))
        // The limit applies from the header, before the payload arrives.
        let header: [UInt8] = [0x82, 0xFF, 0, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF]
        verifyDecoding(header, expect: .init(error: .init(.messageTooBig, "message larger than 65536 bytes")))
    }

    @Test(
        arguments: [
            ([0xC1, 0x80] + mask, WebSocketProtocolError(.protocolError, "reserved bits set")),
            ([0x83, 0x80] + mask, WebSocketProtocolError(.protocolError, "unknown opcode 3")),
            ([0x8B, 0x80] + mask, WebSocketProtocolError(.protocolError, "unknown opcode 11")),
            ([0x09, 0x80] + mask, WebSocketProtocolError(.protocolError, "fragmented control frame")),
            (
                [0x89, 0xFE, 0, 126] + mask + [UInt8](repeating: 0, count: 126),
                WebSocketProtocolError(.protocolError, "control frame longer than 125 bytes")
            ),
            ([0x81, 0x02, 0x68, 0x69], WebSocketProtocolError(.protocolError, "client frame not masked")),
            (
                [0x80, 0x80] + mask,
                WebSocketProtocolError(.protocolError, "continuation frame without a message to continue")
            ),
            (
                maskedFrame(fin: false, .text, [0x61]) + maskedFrame(fin: true, .text, [0x62]),
                WebSocketProtocolError(.protocolError, "new data frame inside a fragmented message")
            ),
            (
                maskedFrame(fin: true, .text, [0xC3, 0x28]),
                WebSocketProtocolError(.invalidPayload, "text message is not valid UTF-8")
            ),
            (
                maskedFrame(fin: true, .text, [0xED, 0xA0, 0x80]),
                WebSocketProtocolError(.invalidPayload, "text message is not valid UTF-8")
            ),
            (
                maskedFrame(fin: true, .close, [0x03]),
                WebSocketProtocolError(.protocolError, "close frame with a 1-byte payload")
            ),
            (
                maskedFrame(fin: true, .close, [0x03, 0xED]),
                WebSocketProtocolError(.protocolError, "invalid close code 1005")
            ),
            (
                maskedFrame(fin: true, .close, [0x03, 0xE7]),
                WebSocketProtocolError(.protocolError, "invalid close code 999")
            ),
            (
                maskedFrame(fin: true, .close, [0x13, 0x88]),
                WebSocketProtocolError(.protocolError, "invalid close code 5000")
            ),
            (
                maskedFrame(fin: true, .close, [0x03, 0xE8, 0xFF]),
                WebSocketProtocolError(.invalidPayload, "close reason is not valid UTF-8")
            ),
            (
                [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0] + mask,
                WebSocketProtocolError(.protocolError, "64-bit length with the top bit set")
            ),
        ] as [([UInt8], WebSocketProtocolError)])
    func serverSideViolations(bytes: [UInt8], error: WebSocketProtocolError) {
        verifyDecoding(masked(.text("before")) + bytes, expect: .init(messages: [.text("before")], error: error))
    }

    @Test func clientRejectsMaskedFrames() {
        verifyDecoding(
            [0x81, 0x00, 0x81, 0x80] + mask, role: .client,
            expect: .init(messages: [.text("")], error: .init(.protocolError, "server frame masked")))
    }

    @Test func closeCodesAllowedOnTheWire() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999] {
            #expect(WebSocketCloseCode(code).isSendable, "\(code)")
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1012, 1015, 2999, 5000] {
            #expect(!WebSocketCloseCode(code).isSendable, "\(code)")
        }
    }
}

@Suite struct WebSocketDecoderArbitraryInputTests {
    /// Arbitrary bytes, and valid frames with one byte corrupted, never crash the decoder, and any chunking gives
    /// the same outcome as the whole input.
    @Test func arbitraryInputGivesTheSameOutcomeInAnyChunks() {
        var random = SplitMix64(seed: 42)
        for round in 0..<400 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
            } else {
                bytes = masked(.text("hello")) + masked(.ping([1])) + masked(.binary([1, 2, 3]))
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            for role in [WebSocketRole.server, .client] {
                let whole = decode([bytes[...]], role: role, maxMessageSize: 64)
                var chunks: [ArraySlice<UInt8>] = []
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + Int.random(in: 1...5, using: &random))
                    chunks.append(bytes[start..<end])
                    start = end
                }
                #expect(decode(chunks, role: role, maxMessageSize: 64) == whole, "round \(round) \(bytes)")
            }
        }
    }
}
