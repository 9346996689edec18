/// Why a WAV file could not be read or written: where in the file, and what was wrong.
public struct WAVError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Problem: Equatable, Sendable {
        /// The file ends before `needed` bytes that its headers promise; only `available` are there.
        case truncated(needed: Int, available: Int)
        /// The file does not start with "RIFF".
        case notRIFF
        /// The RIFF form is not "WAVE".
        case notWAVE
        /// There is no "fmt " chunk before the "data" chunk.
        case missingFormat
        /// There is no "data" chunk.
        case missingData
        /// The "fmt " chunk is shorter than the 16 bytes PCM needs.
        case formatChunkTooShort(Int)
        /// The encoding is not integer PCM (the format tag, or the sub-format of WAVE_FORMAT_EXTENSIBLE).
        case unsupportedEncoding(UInt16)
        /// The samples are not 16-bit.
        case unsupportedBitDepth(Int)
        /// The channel count is zero.
        case noChannels
        /// The sample rate is zero.
        case noSampleRate
        /// The block alignment or byte rate disagrees with the channels, rate and depth.
        case inconsistentFormat(String)
        /// The data chunk's size is not a whole number of sample frames.
        case partialFrame(dataSize: Int, frameSize: Int)
        /// The audio is too long for a RIFF file's 32-bit sizes.
        case tooLarge
        /// The sample count is not a multiple of the channel count.
        case samplesNotInterleaved(samples: Int, channels: Int)
    }

    /// The byte offset in the file where the problem was found.
    public let offset: Int
    /// What was wrong.
    public let problem: Problem

    /// A sentence a person can read.
    public var description: String {
        let what: String
        switch problem {
        case .truncated(let needed, let available):
            what = "the file is truncated: it needs \(needed) bytes but has \(available)"
        case .notRIFF: what = "not a RIFF file (it should start with \"RIFF\")"
        case .notWAVE: what = "a RIFF file but not WAVE audio"
        case .missingFormat: what = "no \"fmt \" chunk before the audio data"
        case .missingData: what = "no \"data\" chunk"
        case .formatChunkTooShort(let size): what = "the \"fmt \" chunk has \(size) bytes, fewer than 16"
        case .unsupportedEncoding(let tag): what = "encoding \(tag) is not supported (only 16-bit integer PCM is)"
        case .unsupportedBitDepth(let bits): what = "\(bits)-bit samples are not supported (only 16-bit are)"
        case .noChannels: what = "the channel count is zero"
        case .noSampleRate: what = "the sample rate is zero"
        case .inconsistentFormat(let detail): what = "the format header is inconsistent: \(detail)"
        case .partialFrame(let dataSize, let frameSize):
            what = "the audio data (\(dataSize) bytes) is not a whole number of \(frameSize)-byte frames"
        case .tooLarge: what = "the audio is too long for a WAV file"
        case .samplesNotInterleaved(let samples, let channels):
            what = "\(samples) samples cannot be split evenly into \(channels) channels"
        }
        return "WAV: \(what) (at byte \(offset))"
    }
}

/// PCM audio as a RIFF WAVE file holds it: 16-bit integer samples, interleaved channels, any sample rate.
/// Reading and writing are pure byte transformations; resampling and channel mixing are the caller's choice.
public struct WAVAudio: Sendable, Equatable {
    /// Sample frames per second, as the file says.
    public var sampleRate: Int
    /// Interleaved channels.
    public var channelCount: Int
    /// Samples, interleaved by channel.
    public var samples: [Int16]

    /// Audio with the given format and interleaved samples.
    public init(sampleRate: Int = AudioFormat.sampleRate, channelCount: Int = 1, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.samples = samples
    }

    /// Sample frames (samples per channel).
    public var frameCount: Int { channelCount > 0 ? samples.count / channelCount : 0 }

    /// The samples averaged across channels into one.
    public func mixedToMono() -> [Int16] {
        guard channelCount > 1 else { return samples }
        var mono: [Int16] = []
        mono.reserveCapacity(frameCount)
        for frame in 0..<frameCount {
            var sum = 0
            for channel in 0..<channelCount {
                sum += Int(samples[frame * channelCount + channel])
            }
            mono.append(Int16(sum / channelCount))
        }
        return mono
    }

    /// The bytes of a canonical 44-byte-header WAV file holding this audio.
    public func encoded() throws(WAVError) -> [UInt8] {
        guard channelCount > 0 else { throw WAVError(offset: 22, problem: .noChannels) }
        guard sampleRate > 0 else { throw WAVError(offset: 24, problem: .noSampleRate) }
        guard samples.count % channelCount == 0 else {
            throw WAVError(offset: 44, problem: .samplesNotInterleaved(samples: samples.count, channels: channelCount))
        }
        let dataSize = samples.count * 2
        guard let header = Self.header(sampleRate: sampleRate, channelCount: channelCount, dataBytes: dataSize) else {
            throw WAVError(offset: 0, problem: .tooLarge)
        }
        var bytes = header
        bytes.reserveCapacity(44 + dataSize)
        for sample in samples {
            Self.appendUInt16(UInt16(bitPattern: sample), to: &bytes)
        }
        return bytes
    }

    /// The canonical 44-byte header of a 16-bit PCM WAV file whose audio data is `dataBytes` long, or nil when the
    /// sizes do not fit a RIFF file's 32-bit fields. A recorder writes it first with the sizes it has so far and
    /// again over the start of the file when it is done.
    public static func header(sampleRate: Int, channelCount: Int, dataBytes: Int) -> [UInt8]? {
        let blockAlign = channelCount * 2
        let byteRate = sampleRate * blockAlign
        guard dataBytes >= 0, dataBytes <= Int(UInt32.max) - 36, blockAlign <= Int(UInt16.max),
            byteRate <= Int(UInt32.max)
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44)
        bytes.append(contentsOf: Array("RIFF".utf8))
        appendUInt32(UInt32(36 + dataBytes), to: &bytes)
        bytes.append(contentsOf: Array("WAVEfmt ".utf8))
        appendUInt32(16, to: &bytes)
        appendUInt16(1, to: &bytes)
        appendUInt16(UInt16(channelCount), to: &bytes)
        appendUInt32(UInt32(sampleRate), to: &bytes)
        appendUInt32(UInt32(byteRate), to: &bytes)
        appendUInt16(UInt16(blockAlign), to: &bytes)
        appendUInt16(16, to: &bytes)
        bytes.append(contentsOf: Array("data".utf8))
        appendUInt32(UInt32(dataBytes), to: &bytes)
        return bytes
    }

    /// Reads a WAV file's bytes: RIFF/WAVE with a 16-bit PCM "fmt " chunk (plain or WAVE_FORMAT_EXTENSIBLE) and a
    /// "data" chunk; other chunks are skipped. Anything truncated, inconsistent or not 16-bit PCM is an error.
    public static func decode(_ bytes: [UInt8]) throws(WAVError) -> WAVAudio {
        let reader = ByteReader(bytes: bytes)
        try reader.require(12, at: 0)
        guard reader.tag(at: 0) == "RIFF" else { throw WAVError(offset: 0, problem: .notRIFF) }
        guard reader.tag(at: 8) == "WAVE" else { throw WAVError(offset: 8, problem: .notWAVE) }
        let riffEnd = 8 + Int(reader.uint32(at: 4))
        try reader.require(riffEnd, at: 4)

        var format: (channels: Int, rate: Int, blockAlign: Int)?
        var offset = 12
        while offset < riffEnd {
            try reader.require(offset + 8, at: offset, limit: riffEnd)
            let tag = reader.tag(at: offset)
            let size = Int(reader.uint32(at: offset + 4))
            let body = offset + 8
            try reader.require(body + size, at: offset + 4, limit: riffEnd)
            switch tag {
            case "fmt ":
                format = try readFormat(reader, at: body, size: size)
            case "data":
                guard let format else { throw WAVError(offset: offset, problem: .missingFormat) }
                guard size % format.blockAlign == 0 else {
                    throw WAVError(
                        offset: offset + 4, problem: .partialFrame(dataSize: size, frameSize: format.blockAlign))
                }
                var samples = [Int16](repeating: 0, count: size / 2)
                for index in samples.indices {
                    samples[index] = Int16(bitPattern: reader.uint16(at: body + index * 2))
                }
                return WAVAudio(sampleRate: format.rate, channelCount: format.channels, samples: samples)
            default:
                break
            }
            offset = body + size + (size & 1)
        }
        throw WAVError(offset: riffEnd, problem: .missingData)
    }

    private static func readFormat(
        _ reader: ByteReader, at body: Int, size: Int
    ) throws(WAVError) -> (
        channels: Int, rate: Int, blockAlign: Int
    ) {
        guard size >= 16 else { throw WAVError(offset: body - 4, problem: .formatChunkTooShort(size)) }
        var encoding = reader.uint16(at: body)
        if encoding == 0xFFFE {
            guard size >= 40 else { throw WAVError(offset: body - 4, problem: .formatChunkTooShort(size)) }
            let pcmGUIDTail: [UInt8] = [
                0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
            ]
            let tail = Array(reader.bytes[(body + 26)..<(body + 40)])
            encoding = tail == pcmGUIDTail ? reader.uint16(at: body + 24) : 0xFFFE
        }
        guard encoding == 1 else { throw WAVError(offset: body, problem: .unsupportedEncoding(encoding)) }
        let channels = Int(reader.uint16(at: body + 2))
        let rate = Int(reader.uint32(at: body + 4))
        let byteRate = Int(reader.uint32(at: body + 8))
        let blockAlign = Int(reader.uint16(at: body + 12))
        let bits = Int(reader.uint16(at: body + 14))
        guard channels > 0 else { throw WAVError(offset: body + 2, problem: .noChannels) }
        guard rate > 0 else { throw WAVError(offset: body + 4, problem: .noSampleRate) }
        guard bits == 16 else { throw WAVError(offset: body + 14, problem: .unsupportedBitDepth(bits)) }
        guard blockAlign == channels * 2 else {
            throw WAVError(
                offset: body + 12,
                problem: .inconsistentFormat("block align \(blockAlign) for \(channels) channels of 16 bits"))
        }
        guard byteRate == rate * blockAlign else {
            throw WAVError(
                offset: body + 8, problem: .inconsistentFormat("byte rate \(byteRate) for \(rate) Hz × \(blockAlign)"))
        }
        return (channels, rate, blockAlign)
    }

    private static func appendUInt16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    private static func appendUInt32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }
}

/// Little-endian reads from a byte array whose bounds the caller has checked with `require`.
private struct ByteReader {
    let bytes: [UInt8]

    /// Fails unless the file holds `end` bytes; the error names `offset`, the field that promised them. A chunk
    /// reaching past the RIFF size (`limit`) is as truncated as one reaching past the file.
    func require(_ end: Int, at offset: Int, limit: Int = .max) throws(WAVError) {
        let available = min(bytes.count, limit)
        guard end <= available else {
            throw WAVError(offset: offset, problem: .truncated(needed: end, available: available))
        }
    }

    func tag(at offset: Int) -> String {
        String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
    }

    func uint16(at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    func uint32(at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}
