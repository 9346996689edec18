import MediaTransport
import MediaWire

/// The media plane's parsers: RTP with its header extensions, the receive statistics fed by hostile sequence
/// numbers, RTCP, and the SRTP/SRTCP unprotect path.
enum MediaChecks {
    // MARK: RTP

    static func rtp(_ input: [UInt8]) throws(FuzzFailure) {
        let header: RTPHeader
        do {
            header = try RTPHeader.parse(input)
        } catch {
            try expect(!error.description.isEmpty && !error.counterName.isEmpty, "an error without words")
            try statistics(input)
            return
        }
        let count = input.count
        try expect(header.csrcs.count == Int(input[0] & 0x0F), "\(header.csrcs.count) CSRCs read")
        try expect(
            header.payloadRange.lowerBound >= RTPHeader.fixedLength + 4 * header.csrcs.count
                && header.payloadRange.upperBound + header.paddingLength == count,
            "payload \(header.payloadRange) and padding \(header.paddingLength) in \(count) bytes")
        try expect(
            header.extensionRange.upperBound <= header.payloadRange.lowerBound
                && (header.extensionProfile != nil || header.extensionRange.isEmpty),
            "extension \(header.extensionRange) before payload \(header.payloadRange)")
        let payload = Array(input[header.payloadRange])

        guard let profile = header.extensionProfile else {
            let level = Result(catching: { () throws(RTPExtensionError) in
                try RTPOneByteExtension.audioLevel(in: input, header: header)
            })
            try expect(level == .success(nil), "a level without an extension: \(level)")
            let rebuilt = rebuild(header, elements: [], payload: payload)
            try compare(rebuilt, header, elements: [], payload: payload)
            return
        }
        guard profile == RTPHeader.oneByteExtensionProfile else {
            var refusal: RTPExtensionError?
            do {
                _ = try RTPOneByteExtension.elements(in: input, header: header)
            } catch {
                refusal = error
            }
            try expect(refusal == .notOneByteProfile(profile), "profile \(profile) read as one-byte elements")
            return
        }
        let elements: [RTPExtensionElement]
        do {
            elements = try RTPOneByteExtension.elements(in: input, header: header)
        } catch {
            if case .elementOverrun(let id, _) = error {
                try expect(id != 0 && id != 15, "an overrun reported for element \(id)")
            }
            return
        }
        for element in elements {
            try expect((1...14).contains(element.id) && (1...16).contains(element.data.count), "element \(element)")
        }
        // The in-place search finds each ID's first element, and the level is read from ID 1 when it is one byte.
        for id in UInt8(1)...14 {
            let first = elements.first { $0.id == id }
            let found: Result<Range<Int>?, RTPExtensionError> = input.withUnsafeBytes { bytes in
                do throws(RTPExtensionError) {
                    return .success(try RTPOneByteExtension.find(id: id, in: bytes, header: header))
                } catch { return .failure(error) }
            }
            guard case .success(let range) = found else {
                throw FuzzFailure("find(\(id)) failed where elements() succeeded: \(found)")
            }
            try expect(range.map { Array(input[$0]) } == first?.data, "find(\(id)) gives \(String(describing: range))")
        }
        let level = Result(catching: { () throws(RTPExtensionError) in
            try RTPOneByteExtension.audioLevel(in: input, header: header)
        })
        let levelElement = elements.first { $0.id == RTPAudioProfile.audioLevelExtensionID }
        switch (levelElement, level) {
        case (nil, .success(nil)): break
        case (let element?, .success(let found?)):
            try expect(element.data == [found.byte], "level \(found) from \(element)")
        case (let element?, .failure(.badAudioLevelLength)):
            try expect(element.data.count != 1, "a one-byte level element refused")
        default: throw FuzzFailure("level \(level) for element \(String(describing: levelElement))")
        }
        let rebuilt = rebuild(header, elements: elements, payload: payload)
        try compare(rebuilt, header, elements: elements, payload: payload)
    }

    static func rebuild(_ header: RTPHeader, elements: [RTPExtensionElement], payload: [UInt8]) -> [UInt8] {
        RTPHeader(
            marker: header.marker, payloadType: header.payloadType, sequenceNumber: header.sequenceNumber,
            timestamp: header.timestamp, ssrc: header.ssrc, csrcs: header.csrcs
        ).packet(extensionElements: elements, payload: payload)
    }

    static func compare(
        _ packet: [UInt8], _ header: RTPHeader, elements: [RTPExtensionElement], payload: [UInt8]
    ) throws(FuzzFailure) {
        let again: RTPHeader
        do {
            again = try RTPHeader.parse(packet)
        } catch {
            throw FuzzFailure("a rebuilt packet does not parse: \(error)")
        }
        try expect(
            again.marker == header.marker && again.payloadType == header.payloadType
                && again.sequenceNumber == header.sequenceNumber && again.timestamp == header.timestamp
                && again.ssrc == header.ssrc && again.csrcs == header.csrcs,
            "rebuilt header \(again) differs from \(header)")
        try expect(Array(packet[again.payloadRange]) == payload, "rebuilt payload differs")
        let elementsAgain = try? RTPOneByteExtension.elements(in: packet, header: again)
        try expect(
            elementsAgain == elements, "rebuilt elements \(String(describing: elementsAgain)) differ from \(elements)")
    }

    /// The receive statistics fed records of 8 bytes: an SSRC choice, a sequence number, a timestamp and an
    /// arrival step; a report block after every fourth.
    static func statistics(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        var statistics = RTPReceiveStatistics(minSequential: Int(choices.byte() % 3))
        var arrival: Int64 = 0
        var index = 0
        while index + 8 <= input.count {
            let ssrc = UInt32(choices.byte() % 3)
            let sequence = choices.uint16()
            let timestamp = choices.uint32()
            arrival &+= Int64(choices.byte()) * 97
            _ = statistics.record(ssrc: ssrc, sequence: sequence, timestamp: timestamp, arrival: arrival)
            index += 8
            if index % 32 == 0 {
                let block = statistics.reportBlock()
                try expect(
                    (-0x80_0000...0x7F_FFFF).contains(block.cumulativeLost), "cumulative loss \(block.cumulativeLost)")
                try expect((0...100).contains(block.lossPercent), "loss \(block.lossPercent) %")
            }
        }
    }

    // MARK: RTCP

    static func rtcp(_ input: [UInt8]) throws(FuzzFailure) {
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parseCompound(input)
        } catch {
            try expect(!error.description.isEmpty && !error.counterName.isEmpty, "an error without words")
            return
        }
        let bytes = packets.flatMap { $0.bytes() }
        let again = try? RTCPPacket.parseCompound(bytes)
        try expect(again == packets, "reports \(packets) re-encode to \(String(describing: again))")
    }

    // MARK: SRTP

    static let key = SRTPKey(bytes: (0..<30).map { UInt8($0) &* 7 &+ 3 })!
    /// One inbound session for hostile bytes, kept for the whole run: libsrtp adds a stream for an SSRC only once a
    /// packet of it authenticated, so random bytes leave it as it was. Keeping it also keeps libsrtp's crypto
    /// backend (NSS on Debian) initialised; without any session alive, every new one loads it again.
    static let hostile = try? SRTPSession(key: key, direction: .inbound)

    static func session(_ direction: SRTPSession.Direction) throws(FuzzFailure) -> SRTPSession {
        do {
            return try SRTPSession(key: key, direction: direction)
        } catch {
            throw FuzzFailure("no SRTP session: \(error)")
        }
    }

    /// Input: a byte choosing which byte to change, one for its new value, then a datagram read as SRTP, as
    /// SRTCP, as a plain RTP packet and as a plain RTCP packet.
    static func srtp(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let position = Int(choices.uint16())
        let replacement = choices.byte()
        let datagram = choices.rest
        guard datagram.count <= 1500 else { return }

        // Hostile bytes: refused, or (for a genuine packet under this key) the packet that protects to them.
        guard let hostile else { throw FuzzFailure("no SRTP session") }
        if let plain = try? hostile.unprotect(datagram) {
            try expect(
                plain.count >= 12 && plain.count <= datagram.count, "\(plain.count) bytes out of \(datagram.count)")
            let protected = try? session(.outbound).protect(plain)
            try expect(protected == datagram, "unprotected bytes do not protect back to the datagram")
        }
        if let plain = try? hostile.unprotect(datagram, rtcp: true) {
            try expect(
                plain.count >= 8 && plain.count <= datagram.count, "\(plain.count) bytes out of \(datagram.count)")
        }

        // A plain packet protects, unprotects to itself once, is refused as a replay, and refused when changed.
        try roundTrip(datagram, rtcp: false, position: position, replacement: replacement)
        try roundTrip(datagram, rtcp: true, position: position, replacement: replacement)
    }

    static func roundTrip(_ plain: [UInt8], rtcp: Bool, position: Int, replacement: UInt8) throws(FuzzFailure) {
        if rtcp {
            guard plain.count >= 8, plain[0] >> 6 == 2 else { return }
        } else {
            guard (try? RTPHeader.parse(plain)) != nil else { return }
        }
        let sender = try session(.outbound)
        // libsrtp refuses some headers it cannot protect (an extension longer than the packet says).
        guard let protected = try? sender.protect(plain, rtcp: rtcp) else { return }
        try expect(protected.count <= plain.count + SRTPSession.maxTrailer, "a trailer over \(SRTPSession.maxTrailer)")
        let receiver = try session(.inbound)
        // First the packet with one byte changed: refused, and (failing authentication) not taken as seen.
        var changed = protected
        let index = position % changed.count
        if changed[index] != replacement {
            changed[index] = replacement
            if (try? receiver.unprotect(changed, rtcp: rtcp)) != nil {
                throw FuzzFailure("a protected packet with byte \(index) changed was accepted")
            }
        }
        let opened = Result { () throws(SRTPError) in try receiver.unprotect(protected, rtcp: rtcp) }
        try expect(opened == .success(plain), "a packet this key protected opens as \(opened)")
        let replay = Result { () throws(SRTPError) in try receiver.unprotect(protected, rtcp: rtcp) }
        try expect(replay == .failure(.replayed), "a replay gives \(replay)")
    }

    // MARK: Seeds

    static func audioPacket(sequence: UInt16, level: UInt8) -> [UInt8] {
        RTPHeader(
            payloadType: RTPAudioProfile.opusPayloadType, sequenceNumber: sequence, timestamp: UInt32(sequence) * 960,
            ssrc: 0x1234_5678
        ).packet(extensionElements: [.audioLevel(RTPAudioLevel(level: level, voice: true))], payload: [0xFC, 1, 2, 3])
    }

    static func rtpSeeds() -> [[UInt8]] {
        var seeds = [audioPacket(sequence: 1, level: 20), audioPacket(sequence: 65535, level: 127)]
        seeds.append(
            RTPHeader(marker: true, payloadType: 111, sequenceNumber: 7, timestamp: 9, ssrc: 1, csrcs: [2, 3]).packet(
                extensionElements: [
                    RTPExtensionElement(id: 3, data: [1, 2, 3, 4, 5]),
                    .audioLevel(RTPAudioLevel(level: 3, voice: false)),
                ], payload: []))
        // Padding, a two-byte profile, and sequence records for the statistics.
        seeds.append([0xA0, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 9, 9, 0, 0, 3])
        seeds.append([0x90, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0x10, 0x00, 0, 1, 0x11, 0x22, 0, 0])
        seeds.append([2, 0, 0, 1, 0, 0, 3, 192, 1, 0, 0, 2, 0, 0, 3, 192, 1, 1, 0xFF, 0xF0, 0, 0, 0, 0, 1])
        return seeds
    }

    // MARK: RED

    /// An RFC 2198 payload: refused cleanly, or blocks in order inside the payload, the primary to its end; one
    /// whose blocks all carry the primary's payload type encodes back to the same bytes; and a packet carrying
    /// it, cut to its primary in place, parses with exactly the primary's bytes as its payload.
    static func red(_ input: [UInt8]) throws(FuzzFailure) {
        let red: REDPayload
        do {
            red = try REDPayload.parse(input, redPayloadType: RTPAudioProfile.redPayloadType)
        } catch {
            try expect(!error.description.isEmpty, "an error without words")
            return
        }
        var end = 0
        for block in red.redundantBlocks + [red.primary] {
            try expect(block.range.lowerBound >= end && block.range.upperBound <= input.count, "block \(block)")
            end = block.range.upperBound
        }
        try expect(red.primary.range.upperBound == input.count, "the primary ends at \(red.primary.range)")
        let primary = Array(input[red.primary.range])
        if red.redundantBlocks.allSatisfy({ $0.payloadType == red.primary.payloadType && $0.timestampOffset > 0 }) {
            let earlier = red.redundantBlocks.map {
                REDPayload.Earlier(timestampOffset: $0.timestampOffset, bytes: Array(input[$0.range]))
            }
            let again = REDPayload.encode(primary: primary, payloadType: red.primary.payloadType, earlier: earlier)
            try expect(again == input, "encoded again as \(again)")
        }
        let header = RTPHeader(payloadType: RTPAudioProfile.redPayloadType, sequenceNumber: 1, timestamp: 2, ssrc: 4)
        var packet = header.packet(payload: input)
        let parsed: RTPHeader
        do {
            parsed = try RTPHeader.parse(packet)
        } catch {
            throw FuzzFailure("a packet made of a RED payload does not parse: \(error)")
        }
        let length = packet.withUnsafeMutableBytes {
            REDPayload.stripToPrimary($0, length: $0.count, header: parsed, red: red)
        }
        packet.removeLast(packet.count - length)
        let cut = try? RTPHeader.parse(packet)
        try expect(
            cut?.payloadType == red.primary.payloadType && cut.map { Array(packet[$0.payloadRange]) } == primary,
            "cut to \(packet)")
    }

    static func redSeeds() -> [[UInt8]] {
        [
            REDPayload.encode(primary: [1, 2, 3], payloadType: 111, earlier: []),
            REDPayload.encode(
                primary: [9, 8, 7], payloadType: 111,
                earlier: [REDPayload.Earlier(timestampOffset: 960, bytes: [4, 5])]),
            REDPayload.encode(
                primary: Array(0..<60), payloadType: 111,
                earlier: [
                    REDPayload.Earlier(timestampOffset: 1920, bytes: Array(0..<55)),
                    REDPayload.Earlier(timestampOffset: 960, bytes: Array(0..<58)),
                ]),
            [0xEF, 0x0F, 0x00, 0x02, 0x6F, 1],
        ]
    }

    static func rtcpSeeds() -> [[UInt8]] {
        let block = RTCPReportBlock(
            ssrc: 0x1234_5678, fractionLost: 25, cumulativeLost: -3, extendedHighestSequence: 70_000, jitter: 120,
            lastSenderReport: 5, delaySinceLastSenderReport: 6)
        let sender = RTCPPacket.senderReport(
            ssrc: 1, info: RTCPSenderInfo(ntpTimestamp: 1 << 40, rtpTimestamp: 960, packetCount: 3, octetCount: 99),
            reports: [block])
        let receiver = RTCPPacket.receiverReport(ssrc: 2, reports: [block, block])
        let sdes: [UInt8] = [0x81, 202, 0, 2, 0, 0, 0, 1, 1, 2, 0x61, 0]
        return [sender.bytes(), receiver.bytes() + sdes, RTCPPacket.receiverReport(ssrc: 9, reports: []).bytes()]
    }

    static func srtpSeeds() -> [[UInt8]] {
        let prefix: [UInt8] = [0, 13, 0x55]
        let audio = audioPacket(sequence: 5, level: 30)
        let report = RTCPPacket.receiverReport(ssrc: 0x1234_5678, reports: []).bytes()
        var seeds = [prefix + audio, prefix + report]
        if let protected = try? SRTPSession(key: key, direction: .outbound).protect(audio) {
            seeds.append(prefix + protected)
        }
        if let protected = try? SRTPSession(key: key, direction: .outbound).protect(report, rtcp: true) {
            seeds.append(prefix + protected)
        }
        return seeds
    }
}
