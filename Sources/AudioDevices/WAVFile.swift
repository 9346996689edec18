import AudioCodec
import Foundation

/// Reads and writes the 16-bit PCM WAV files virtual devices use.
///
/// Kept small and internal to this target; the file layout is the canonical RIFF/WAVE one (`fmt ` and `data`
/// chunks, other chunks skipped).
enum WAVFile {
    /// Size of the header `header(sampleRate:channels:dataBytes:)` writes.
    static let headerSize = 44

    /// Reads `path` and returns its samples as 48 kHz mono: channels are averaged, other rates resampled.
    static func readMono48k(path: String) throws(AudioDeviceError) -> [Int16] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .file(path: path, problem: "cannot be read")
        }
        let bytes = [UInt8](data)
        func problem(_ text: String) -> AudioDeviceError { .file(path: path, problem: text) }
        func le16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func le32(_ at: Int) -> Int { le16(at) | le16(at + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else { throw problem("is not a WAV file") }

        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var samples: ArraySlice<UInt8>?
        while offset + 8 <= bytes.count {
            let size = le32(offset + 4)
            let body = offset + 8
            let end = min(body + size, bytes.count)
            if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8), size >= 16, end - body >= 16 {
                format = (le16(body), le16(body + 2), le32(body + 4), le16(body + 14))
            } else if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                samples = bytes[body..<end]
            }
            offset = body + size + (size & 1)
        }
        guard let format, let samples else { throw problem("has no format or no data") }
        // 1 is PCM; 0xFFFE (extensible) holds PCM too when the bits say 16.
        guard format.tag == 1 || format.tag == 0xFFFE, format.bits == 16, format.channels > 0, format.rate > 0
        else {
            throw problem("is not 16-bit PCM (format \(format.tag), \(format.bits) bits)")
        }
        let frameBytes = 2 * format.channels
        let frames = samples.count / frameBytes
        var mono = [Int16](repeating: 0, count: frames)
        let start = samples.startIndex
        for frame in 0..<frames {
            var sum = 0
            for channel in 0..<format.channels {
                let at = start + frame * frameBytes + channel * 2
                sum += Int(Int16(bitPattern: UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8))
            }
            mono[frame] = Int16(sum / format.channels)
        }
        guard format.rate != DeviceFormat.sampleRate else { return mono }
        do {
            return try Resampler(inputRate: format.rate, outputRate: DeviceFormat.sampleRate).process(mono)
        } catch {
            throw problem("cannot be resampled from \(format.rate) Hz (\(error))")
        }
    }

    /// A canonical 44-byte WAV header for 16-bit PCM.
    static func header(sampleRate: Int, channels: Int, dataBytes: Int) -> [UInt8] {
        var header: [UInt8] = []
        func append32(_ value: Int) {
            for shift in stride(from: 0, to: 32, by: 8) { header.append(UInt8((value >> shift) & 0xFF)) }
        }
        func append16(_ value: Int) { header.append(UInt8(value & 0xFF)); header.append(UInt8((value >> 8) & 0xFF)) }
        header += Array("RIFF".utf8)
        append32(36 + dataBytes)
        header += Array("WAVEfmt ".utf8)
        append32(16)
        append16(1)
        append16(channels)
        append32(sampleRate)
        append32(sampleRate * channels * 2)
        append16(channels * 2)
        append16(16)
        header += Array("data".utf8)
        append32(dataBytes)
        return header
    }
}
