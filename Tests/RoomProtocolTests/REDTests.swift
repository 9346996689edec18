import Testing

@testable import MediaWire

/// RFC 2198 payloads: exact bytes, every truncation, every value of every byte, and the primary cut out of a
/// packet in place.
@Suite struct REDTests {
    /// Two earlier frames (offsets 1920 and 960) of 3 and 2 bytes, then a primary of 4 bytes, all Opus (111).
    static let twoEarlier: [UInt8] = [
        0xEF, 0x1E, 0x00, 0x03,  // F=1, PT 111, offset 1920 (0x780 << 10 = 0x1E0000), length 3
        0xEF, 0x0F, 0x00, 0x02,  // F=1, PT 111, offset 960 (0x3C0 << 10 = 0xF0000), length 2
        0x6F,  // F=0, PT 111
        1, 2, 3, 4, 5, 9, 8, 7, 6,
    ]

    @Test func aPayloadOfTwoEarlierFramesIsWrittenAndReadExactly() throws {
        let bytes = REDPayload.encode(
            primary: [9, 8, 7, 6], payloadType: 111,
            earlier: [
                REDPayload.Earlier(timestampOffset: 1920, bytes: [1, 2, 3]),
                REDPayload.Earlier(timestampOffset: 960, bytes: [4, 5]),
            ])
        #expect(bytes == Self.twoEarlier)
        let red = try REDPayload.parse(bytes, redPayloadType: 63)
        #expect(red.redundantCount == 2)
        #expect(red.redundant(0) == REDBlock(payloadType: 111, timestampOffset: 1920, range: 9..<12))
        #expect(red.redundant(1) == REDBlock(payloadType: 111, timestampOffset: 960, range: 12..<14))
        #expect(red.primary == REDBlock(payloadType: 111, timestampOffset: 0, range: 14..<18))
    }

    @Test func aPayloadWithoutEarlierFramesIsOneByteAndThePrimary() throws {
        let bytes = REDPayload.encode(primary: [1, 2], payloadType: 111, earlier: [])
        #expect(bytes == [0x6F, 1, 2])
        let red = try REDPayload.parse(bytes, redPayloadType: 63)
        #expect(red.redundantCount == 0)
        #expect(red.primary == REDBlock(payloadType: 111, timestampOffset: 0, range: 1..<3))
    }

    @Test func framesAHeaderCannotDescribeAreLeftOutAndTheNewestKept() throws {
        let bytes = REDPayload.encode(
            primary: [7], payloadType: 111,
            earlier: [
                REDPayload.Earlier(timestampOffset: 2880, bytes: [1]),
                REDPayload.Earlier(timestampOffset: 0x4000, bytes: [2]),
                REDPayload.Earlier(timestampOffset: 1920, bytes: [UInt8](repeating: 3, count: 1024)),
                REDPayload.Earlier(timestampOffset: 1920, bytes: [4]),
                REDPayload.Earlier(timestampOffset: 960, bytes: [5]),
            ])
        let red = try REDPayload.parse(bytes, redPayloadType: 63)
        #expect(red.redundantBlocks.map(\.timestampOffset) == [1920, 960])
        #expect(red.redundantBlocks.map { bytes[$0.range] } == [[4], [5]])
    }

    @Test func everyTruncationIsATypedErrorAndNeverACrash() {
        for length in 0..<Self.twoEarlier.count where length != Self.twoEarlier.count {
            let cut = Array(Self.twoEarlier[..<length])
            let result = Result { () throws(REDParseError) in try REDPayload.parse(cut, redPayloadType: 63) }
            if length >= 14 {
                // The blocks fit: only the primary is shorter.
                #expect((try? result.get())?.primary.range == 14..<length, "cut at \(length)")
            } else {
                #expect(throws: REDParseError.self, "cut at \(length)") { try result.get() }
            }
        }
    }

    @Test func everyValueOfEveryByteParsesInsideThePayloadOrIsRefused() {
        for position in Self.twoEarlier.indices {
            for value in 0...255 {
                var bytes = Self.twoEarlier
                bytes[position] = UInt8(value)
                guard let red = try? REDPayload.parse(bytes, redPayloadType: 63) else { continue }
                var end = 0
                for block in red.redundantBlocks + [red.primary] {
                    #expect(block.range.lowerBound >= end && block.range.upperBound <= bytes.count)
                    end = block.range.upperBound
                }
                #expect(red.primary.range.upperBound == bytes.count)
            }
        }
    }

    @Test func refusalsSayWhatIsWrong() {
        #expect(throws: REDParseError.truncated(needed: 1, available: 0)) {
            try REDPayload.parse([], redPayloadType: 63)
        }
        // A third earlier frame: more than a sender of ours repeats.
        #expect(throws: REDParseError.tooManyBlocks) {
            try REDPayload.parse([0xEF, 0, 0, 0, 0xEF, 0, 0, 0, 0xEF, 0, 0, 0, 0x6F], redPayloadType: 63)
        }
        #expect(throws: REDParseError.nestedRED) { try REDPayload.parse([0x3F, 1], redPayloadType: 63) }
        #expect(throws: REDParseError.nestedRED) { try REDPayload.parse([0xBF, 0, 0, 0, 0x6F], redPayloadType: 63) }
        // A block longer than what follows the headers.
        #expect(throws: REDParseError.truncated(needed: 7, available: 6)) {
            try REDPayload.parse([0xEF, 0x0F, 0x00, 0x02, 0x6F, 1], redPayloadType: 63)
        }
    }

    @Test func aPacketCutToItsPrimaryKeepsItsHeaderAndExtension() throws {
        let header = RTPHeader(payloadType: 63, sequenceNumber: 7, timestamp: 9600, ssrc: 0x1234)
        let level = RTPExtensionElement(id: 1, data: [0x85])
        var packet = header.packet(extensionElements: [level], payload: Self.twoEarlier)
        let expected = RTPHeader(payloadType: 111, sequenceNumber: 7, timestamp: 9600, ssrc: 0x1234)
            .packet(extensionElements: [level], payload: [9, 8, 7, 6])
        let parsed = try RTPHeader.parse(packet)
        let red = try REDPayload.parse(Array(packet[parsed.payloadRange]), redPayloadType: 63)
        let length = packet.withUnsafeMutableBytes {
            REDPayload.stripToPrimary($0, length: $0.count, header: parsed, red: red)
        }
        packet.removeLast(packet.count - length)
        #expect(packet == expected)
    }
}
