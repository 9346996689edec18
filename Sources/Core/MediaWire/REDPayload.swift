/// Why an RTP payload is not a valid RFC 2198 redundant-audio payload. The packet is dropped.
public enum REDParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The block headers, or the data they announce, run past the payload.
    case truncated(needed: Int, available: Int)
    /// More blocks than a packet of ours may carry (``REDPayload/maxRedundantBlocks`` earlier frames and the
    /// primary).
    case tooManyBlocks
    /// A redundant block of the same payload type as RED itself, or a primary that is not one.
    case nestedRED

    public var description: String {
        switch self {
        case .truncated(let needed, let available): "RED: needs \(needed) bytes, has \(available)"
        case .tooManyBlocks: "RED: more than \(REDPayload.maxRedundantBlocks) redundant blocks"
        case .nestedRED: "RED: a block that is itself RED"
        }
    }
}

/// One block of a RED payload: its payload type, how far its frame lies before the primary's timestamp, and
/// where its data lies in the payload it was read from.
public struct REDBlock: Sendable, Equatable {
    public var payloadType: UInt8
    /// The primary's timestamp minus this block's (0 for the primary).
    public var timestampOffset: UInt16
    /// Offsets into the payload the block was read from.
    public var range: Range<Int>
}

/// An RFC 2198 payload: up to ``maxRedundantBlocks`` earlier frames, oldest first, then the primary frame.
///
/// ```
///  redundant block header (4 bytes):  1 | PT (7) | timestamp offset (14) | block length (10)
///  primary block header (1 byte):     0 | PT (7)
///  then each block's data, in the headers' order, the primary's last
/// ```
///
/// Parsing reads in place and allocates nothing, so the forwarder can run it on every packet.
public struct REDPayload: Sendable, Equatable {
    /// The most earlier frames a packet carries: a sender of ours repeats one or two.
    public static let maxRedundantBlocks = 2
    /// The largest timestamp offset and block length the headers can say.
    public static let maxTimestampOffset: UInt16 = 0x3FFF
    public static let maxBlockLength = 0x3FF

    /// The earlier frames, oldest first (only the first `redundantCount` are meaningful).
    private var first: REDBlock
    private var second: REDBlock
    /// How many redundant blocks came before the primary.
    public private(set) var redundantCount: Int
    /// The primary frame.
    public var primary: REDBlock

    /// The redundant block at `index` (0 is the oldest).
    public func redundant(_ index: Int) -> REDBlock {
        precondition(index >= 0 && index < redundantCount)
        return index == 0 ? first : second
    }

    /// The redundant blocks, oldest first.
    public var redundantBlocks: [REDBlock] { (0..<redundantCount).map(redundant) }

    /// Reads a RED payload (the RTP packet's payload, not the whole packet) whose own payload type is
    /// `redPayloadType`; every length is checked against `payload`'s size.
    public static func parse(
        _ payload: UnsafeRawBufferPointer, redPayloadType: UInt8
    ) throws(REDParseError)
        -> REDPayload
    {
        let count = payload.count
        let empty = REDBlock(payloadType: 0, timestampOffset: 0, range: 0..<0)
        var result = REDPayload(first: empty, second: empty, redundantCount: 0, primary: empty)
        var offset = 0
        var lengths = (0, 0)
        while true {
            guard offset < count else { throw .truncated(needed: offset + 1, available: count) }
            let byte = payload[offset]
            let payloadType = byte & 0x7F
            guard payloadType != redPayloadType & 0x7F else { throw .nestedRED }
            if byte & 0x80 == 0 {
                result.primary.payloadType = payloadType
                offset += 1
                break
            }
            guard result.redundantCount < maxRedundantBlocks else { throw .tooManyBlocks }
            guard offset + 4 <= count else { throw .truncated(needed: offset + 4, available: count) }
            let word =
                UInt32(payload[offset + 1]) << 16 | UInt32(payload[offset + 2]) << 8 | UInt32(payload[offset + 3])
            let block = REDBlock(
                payloadType: payloadType, timestampOffset: UInt16(word >> 10), range: 0..<0)
            let length = Int(word & 0x3FF)
            if result.redundantCount == 0 {
                result.first = block
                lengths.0 = length
            } else {
                result.second = block
                lengths.1 = length
            }
            result.redundantCount += 1
            offset += 4
        }
        var data = offset
        for index in 0..<result.redundantCount {
            let length = index == 0 ? lengths.0 : lengths.1
            guard count - data >= length else { throw .truncated(needed: data + length, available: count) }
            if index == 0 {
                result.first.range = data..<(data + length)
            } else {
                result.second.range = data..<(data + length)
            }
            data += length
        }
        result.primary.range = data..<count
        return result
    }

    /// Reads a RED payload from bytes.
    public static func parse(_ payload: [UInt8], redPayloadType: UInt8) throws(REDParseError) -> REDPayload {
        let result: Result<REDPayload, REDParseError> = payload.withUnsafeBytes { bytes in
            do throws(REDParseError) {
                return .success(try parse(bytes, redPayloadType: redPayloadType))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// One earlier frame to repeat: its data and how far its timestamp lies before the primary's.
    public struct Earlier: Sendable, Equatable {
        public var timestampOffset: UInt16
        public var bytes: [UInt8]

        public init(timestampOffset: UInt16, bytes: [UInt8]) {
            self.timestampOffset = timestampOffset
            self.bytes = bytes
        }
    }

    /// The bytes of a RED payload: `earlier` frames (oldest first; those that a header cannot describe, with an
    /// offset or a length beyond its fields, and any past ``maxRedundantBlocks``, are left out, newest kept),
    /// then `primary`, all of `payloadType`.
    public static func encode(primary: [UInt8], payloadType: UInt8, earlier: [Earlier]) -> [UInt8] {
        let kept = Array(
            earlier.filter {
                $0.timestampOffset > 0 && $0.timestampOffset <= maxTimestampOffset && $0.bytes.count <= maxBlockLength
            }
            .suffix(maxRedundantBlocks))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 * kept.count + 1 + kept.reduce(primary.count) { $0 + $1.bytes.count })
        for block in kept {
            let word = UInt32(block.timestampOffset) << 10 | UInt32(block.bytes.count)
            bytes += [
                0x80 | payloadType & 0x7F, UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ]
        }
        bytes.append(payloadType & 0x7F)
        for block in kept { bytes += block.bytes }
        bytes += primary
        return bytes
    }

    /// Rewrites, in place, an RTP `packet` of `length` bytes whose payload (`header`'s `payloadRange`, no padding)
    /// is RED into the same packet carrying only the primary frame, with the primary's payload type; returns the
    /// new length. The header and its extension are kept; nothing is allocated.
    public static func stripToPrimary(
        _ packet: UnsafeMutableRawBufferPointer, length: Int, header: RTPHeader, red: REDPayload
    ) -> Int {
        let start = header.payloadRange.lowerBound
        let source = start + red.primary.range.lowerBound
        let primaryLength = red.primary.range.count
        if primaryLength > 0, source != start, let base = packet.baseAddress {
            (base + start).copyMemory(from: base + source, byteCount: primaryLength)
        }
        packet[1] = packet[1] & 0x80 | red.primary.payloadType
        // Padding (which a parsed RED payload never includes) would be left behind: the P bit goes.
        packet[0] &= ~0x20
        return start + primaryLength
    }
}
