/// Why a datagram is not a valid RTP packet. Every case is counted by the receiver and the packet dropped.
public enum RTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer bytes than the part being read needs.
    case truncated(needed: Int, available: Int)
    /// The version field is not 2.
    case badVersion(UInt8)
    /// The padding count is zero or runs into the header.
    case badPadding(count: Int, available: Int)
    /// The extension length runs past the end of the packet.
    case extensionOverrun(words: Int, available: Int)

    public var description: String {
        switch self {
        case .truncated(let needed, let available): "RTP: needs \(needed) bytes, has \(available)"
        case .badVersion(let version): "RTP: version \(version), not 2"
        case .badPadding(let count, let available): "RTP: padding of \(count) bytes in \(available) after the header"
        case .extensionOverrun(let words, let available):
            "RTP: a header extension of \(words) words runs past the \(available) bytes left"
        }
    }

    /// A short name for counters and logs.
    public var counterName: String {
        switch self {
        case .truncated: "truncated"
        case .badVersion: "bad_version"
        case .badPadding: "bad_padding"
        case .extensionOverrun: "extension_overrun"
        }
    }
}

/// The fixed RTP header (RFC 3550 §5.1) with where the extension and payload lie in the packet it came from.
///
/// Parsing reads in place and allocates nothing unless the packet carries CSRCs (a forwarder's packets do not),
/// so it can run per packet on a server's hot path.
public struct RTPHeader: Sendable, Equatable {
    /// The size of the fixed header, without CSRCs or extension.
    public static let fixedLength = 12
    /// The one-byte header extension profile of RFC 8285.
    public static let oneByteExtensionProfile: UInt16 = 0xBEDE

    public var marker: Bool
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: [UInt32]
    /// The extension's profile (0xBEDE for one-byte elements), or `nil` when the X bit is clear.
    public var extensionProfile: UInt16?
    /// The extension's data, without its 4-byte profile/length word, as offsets into the packet.
    public var extensionRange: Range<Int>
    /// The payload, as offsets into the packet (padding excluded).
    public var payloadRange: Range<Int>
    /// Padding bytes at the end, including the count byte; 0 when the P bit is clear.
    public var paddingLength: Int

    /// A header for sending; ranges are filled by `write`.
    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        csrcs: [UInt32] = []
    ) {
        self.marker = marker
        self.payloadType = payloadType & 0x7F
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = Array(csrcs.prefix(15))
        extensionProfile = nil
        extensionRange = 0..<0
        payloadRange = 0..<0
        paddingLength = 0
    }

    /// The header's length in the packet it was parsed from: up to where the payload starts.
    public var headerLength: Int { payloadRange.lowerBound }

    /// Reads an RTP header from a datagram; every length is checked against the datagram's size.
    public static func parse(_ packet: UnsafeRawBufferPointer) throws(RTPParseError) -> RTPHeader {
        let count = packet.count
        guard count >= fixedLength else { throw .truncated(needed: fixedLength, available: count) }
        let first = packet[0]
        let version = first >> 6
        guard version == 2 else { throw .badVersion(version) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = packet[1]
        var header = RTPHeader(
            marker: second & 0x80 != 0, payloadType: second & 0x7F, sequenceNumber: readUInt16(packet, 2),
            timestamp: readUInt32(packet, 4), ssrc: readUInt32(packet, 8))
        var offset = fixedLength
        if csrcCount > 0 {
            let needed = offset + 4 * csrcCount
            guard count >= needed else { throw .truncated(needed: needed, available: count) }
            header.csrcs = (0..<csrcCount).map { readUInt32(packet, offset + 4 * $0) }
            offset = needed
        }
        if hasExtension {
            guard count >= offset + 4 else { throw .truncated(needed: offset + 4, available: count) }
            let profile = readUInt16(packet, offset)
            let words = Int(readUInt16(packet, offset + 2))
            offset += 4
            guard count - offset >= 4 * words else {
                throw .extensionOverrun(words: words, available: count - offset)
            }
            header.extensionProfile = profile
            header.extensionRange = offset..<(offset + 4 * words)
            offset += 4 * words
        }
        var end = count
        if hasPadding {
            let padding = Int(packet[count - 1])
            guard padding > 0, padding <= count - offset else {
                throw .badPadding(count: padding, available: count - offset)
            }
            header.paddingLength = padding
            end -= padding
        }
        header.payloadRange = offset..<end
        return header
    }

    /// Reads an RTP header from bytes.
    public static func parse(_ packet: [UInt8]) throws(RTPParseError) -> RTPHeader {
        let result: Result<RTPHeader, RTPParseError> = packet.withUnsafeBytes { bytes in
            do throws(RTPParseError) { return .success(try parse(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Bytes the header takes when written with an extension of `extensionBytes` (already padded to 4).
    public func writtenLength(extensionBytes: Int) -> Int {
        Self.fixedLength + 4 * csrcs.count + (extensionBytes > 0 ? 4 + extensionBytes : 0)
    }

    /// Writes the header followed by a one-byte-profile extension holding `elements` into `buffer`, and returns
    /// the number of bytes written (where the payload goes), or `nil` when the buffer is too small.
    @discardableResult
    public func write(
        into buffer: UnsafeMutableRawBufferPointer, extensionElements elements: [RTPExtensionElement] = []
    ) -> Int? {
        let extensionBytes = RTPOneByteExtension.paddedLength(of: elements)
        let length = writtenLength(extensionBytes: extensionBytes)
        guard buffer.count >= length, extensionBytes / 4 <= Int(UInt16.max) else { return nil }
        buffer[0] = 0x80 | (extensionBytes > 0 ? 0x10 : 0) | UInt8(csrcs.count)
        buffer[1] = (marker ? 0x80 : 0) | (payloadType & 0x7F)
        Self.writeUInt16(buffer, 2, sequenceNumber)
        Self.writeUInt32(buffer, 4, timestamp)
        Self.writeUInt32(buffer, 8, ssrc)
        var offset = Self.fixedLength
        for csrc in csrcs {
            Self.writeUInt32(buffer, offset, csrc)
            offset += 4
        }
        if extensionBytes > 0 {
            Self.writeUInt16(buffer, offset, Self.oneByteExtensionProfile)
            Self.writeUInt16(buffer, offset + 2, UInt16(extensionBytes / 4))
            offset += 4
            offset += RTPOneByteExtension.write(
                elements, into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<(offset + extensionBytes)]))
        }
        return offset
    }

    /// The whole packet as bytes: header, extension, payload.
    public func packet(extensionElements elements: [RTPExtensionElement] = [], payload: [UInt8]) -> [UInt8] {
        let headerBytes = writtenLength(extensionBytes: RTPOneByteExtension.paddedLength(of: elements))
        var bytes = [UInt8](repeating: 0, count: headerBytes + payload.count)
        bytes.withUnsafeMutableBytes { buffer in
            _ = write(into: buffer, extensionElements: elements)
            for (index, byte) in payload.enumerated() { buffer[headerBytes + index] = byte }
        }
        return bytes
    }

    @inline(__always)
    static func readUInt16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    @inline(__always)
    static func readUInt32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    @inline(__always)
    static func writeUInt16(_ bytes: UnsafeMutableRawBufferPointer, _ offset: Int, _ value: UInt16) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    @inline(__always)
    static func writeUInt32(_ bytes: UnsafeMutableRawBufferPointer, _ offset: Int, _ value: UInt32) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}

/// Clubroom's RTP settings, announced to clients in the control protocol's `media` message.
public enum RTPAudioProfile {
    /// The dynamic payload type for Opus (RFC 7587).
    public static let opusPayloadType: UInt8 = 111
    /// The dynamic payload type for RFC 2198 redundancy (RED) around Opus, where both ends take it.
    public static let redPayloadType: UInt8 = 63
    /// Opus always uses a 48 kHz RTP clock, whatever its internal rate.
    public static let clockRate: UInt32 = 48_000
    /// RTP timestamp units in one 20 ms frame.
    public static let samplesPerFrame: UInt32 = 960
    /// The RFC 8285 one-byte extension ID carrying the RFC 6464 audio level.
    public static let audioLevelExtensionID: UInt8 = 1
}
