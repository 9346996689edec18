/// Why bytes are not a valid RTCP compound packet.
public enum RTCPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    case truncated(needed: Int, available: Int)
    case badVersion(UInt8)
    /// The report count needs more bytes than the packet's length field gives.
    case reportCountOverrun(count: Int, length: Int)
    /// A compound packet must start with a sender or receiver report (RFC 3550 §6.1).
    case notAReport(packetType: UInt8)

    public var description: String {
        switch self {
        case .truncated(let needed, let available): "RTCP: needs \(needed) bytes, has \(available)"
        case .badVersion(let version): "RTCP: version \(version), not 2"
        case .reportCountOverrun(let count, let length): "RTCP: \(count) report blocks do not fit in \(length) bytes"
        case .notAReport(let type): "RTCP: a compound packet starting with type \(type), not a report"
        }
    }

    public var counterName: String {
        switch self {
        case .truncated: "rtcp_truncated"
        case .badVersion: "rtcp_bad_version"
        case .reportCountOverrun: "rtcp_report_overrun"
        case .notAReport: "rtcp_not_a_report"
        }
    }
}

/// A reception report block (RFC 3550 §6.4.1): how one source reaches this receiver.
public struct RTCPReportBlock: Sendable, Equatable {
    public static let length = 24

    public var ssrc: UInt32
    /// Packets lost since the previous report, as a fraction of 256.
    public var fractionLost: UInt8
    /// Packets lost since the start; a signed 24-bit field on the wire (clamped).
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in RTP clock units.
    public var jitter: UInt32
    public var lastSenderReport: UInt32
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32, jitter: UInt32,
        lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = min(0x7F_FFFF, max(-0x80_0000, cumulativeLost))
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// The loss fraction as a percentage, for the Opus encoder's expected loss.
    public var lossPercent: Int { (Int(fractionLost) * 100 + 128) / 256 }
}

/// The sender information of a sender report (RFC 3550 §6.4.1).
public struct RTCPSenderInfo: Sendable, Equatable {
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32

    public init(ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32) {
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }
}

/// How one source's packets were lost since the last report (the `CRLR` APP packet): how many, and in how many
/// runs of consecutive sequence numbers. `lost / runs` is the mean length of a burst, which a report block's
/// fraction lost cannot say: 10 % lost one packet at a time and 10 % lost three at a time read the same there.
public struct RTCPLossRuns: Sendable, Equatable {
    /// The entry's bytes on the wire.
    public static let length = 8

    public var ssrc: UInt32
    /// Runs of consecutive lost packets.
    public var runs: UInt16
    /// Packets lost in them.
    public var lost: UInt16

    public init(ssrc: UInt32, runs: UInt16, lost: UInt16) {
        self.ssrc = ssrc
        self.runs = runs
        self.lost = lost
    }
}

/// The RTCP packets Clubroom reads and writes: sender and receiver reports, the consent check and the loss runs
/// (APP packets). Other packet types in a compound packet (SDES, BYE, other APP packets) are skipped by their length.
public enum RTCPPacket: Sendable, Equatable {
    public static let senderReportType: UInt8 = 200
    public static let receiverReportType: UInt8 = 201
    public static let applicationType: UInt8 = 204
    /// The APP packet's name for a consent check.
    public static let consentName: [UInt8] = Array("CRCN".utf8)
    /// The bytes of a consent nonce.
    public static let consentNonceBytes = 16
    /// The APP packet's name for loss runs.
    public static let lossRunsName: [UInt8] = Array("CRLR".utf8)
    /// The most entries one loss-runs packet carries (the rest are left out).
    public static let maxLossRunsEntries = 31

    case senderReport(ssrc: UInt32, info: RTCPSenderInfo, reports: [RTCPReportBlock])
    case receiverReport(ssrc: UInt32, reports: [RTCPReportBlock])
    /// A consent check (as ICE's, RFC 7675): the server sends a nonce to an address it has not sent media to yet,
    /// and moves a peer's media there only once the peer answers from that address with the same nonce (an APP
    /// packet, RFC 3550 §6.7, named `CRCN`, after a report in the same compound packet). `ssrc` is the sender's.
    case consent(ssrc: UInt32, nonce: [UInt8])
    /// The loss runs of each source since the last report, after a report in the same compound packet (an APP
    /// packet named `CRLR`, subtype 0, entries of ``RTCPLossRuns/length`` bytes). A receiver says it of each
    /// speaker it hears; the server says it to a speaker of its stream (its listeners' together). `ssrc` is the
    /// sender's.
    case lossRuns(ssrc: UInt32, entries: [RTCPLossRuns])

    /// Whether a datagram looks like RTCP rather than RTP (RFC 5761 §4: payload types 64–95 on the wire).
    public static func isRTCP(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count >= 2 && (192...223).contains(packet[1])
    }

    /// The bytes of this packet (one packet, not compound; a report with more than 31 blocks keeps 31).
    public func bytes() -> [UInt8] {
        let (type, ssrc, info, reports): (UInt8, UInt32, RTCPSenderInfo?, [RTCPReportBlock])
        switch self {
        case .senderReport(let sender, let senderInfo, let blocks):
            (type, ssrc, info, reports) = (Self.senderReportType, sender, senderInfo, blocks)
        case .receiverReport(let sender, let blocks):
            (type, ssrc, info, reports) = (Self.receiverReportType, sender, nil, blocks)
        case .consent(let sender, let nonce):
            let data =
                Array(nonce.prefix(Self.consentNonceBytes))
                + [UInt8](repeating: 0, count: max(0, Self.consentNonceBytes - nonce.count))
            var out: [UInt8] = [0x80, Self.applicationType]
            Self.append16(&out, UInt16((12 + data.count) / 4 - 1))
            Self.append32(&out, sender)
            return out + Self.consentName + data
        case .lossRuns(let sender, let entries):
            let kept = entries.prefix(Self.maxLossRunsEntries)
            var out: [UInt8] = [0x80, Self.applicationType]
            Self.append16(&out, UInt16((12 + RTCPLossRuns.length * kept.count) / 4 - 1))
            Self.append32(&out, sender)
            out += Self.lossRunsName
            for entry in kept {
                Self.append32(&out, entry.ssrc)
                Self.append16(&out, entry.runs)
                Self.append16(&out, entry.lost)
            }
            return out
        }
        let blocks = reports.prefix(31)
        let length = 8 + (info == nil ? 0 : 20) + RTCPReportBlock.length * blocks.count
        var out: [UInt8] = []
        out.reserveCapacity(length)
        out.append(0x80 | UInt8(blocks.count))
        out.append(type)
        Self.append16(&out, UInt16(length / 4 - 1))
        Self.append32(&out, ssrc)
        if let info {
            Self.append32(&out, UInt32(truncatingIfNeeded: info.ntpTimestamp >> 32))
            Self.append32(&out, UInt32(truncatingIfNeeded: info.ntpTimestamp))
            Self.append32(&out, info.rtpTimestamp)
            Self.append32(&out, info.packetCount)
            Self.append32(&out, info.octetCount)
        }
        for block in blocks {
            Self.append32(&out, block.ssrc)
            out.append(block.fractionLost)
            let lost = UInt32(bitPattern: block.cumulativeLost) & 0xFF_FFFF
            out.append(UInt8(truncatingIfNeeded: lost >> 16))
            out.append(UInt8(truncatingIfNeeded: lost >> 8))
            out.append(UInt8(truncatingIfNeeded: lost))
            Self.append32(&out, block.extendedHighestSequence)
            Self.append32(&out, block.jitter)
            Self.append32(&out, block.lastSenderReport)
            Self.append32(&out, block.delaySinceLastSenderReport)
        }
        return out
    }

    /// Reads the reports of a compound RTCP packet; every length is checked.
    public static func parseCompound(_ bytes: [UInt8]) throws(RTCPParseError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            guard available >= 4 else { throw .truncated(needed: 4, available: available) }
            let version = bytes[offset] >> 6
            guard version == 2 else { throw .badVersion(version) }
            let count = Int(bytes[offset] & 0x1F)
            let type = bytes[offset + 1]
            let length = ((Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])) + 1) * 4
            guard available >= length else { throw .truncated(needed: length, available: available) }
            if offset == 0, type != senderReportType, type != receiverReportType { throw .notAReport(packetType: type) }
            switch type {
            case senderReportType, receiverReportType:
                let fixed = type == senderReportType ? 28 : 8
                guard length >= fixed + count * RTCPReportBlock.length else {
                    throw .reportCountOverrun(count: count, length: length)
                }
                let ssrc = read32(bytes, offset + 4)
                var reports: [RTCPReportBlock] = []
                for index in 0..<count {
                    reports.append(block(bytes, offset + fixed + index * RTCPReportBlock.length))
                }
                if type == senderReportType {
                    let info = RTCPSenderInfo(
                        ntpTimestamp: UInt64(read32(bytes, offset + 8)) << 32 | UInt64(read32(bytes, offset + 12)),
                        rtpTimestamp: read32(bytes, offset + 16), packetCount: read32(bytes, offset + 20),
                        octetCount: read32(bytes, offset + 24))
                    packets.append(.senderReport(ssrc: ssrc, info: info, reports: reports))
                } else {
                    packets.append(.receiverReport(ssrc: ssrc, reports: reports))
                }
            case applicationType
            where count == 0 && length == 12 + consentNonceBytes
                && Array(bytes[(offset + 8)..<(offset + 12)]) == consentName:
                packets.append(
                    .consent(
                        ssrc: read32(bytes, offset + 4),
                        nonce: Array(bytes[(offset + 12)..<(offset + 12 + consentNonceBytes)])))
            case applicationType
            where count == 0 && length >= 12 && (length - 12) % RTCPLossRuns.length == 0
                && (length - 12) / RTCPLossRuns.length <= maxLossRunsEntries
                && Array(bytes[(offset + 8)..<(offset + 12)]) == lossRunsName:
                let entries = stride(from: offset + 12, to: offset + length, by: RTCPLossRuns.length).map { at in
                    RTCPLossRuns(
                        ssrc: read32(bytes, at), runs: UInt16(bytes[at + 4]) << 8 | UInt16(bytes[at + 5]),
                        lost: UInt16(bytes[at + 6]) << 8 | UInt16(bytes[at + 7]))
                }
                packets.append(.lossRuns(ssrc: read32(bytes, offset + 4), entries: entries))
            default:
                break
            }
            offset += length
        }
        return packets
    }

    static func block(_ bytes: [UInt8], _ offset: Int) -> RTCPReportBlock {
        var lost = UInt32(bytes[offset + 5]) << 16 | UInt32(bytes[offset + 6]) << 8 | UInt32(bytes[offset + 7])
        if lost & 0x80_0000 != 0 { lost |= 0xFF00_0000 }
        return RTCPReportBlock(
            ssrc: read32(bytes, offset), fractionLost: bytes[offset + 4], cumulativeLost: Int32(bitPattern: lost),
            extendedHighestSequence: read32(bytes, offset + 8), jitter: read32(bytes, offset + 12),
            lastSenderReport: read32(bytes, offset + 16), delaySinceLastSenderReport: read32(bytes, offset + 20))
    }

    static func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    static func append16(_ out: inout [UInt8], _ value: UInt16) {
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }

    static func append32(_ out: inout [UInt8], _ value: UInt32) {
        out.append(UInt8(truncatingIfNeeded: value >> 24))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }
}
