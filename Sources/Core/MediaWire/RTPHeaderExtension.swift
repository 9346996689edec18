/// Why an RFC 8285 one-byte header extension could not be read.
public enum RTPExtensionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extension uses another profile than 0xBEDE.
    case notOneByteProfile(UInt16)
    /// An element's length runs past the end of the extension.
    case elementOverrun(id: UInt8, offset: Int)
    /// The audio level element is not exactly one byte long.
    case badAudioLevelLength(Int)

    public var description: String {
        switch self {
        case .notOneByteProfile(let profile): "RTP extension: profile 0x\(String(profile, radix: 16)), not 0xBEDE"
        case .elementOverrun(let id, let offset): "RTP extension: element \(id) at byte \(offset) runs past the end"
        case .badAudioLevelLength(let length): "RTP extension: audio level of \(length) bytes, not 1"
        }
    }

    /// A short name for counters and logs.
    public var counterName: String {
        switch self {
        case .notOneByteProfile: "extension_profile"
        case .elementOverrun: "extension_overrun"
        case .badAudioLevelLength: "audio_level_length"
        }
    }
}

/// One element of a one-byte header extension: an ID 1–14 and 1–16 bytes of data.
public struct RTPExtensionElement: Sendable, Equatable {
    public var id: UInt8
    public var data: [UInt8]

    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }

    /// The RFC 6464 audio level element with Clubroom's ID.
    public static func audioLevel(_ level: RTPAudioLevel) -> RTPExtensionElement {
        RTPExtensionElement(id: RTPAudioProfile.audioLevelExtensionID, data: [level.byte])
    }
}

/// The RFC 6464 client-to-mixer audio level: how loud the packet is, in -dBov, and whether it holds voice.
public struct RTPAudioLevel: Sendable, Equatable {
    /// 0 is the loudest (0 dBov), 127 is silence (-127 dBov or quieter).
    public var level: UInt8
    /// The V flag: the sender's voice activity detector heard voice.
    public var voice: Bool

    /// A level, clamped to 0–127.
    public init(level: UInt8, voice: Bool) {
        self.level = min(level, 127)
        self.voice = voice
    }

    /// From a level in dBov (0 or below); louder than 0 counts as 0, quieter than -127 as 127.
    public init(dBov: Double, voice: Bool) {
        let clamped = dBov.isNaN ? 127 : min(127, max(0, -dBov))
        self.init(level: UInt8(clamped.rounded()), voice: voice)
    }

    /// From the extension's byte.
    public init(byte: UInt8) {
        self.init(level: byte & 0x7F, voice: byte & 0x80 != 0)
    }

    /// The extension's byte: V in the top bit, the level below it.
    public var byte: UInt8 { (voice ? 0x80 : 0) | (level & 0x7F) }
}

/// Reads and writes RFC 8285 one-byte header extensions.
public enum RTPOneByteExtension {
    /// The ID that tells a reader to stop (RFC 8285 §4.2).
    static let stopID: UInt8 = 15

    /// Bytes the elements take, padded to a multiple of 4; 0 when there are none.
    public static func paddedLength(of elements: [RTPExtensionElement]) -> Int {
        let raw = elements.reduce(0) { $0 + 1 + min(16, max(1, $1.data.count)) }
        return (raw + 3) / 4 * 4
    }

    /// Writes the elements and zero padding; returns the bytes written (the padded length).
    static func write(_ elements: [RTPExtensionElement], into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var offset = 0
        for element in elements {
            let length = min(16, max(1, element.data.count))
            buffer[offset] = (element.id & 0x0F) << 4 | UInt8(length - 1)
            for index in 0..<length {
                buffer[offset + 1 + index] = index < element.data.count ? element.data[index] : 0
            }
            offset += 1 + length
        }
        while offset % 4 != 0 {
            buffer[offset] = 0
            offset += 1
        }
        return offset
    }

    /// Where the data of the element with this ID lies in the packet, or `nil` when it is absent.
    /// Reads in place: no allocation.
    public static func find(
        id wanted: UInt8, in packet: UnsafeRawBufferPointer, header: RTPHeader
    ) throws(RTPExtensionError) -> Range<Int>? {
        guard let profile = header.extensionProfile else { return nil }
        guard profile == RTPHeader.oneByteExtensionProfile else { throw .notOneByteProfile(profile) }
        var offset = header.extensionRange.lowerBound
        let end = header.extensionRange.upperBound
        while offset < end {
            let byte = packet[offset]
            let id = byte >> 4
            if id == 0 {
                // A padding byte between elements.
                offset += 1
                continue
            }
            if id == stopID { return nil }
            let length = Int(byte & 0x0F) + 1
            guard offset + 1 + length <= end else { throw .elementOverrun(id: id, offset: offset) }
            if id == wanted { return (offset + 1)..<(offset + 1 + length) }
            offset += 1 + length
        }
        return nil
    }

    /// Every element, in order (for tests and tools; allocates).
    public static func elements(
        in packet: [UInt8], header: RTPHeader
    ) throws(RTPExtensionError)
        -> [RTPExtensionElement]
    {
        guard let profile = header.extensionProfile else { return [] }
        guard profile == RTPHeader.oneByteExtensionProfile else { throw .notOneByteProfile(profile) }
        var result: [RTPExtensionElement] = []
        var offset = header.extensionRange.lowerBound
        let end = header.extensionRange.upperBound
        while offset < end {
            let id = packet[offset] >> 4
            if id == 0 {
                offset += 1
                continue
            }
            if id == stopID { break }
            let length = Int(packet[offset] & 0x0F) + 1
            guard offset + 1 + length <= end else { throw .elementOverrun(id: id, offset: offset) }
            result.append(RTPExtensionElement(id: id, data: Array(packet[(offset + 1)..<(offset + 1 + length)])))
            offset += 1 + length
        }
        return result
    }

    /// The RFC 6464 audio level of a packet, or `nil` when it carries none.
    public static func audioLevel(
        in packet: UnsafeRawBufferPointer, header: RTPHeader, id: UInt8 = RTPAudioProfile.audioLevelExtensionID
    ) throws(RTPExtensionError) -> RTPAudioLevel? {
        guard let range = try find(id: id, in: packet, header: header) else { return nil }
        guard range.count == 1 else { throw .badAudioLevelLength(range.count) }
        return RTPAudioLevel(byte: packet[range.lowerBound])
    }

    /// The RFC 6464 audio level of a packet held in an array.
    public static func audioLevel(
        in packet: [UInt8], header: RTPHeader
    ) throws(RTPExtensionError)
        -> RTPAudioLevel?
    {
        let result: Result<RTPAudioLevel?, RTPExtensionError> = packet.withUnsafeBytes { bytes in
            do throws(RTPExtensionError) {
                return .success(try audioLevel(in: bytes, header: header))
            } catch { return .failure(error) }
        }
        return try result.get()
    }
}
