import MediaWire
import Testing

/// A hand-built Opus packet: V=2, X=1, M=1, PT 111, seq 0x1234, ts 960, SSRC 0xDEADBEEF, a one-byte extension
/// with the audio level (ID 1, voice, -85 dBov) and two padding bytes, then a 4-byte payload.
let opusVector: [UInt8] = [
    0x90, 0xEF, 0x12, 0x34, 0x00, 0x00, 0x03, 0xC0, 0xDE, 0xAD, 0xBE, 0xEF,
    0xBE, 0xDE, 0x00, 0x01, 0x10, 0xD5, 0x00, 0x00,
    0x01, 0x02, 0x03, 0x04,
]

@Suite struct RTPHeaderTests {
    @Test func parsesTheHandBuiltVector() throws {
        let header = try RTPHeader.parse(opusVector)
        #expect(header.marker)
        #expect(header.payloadType == 111)
        #expect(header.sequenceNumber == 0x1234)
        #expect(header.timestamp == 960)
        #expect(header.ssrc == 0xDEAD_BEEF)
        #expect(header.csrcs == [])
        #expect(header.extensionProfile == 0xBEDE)
        #expect(header.extensionRange == 16..<20)
        #expect(header.payloadRange == 20..<24)
        #expect(header.headerLength == 20)
        #expect(header.paddingLength == 0)
        #expect(
            try RTPOneByteExtension.audioLevel(in: opusVector, header: header) == RTPAudioLevel(level: 85, voice: true))
    }

    @Test func writesTheHandBuiltVectorByteForByte() {
        let header = RTPHeader(
            marker: true, payloadType: 111, sequenceNumber: 0x1234, timestamp: 960, ssrc: 0xDEAD_BEEF)
        let bytes = header.packet(
            extensionElements: [.audioLevel(RTPAudioLevel(level: 85, voice: true))], payload: [1, 2, 3, 4])
        #expect(bytes == opusVector)
    }

    @Test func plainHeaderWithoutExtension() throws {
        let header = RTPHeader(payloadType: 0, sequenceNumber: 1, timestamp: 2, ssrc: 3)
        let bytes = header.packet(payload: [9])
        #expect(bytes == [0x80, 0x00, 0x00, 0x01, 0, 0, 0, 2, 0, 0, 0, 3, 9])
        let parsed = try RTPHeader.parse(bytes)
        #expect(parsed.extensionProfile == nil)
        #expect(parsed.payloadRange == 12..<13)
        #expect(try RTPOneByteExtension.audioLevel(in: bytes, header: parsed) == nil)
    }

    @Test func csrcsRoundTrip() throws {
        let header = RTPHeader(payloadType: 111, sequenceNumber: 7, timestamp: 8, ssrc: 9, csrcs: [0x0102_0304, 5])
        let bytes = header.packet(payload: [0xAA])
        #expect(bytes[0] == 0x82)
        #expect(Array(bytes[12..<20]) == [1, 2, 3, 4, 0, 0, 0, 5])
        let parsed = try RTPHeader.parse(bytes)
        #expect(parsed.csrcs == [0x0102_0304, 5])
        #expect(parsed.payloadRange == 20..<21)
    }

    @Test func paddingIsExcludedFromThePayload() throws {
        var bytes = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: 1).packet(payload: [
            7, 7, 0, 0, 3,
        ])
        bytes[0] |= 0x20
        let parsed = try RTPHeader.parse(bytes)
        #expect(parsed.paddingLength == 3)
        #expect(parsed.payloadRange == 12..<14)
    }

    @Test func malformedPacketsAreTypedErrors() {
        #expect(throws: RTPParseError.truncated(needed: 12, available: 11)) {
            try RTPHeader.parse(Array(opusVector[..<11]))
        }
        var version1 = opusVector
        version1[0] = 0x50
        #expect(throws: RTPParseError.badVersion(1)) { try RTPHeader.parse(version1) }
        var csrcs = opusVector
        csrcs[0] = 0x8F
        #expect(throws: RTPParseError.truncated(needed: 72, available: 24)) { try RTPHeader.parse(csrcs) }
        var longExtension = opusVector
        longExtension[15] = 3
        #expect(throws: RTPParseError.extensionOverrun(words: 3, available: 8)) { try RTPHeader.parse(longExtension) }
        var zeroPadding = opusVector
        zeroPadding[0] |= 0x20
        zeroPadding[23] = 0
        #expect(throws: RTPParseError.badPadding(count: 0, available: 4)) { try RTPHeader.parse(zeroPadding) }
        var hugePadding = zeroPadding
        hugePadding[23] = 5
        #expect(throws: RTPParseError.badPadding(count: 5, available: 4)) { try RTPHeader.parse(hugePadding) }
        #expect(throws: RTPParseError.truncated(needed: 16, available: 14)) {
            try RTPHeader.parse(Array(opusVector[..<14]))
        }
    }

    /// No length field tells RTP where a packet ends, so a cut inside the header is an error and a cut in the
    /// payload only shortens the payload.
    @Test func everyTruncationIsAnErrorOrAShorterPayload() throws {
        let whole = try RTPHeader.parse(opusVector)
        for length in 0..<opusVector.count {
            let prefix = Array(opusVector[..<length])
            if length < whole.headerLength {
                #expect(throws: RTPParseError.self, "cut at \(length)") { try RTPHeader.parse(prefix) }
            } else {
                let parsed = try RTPHeader.parse(prefix)
                #expect(parsed.payloadRange == whole.headerLength..<length)
                #expect(parsed.sequenceNumber == whole.sequenceNumber)
            }
        }
    }

    @Test func parsingInsideALargerBufferGivesTheSameHeader() throws {
        let framed = [0xFF, 0xFF, 0xFF] + opusVector + [0xEE]
        let header = try framed.withUnsafeBytes { bytes in
            try RTPHeader.parse(UnsafeRawBufferPointer(rebasing: bytes[3..<(3 + opusVector.count)]))
        }
        #expect(header == (try RTPHeader.parse(opusVector)))
    }

    /// Every value of every byte: a header or a typed error, and the ranges always lie inside the packet.
    @Test func everyByteChangedParsesOrFailsCleanly() {
        var parsedCount = 0
        var failedCount = 0
        for index in opusVector.indices {
            for value in 0...255 {
                var bytes = opusVector
                bytes[index] = UInt8(value)
                do {
                    let header = try RTPHeader.parse(bytes)
                    parsedCount += 1
                    #expect(header.payloadRange.lowerBound >= RTPHeader.fixedLength)
                    #expect(header.payloadRange.upperBound <= bytes.count)
                    #expect(header.extensionRange.upperBound <= header.payloadRange.lowerBound)
                    _ = try? RTPOneByteExtension.elements(in: bytes, header: header)
                    _ = try? RTPOneByteExtension.audioLevel(in: bytes, header: header)
                } catch {
                    failedCount += 1
                }
            }
        }
        #expect(parsedCount + failedCount == opusVector.count * 256)
        // Byte 0 with a version other than 2 fails for 3 of every 4 values.
        #expect(failedCount >= 192)
    }

    @Test func randomDatagramsNeverCrash() {
        var generator = RTPRandom(seed: 42)
        var valid = 0
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 64)
            var bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if !bytes.isEmpty, generator.next() % 2 == 0 { bytes[0] = 0x80 | (bytes[0] & 0x3F) }
            if let header = try? RTPHeader.parse(bytes) {
                valid += 1
                #expect(header.payloadRange.upperBound <= bytes.count)
                _ = try? RTPOneByteExtension.audioLevel(in: bytes, header: header)
            }
        }
        #expect(valid > 0)
    }
}

@Suite struct RTPExtensionTests {
    func packet(extension words: [UInt8]) -> [UInt8] {
        [0x90, 111, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0, UInt8(words.count / 4)] + words + [0xAB]
    }

    @Test func paddingBytesBetweenElementsAreSkipped() throws {
        let bytes = packet(extension: [0x00, 0x00, 0x21, 0xAA, 0xBB, 0x10, 0x7F, 0x00])
        let header = try RTPHeader.parse(bytes)
        #expect(
            try RTPOneByteExtension.elements(in: bytes, header: header) == [
                RTPExtensionElement(id: 2, data: [0xAA, 0xBB]), RTPExtensionElement(id: 1, data: [0x7F]),
            ])
        #expect(
            try RTPOneByteExtension.audioLevel(in: bytes, header: header) == RTPAudioLevel(level: 127, voice: false))
    }

    @Test func idFifteenStopsTheReader() throws {
        let bytes = packet(extension: [0xF0, 0x10, 0x05, 0x00])
        let header = try RTPHeader.parse(bytes)
        #expect(try RTPOneByteExtension.audioLevel(in: bytes, header: header) == nil)
        #expect(try RTPOneByteExtension.elements(in: bytes, header: header) == [])
    }

    @Test func malformedElementsAreTypedErrors() throws {
        let overrun = packet(extension: [0x13, 0x01, 0x02, 0x03])
        let header = try RTPHeader.parse(overrun)
        #expect(throws: RTPExtensionError.elementOverrun(id: 1, offset: 16)) {
            try RTPOneByteExtension.audioLevel(in: overrun, header: header)
        }
        let twoBytes = packet(extension: [0x11, 0x01, 0x02, 0x00])
        #expect(throws: RTPExtensionError.badAudioLevelLength(2)) {
            try RTPOneByteExtension.audioLevel(in: twoBytes, header: try RTPHeader.parse(twoBytes))
        }
        var twoByteProfile = packet(extension: [0x01, 0x01, 0x05, 0x00])
        twoByteProfile[12] = 0x10
        twoByteProfile[13] = 0x00
        #expect(throws: RTPExtensionError.notOneByteProfile(0x1000)) {
            try RTPOneByteExtension.audioLevel(in: twoByteProfile, header: try RTPHeader.parse(twoByteProfile))
        }
    }

    @Test func audioLevelsFromDBov() {
        #expect(RTPAudioLevel(dBov: -30.4, voice: true).byte == 0x80 | 30)
        #expect(RTPAudioLevel(dBov: 3, voice: false).level == 0)
        #expect(RTPAudioLevel(dBov: -200, voice: false).level == 127)
        #expect(RTPAudioLevel(dBov: .nan, voice: false).level == 127)
        #expect(RTPAudioLevel(byte: 0xFF) == RTPAudioLevel(level: 127, voice: true))
    }

    @Test func elementsAreWrittenAndPaddedToAWord() throws {
        let header = RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 0, ssrc: 1)
        let elements = [
            RTPExtensionElement(id: 3, data: [1, 2, 3]), .audioLevel(RTPAudioLevel(level: 10, voice: false)),
        ]
        let bytes = header.packet(extensionElements: elements, payload: [0x55])
        #expect(Array(bytes[12..<24]) == [0xBE, 0xDE, 0x00, 0x02, 0x32, 1, 2, 3, 0x10, 0x0A, 0x00, 0x00])
        let parsed = try RTPHeader.parse(bytes)
        #expect(try RTPOneByteExtension.elements(in: bytes, header: parsed) == elements)
        #expect(parsed.payloadRange == 24..<25)
    }
}

@Suite struct RTPReceiveStatisticsTests {
    @Test func aNewSourceNeedsTwoPacketsInARow() {
        var stats = RTPReceiveStatistics()
        #expect(stats.record(ssrc: 5, sequence: 100, timestamp: 0, arrival: 0) == .newSource)
        #expect(stats.received == 0)
        #expect(stats.record(ssrc: 5, sequence: 101, timestamp: 960, arrival: 960) == .valid)
        #expect(stats.received == 1)
        #expect(stats.record(ssrc: 5, sequence: 102, timestamp: 1920, arrival: 1920) == .valid)
        #expect(stats.expected == 2)
        #expect(stats.cumulativeLost == 0)
    }

    @Test func sequenceWrapCountsACycle() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        #expect(stats.record(ssrc: 1, sequence: 65534, timestamp: 0, arrival: 0) == .newSource)
        for (index, sequence) in [UInt16(65535), 0, 1].enumerated() {
            let time = Int64(index + 1) * 960
            #expect(stats.record(ssrc: 1, sequence: sequence, timestamp: UInt32(time), arrival: time) == .valid)
        }
        #expect(stats.extendedHighestSequence == 65537)
        #expect(stats.expected == 4)
        #expect(stats.received == 4)
    }

    @Test func lossLateAndDuplicatePackets() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        _ = stats.record(ssrc: 1, sequence: 10, timestamp: 0, arrival: 0)
        #expect(stats.record(ssrc: 1, sequence: 13, timestamp: 2880, arrival: 2880) == .valid)
        #expect(stats.cumulativeLost == 2)
        #expect(stats.record(ssrc: 1, sequence: 11, timestamp: 960, arrival: 3000) == .lateOrDuplicate)
        #expect(stats.cumulativeLost == 1)
        #expect(stats.record(ssrc: 1, sequence: 11, timestamp: 960, arrival: 3001) == .lateOrDuplicate)
        #expect(stats.cumulativeLost == 0)
    }

    /// Each run of skipped sequence numbers is one run of loss, across a wrap; taking them starts afresh, and a
    /// stream that lost nothing since has none.
    @Test func runsOfLossAreCountedAndTaken() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        #expect(stats.takeLossRuns() == nil)
        _ = stats.record(ssrc: 9, sequence: 65_530, timestamp: 0, arrival: 0)
        // 65531 lost (a run of 1), 65533–65535 and 0 lost (a run of 4), then 2 lost (a run of 1).
        for sequence: UInt16 in [65_532, 1, 3, 4] {
            _ = stats.record(ssrc: 9, sequence: sequence, timestamp: 0, arrival: 0)
        }
        #expect(stats.takeLossRuns() == RTCPLossRuns(ssrc: 9, runs: 3, lost: 6))
        #expect(stats.takeLossRuns() == nil)
        _ = stats.record(ssrc: 9, sequence: 5, timestamp: 0, arrival: 0)
        #expect(stats.takeLossRuns() == nil)
        _ = stats.record(ssrc: 9, sequence: 8, timestamp: 0, arrival: 0)
        #expect(stats.takeLossRuns() == RTCPLossRuns(ssrc: 9, runs: 1, lost: 2))
    }

    @Test func aLargeJumpIsConfirmedByTheNextPacket() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        _ = stats.record(ssrc: 1, sequence: 10, timestamp: 0, arrival: 0)
        #expect(stats.record(ssrc: 1, sequence: 20_000, timestamp: 960, arrival: 960) == .badJump)
        #expect(stats.record(ssrc: 1, sequence: 11, timestamp: 960, arrival: 960) == .valid)
        #expect(stats.record(ssrc: 1, sequence: 30_000, timestamp: 1920, arrival: 1920) == .badJump)
        #expect(stats.record(ssrc: 1, sequence: 30_001, timestamp: 2880, arrival: 2880) == .restarted)
        #expect(stats.restarts == 1)
        #expect(stats.expected == 1)
        #expect(stats.received == 1)
    }

    @Test func aNewSSRCResetsTheStatistics() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        _ = stats.record(ssrc: 1, sequence: 10, timestamp: 0, arrival: 0)
        _ = stats.record(ssrc: 1, sequence: 11, timestamp: 960, arrival: 960)
        #expect(stats.record(ssrc: 2, sequence: 500, timestamp: 77, arrival: 1000) == .newSource)
        #expect(stats.ssrc == 2)
        #expect(stats.received == 1)
        #expect(stats.restarts == 1)
    }

    @Test func jitterIgnoresDTXGapsAndFollowsTransitChanges() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        _ = stats.record(ssrc: 1, sequence: 1, timestamp: 1000, arrival: 5000)
        _ = stats.record(ssrc: 1, sequence: 2, timestamp: 1960, arrival: 5960)
        // Two seconds of DTX silence: the timestamp and the arrival jump together.
        #expect(stats.record(ssrc: 1, sequence: 3, timestamp: 97_960, arrival: 101_960) == .valid)
        #expect(stats.jitter == 0)
        #expect(stats.lastTimestamp == 97_960)
        // One packet 160 units late: J = 160/16 = 10.
        _ = stats.record(ssrc: 1, sequence: 4, timestamp: 98_920, arrival: 103_080)
        #expect(stats.jitter == 10)
    }

    @Test func reportBlocksCarryTheIntervalLossFraction() {
        var stats = RTPReceiveStatistics(minSequential: 0)
        var sequence: UInt16 = 0
        for index in 0..<100 {
            if index % 10 != 3 || index == 0 {
                _ = stats.record(ssrc: 9, sequence: sequence, timestamp: 0, arrival: 0)
            }
            sequence &+= 1
        }
        let block = stats.reportBlock()
        #expect(block.ssrc == 9)
        #expect(block.cumulativeLost == 10)
        #expect(block.fractionLost == 25)
        #expect(block.lossPercent == 10)
        #expect(block.extendedHighestSequence == 99)
        _ = stats.record(ssrc: 9, sequence: 100, timestamp: 0, arrival: 0)
        #expect(stats.reportBlock().fractionLost == 0)
    }
}

@Suite struct RTCPTests {
    let receiverReport = RTCPPacket.receiverReport(
        ssrc: 0x0102_0304,
        reports: [
            RTCPReportBlock(
                ssrc: 0xAABB_CCDD, fractionLost: 25, cumulativeLost: -2, extendedHighestSequence: 0x0001_0005,
                jitter: 12, lastSenderReport: 7, delaySinceLastSenderReport: 8)
        ])

    @Test func receiverReportBytes() throws {
        let bytes = receiverReport.bytes()
        #expect(
            bytes == [
                0x81, 201, 0x00, 0x07, 0x01, 0x02, 0x03, 0x04,
                0xAA, 0xBB, 0xCC, 0xDD, 25, 0xFF, 0xFF, 0xFE, 0x00, 0x01, 0x00, 0x05,
                0, 0, 0, 12, 0, 0, 0, 7, 0, 0, 0, 8,
            ])
        #expect(try RTCPPacket.parseCompound(bytes) == [receiverReport])
        #expect(bytes.withUnsafeBytes { RTCPPacket.isRTCP($0) })
        #expect(!opusVector.withUnsafeBytes { RTCPPacket.isRTCP($0) })
    }

    @Test func senderReportRoundTripsInACompoundWithSDES() throws {
        let sender = RTCPPacket.senderReport(
            ssrc: 1,
            info: RTCPSenderInfo(ntpTimestamp: 0x0102_0304_0506_0708, rtpTimestamp: 9, packetCount: 10, octetCount: 11),
            reports: [])
        let sdes: [UInt8] = [0x81, 202, 0x00, 0x01, 0, 0, 0, 1]
        let bytes = sender.bytes() + sdes + receiverReport.bytes()
        #expect(try RTCPPacket.parseCompound(bytes) == [sender, receiverReport])
    }

    /// The consent check's APP packet, byte by byte, after a report; an APP packet of another name or length is
    /// skipped like any other.
    @Test func aConsentNonceRoundTripsAfterAReportAndOtherAppPacketsAreSkipped() throws {
        let nonce = (0..<16).map { UInt8($0) &* 17 }
        let consent = RTCPPacket.consent(ssrc: 0x0102_0304, nonce: nonce)
        #expect(consent.bytes() == [0x80, 204, 0x00, 0x06, 1, 2, 3, 4] + Array("CRCN".utf8) + nonce)
        let bytes = receiverReport.bytes() + consent.bytes()
        #expect(try RTCPPacket.parseCompound(bytes) == [receiverReport, consent])
        let otherName: [UInt8] = [0x80, 204, 0x00, 0x06, 1, 2, 3, 4] + Array("XXXX".utf8) + nonce
        let shorter: [UInt8] = [0x80, 204, 0x00, 0x05, 1, 2, 3, 4] + Array("CRCN".utf8) + nonce.prefix(12)
        #expect(try RTCPPacket.parseCompound(receiverReport.bytes() + otherName + shorter) == [receiverReport])
        // Alone it is not a compound packet: one starts with a report.
        #expect(throws: RTCPParseError.notAReport(packetType: 204)) { try RTCPPacket.parseCompound(consent.bytes()) }
    }

    /// The loss-runs APP packet, byte by byte, after a report; a length that does not fit whole entries, or more
    /// entries than a packet carries, is skipped like any other APP packet; no cut of it throws anything but a
    /// parse error.
    @Test func lossRunsRoundTripAfterAReportAndMalformedOnesAreSkipped() throws {
        let runs = RTCPPacket.lossRuns(
            ssrc: 0x0102_0304,
            entries: [RTCPLossRuns(ssrc: 0x0A0B_0C0D, runs: 3, lost: 0x0109), RTCPLossRuns(ssrc: 7, runs: 0, lost: 0)])
        #expect(
            runs.bytes()
                == [0x80, 204, 0x00, 0x06, 1, 2, 3, 4] + Array("CRLR".utf8)
                + [0x0A, 0x0B, 0x0C, 0x0D, 0x00, 0x03, 0x01, 0x09, 0, 0, 0, 7, 0, 0, 0, 0])
        #expect(try RTCPPacket.parseCompound(receiverReport.bytes() + runs.bytes()) == [receiverReport, runs])
        let empty = RTCPPacket.lossRuns(ssrc: 5, entries: [])
        #expect(try RTCPPacket.parseCompound(receiverReport.bytes() + empty.bytes()) == [receiverReport, empty])
        // Half an entry: the length says 12 + 4 bytes.
        let half: [UInt8] = [0x80, 204, 0x00, 0x03, 1, 2, 3, 4] + Array("CRLR".utf8) + [0, 0, 0, 1]
        #expect(try RTCPPacket.parseCompound(receiverReport.bytes() + half) == [receiverReport])
        // One more entry than a packet may carry is left out when written, and skipped when read.
        let many = (0...RTCPPacket.maxLossRunsEntries).map { RTCPLossRuns(ssrc: UInt32($0), runs: 1, lost: 1) }
        #expect(
            RTCPPacket.lossRuns(ssrc: 1, entries: many).bytes().count == 12 + 8 * RTCPPacket.maxLossRunsEntries)
        var tooMany: [UInt8] = [0x80, 204, 0x00, UInt8(2 + 2 * many.count), 0, 0, 0, 1] + Array("CRLR".utf8)
        for entry in many { tooMany += [0, 0, 0, UInt8(entry.ssrc), 0, 1, 0, 1] }
        #expect(try RTCPPacket.parseCompound(receiverReport.bytes() + tooMany) == [receiverReport])
        let whole = receiverReport.bytes() + runs.bytes()
        for length in 1..<whole.count {
            do {
                _ = try RTCPPacket.parseCompound(Array(whole[..<length]))
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test func everyTruncationAndEveryByteChangeIsHandled() throws {
        let bytes = receiverReport.bytes()
        for length in 1..<bytes.count {
            #expect(throws: RTCPParseError.self, "cut at \(length)") {
                try RTCPPacket.parseCompound(Array(bytes[..<length]))
            }
        }
        for index in bytes.indices {
            for value in 0...255 {
                var changed = bytes
                changed[index] = UInt8(value)
                _ = try? RTCPPacket.parseCompound(changed)
            }
        }
        var overrun = bytes
        overrun[0] = 0x82
        #expect(throws: RTCPParseError.reportCountOverrun(count: 2, length: 32)) {
            try RTCPPacket.parseCompound(overrun)
        }
        #expect(throws: RTCPParseError.notAReport(packetType: 202)) {
            try RTCPPacket.parseCompound([0x81, 202, 0x00, 0x01, 0, 0, 0, 1])
        }
    }
}

/// A small deterministic generator so random tests repeat exactly.
struct RTPRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
