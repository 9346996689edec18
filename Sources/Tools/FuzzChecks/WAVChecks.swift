import AudioCore

/// WAV files, as the virtual devices, the demo and the benchmarks read them.
enum WAVChecks {
    static func wav(_ input: [UInt8]) throws(FuzzFailure) {
        let audio: WAVAudio
        do {
            audio = try WAVAudio.decode(input)
        } catch {
            try expect(
                error.offset >= 0 && error.offset <= max(input.count, 8 + Int(UInt32.max)), "offset \(error.offset)")
            try expect(error.description.hasPrefix("WAV: "), "an error without words")
            return
        }
        try expect(
            audio.sampleRate > 0 && audio.channelCount > 0, "\(audio.sampleRate) Hz, \(audio.channelCount) channels")
        try expect(audio.samples.count % audio.channelCount == 0, "samples not whole frames")
        try expect(audio.samples.count * 2 <= input.count, "more samples than bytes")
        try expect(audio.mixedToMono().count == audio.frameCount, "the mono mix has another length")
        let encoded: [UInt8]
        do {
            encoded = try audio.encoded()
        } catch {
            throw FuzzFailure("decoded audio does not encode: \(error)")
        }
        do {
            let again = try WAVAudio.decode(encoded)
            try expect(again == audio, "decoded audio encodes to a file that decodes differently")
        } catch {
            throw FuzzFailure("an encoded file does not decode: \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        let mono = WAVAudio(sampleRate: 48_000, channelCount: 1, samples: (0..<64).map { Int16($0 * 500 - 16_000) })
        let stereo = WAVAudio(sampleRate: 16_000, channelCount: 2, samples: [1, -1, 300, -300, .max, .min])
        var seeds = [mono, stereo].compactMap { try? $0.encoded() }
        // An extensible format chunk and a list chunk before the data, as sox and other tools write.
        if var extensible = try? stereo.encoded() {
            extensible.replaceSubrange(16..<20, with: [40, 0, 0, 0])
            extensible.replaceSubrange(20..<22, with: [0xFE, 0xFF])
            let tail: [UInt8] = [
                22, 0, 16, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71,
            ]
            extensible.insert(contentsOf: tail, at: 36)
            extensible.insert(contentsOf: Array("LIST".utf8) + [3, 0, 0, 0, 1, 2, 3, 0], at: 36 + tail.count)
            let riffSize = UInt32(extensible.count - 8)
            extensible.replaceSubrange(4..<8, with: (0..<4).map { UInt8(truncatingIfNeeded: riffSize >> (8 * $0)) })
            seeds.append(extensible)
        }
        return seeds
    }
}
