import Testing

@testable import AudioCore

@Suite struct SignalTests {
    @Test func mathMatchesKnownValues() {
        #expect(abs(AudioMath.sin(AudioMath.pi / 6) - 0.5) < 1e-12)
        #expect(abs(AudioMath.sin(-100.5) - 0.030_959_966_783_271_346) < 1e-10)
        #expect(abs(AudioMath.cos(AudioMath.pi) + 1) < 1e-12)
        #expect(abs(AudioMath.log10(1_000) - 3) < 1e-12)
        #expect(abs(AudioMath.log(2) - 0.693_147_180_559_945_3) < 1e-12)
        #expect(abs(AudioMath.exp(1) - 2.718_281_828_459_045) < 1e-12)
        #expect(abs(AudioMath.pow10(-2) - 0.01) < 1e-15)
        #expect(AudioMath.log(0) == -.infinity)
        #expect(AudioMath.log(-1).isNaN)
    }

    @Test func toneIsPhaseContinuousAcrossCalls() {
        var whole = ToneGenerator(frequency: 441, amplitude: 0.7)
        var split = whole
        var one = [Int16](repeating: 0, count: 960)
        whole.fill(&one)
        var first = [Int16](repeating: 0, count: 333)
        var second = [Int16](repeating: 0, count: 627)
        split.fill(&first)
        split.fill(&second)
        #expect(first + second == one)
        #expect(one[0] == 0)
        #expect(one.map { abs(Int($0)) }.max()! == 22_937)
    }

    @Test func goertzelFindsTheTone() {
        var generator = ToneGenerator(frequency: 440, amplitude: 0.5)
        var samples = [Int16](repeating: 0, count: 48_000)
        generator.fill(&samples)
        #expect(abs(ToneAnalysis.power(of: samples, frequency: 440) - 0.25) < 0.001)
        #expect(ToneAnalysis.power(of: samples, frequency: 1_000) < 1e-6)
        let dominant = ToneAnalysis.dominantFrequency(of: samples, in: 100...2_000, step: 10)
        #expect(dominant.frequency == 440)
        #expect(abs(ToneAnalysis.rms(of: samples) - 0.5 / 2.0.squareRoot()) < 0.001)
    }

    @Test func clicksAreFoundToTheSample() {
        var injector = ClickInjector(interval: 4_800, length: 240)
        var detector = ClickDetector(threshold: 8_192, quietSamples: 2_400)
        var background = ToneGenerator(frequency: 300, amplitude: 0.05)
        let delay = 1_234
        var stream = [Int16](repeating: 0, count: 48_000 + delay)
        var clicks = [Int16](repeating: 0, count: 48_000)
        for start in stride(from: 0, to: 48_000, by: 480) {
            var period = [Int16](repeating: 0, count: 480)
            injector.process(&period)
            clicks.replaceSubrange(start..<(start + 480), with: period)
        }
        for index in stream.indices {
            let click = index >= delay ? Int(clicks[index - delay]) : 0
            stream[index] = Int16(clamping: click + Int(background.next()))
        }
        var onsets: [Int] = []
        for start in stride(from: 0, to: stream.count, by: 500) {
            onsets += detector.process(Array(stream[start..<min(start + 500, stream.count)]))
        }
        #expect(onsets == (0..<10).map { delay + $0 * 4_800 })
        let sent = (0..<10).map { $0 * 4_800 }
        #expect(
            ClickDetector.latencies(sent: sent, received: onsets, maximum: 4_800) == Array(repeating: delay, count: 10))
        let missingThird = onsets.filter { $0 != delay + 2 * 4_800 }
        let paired = ClickDetector.latencies(sent: sent, received: missingThird, maximum: 2_000)
        #expect(paired == [delay, delay, nil] + Array(repeating: delay, count: 7))
        #expect(injector.position == 48_000)
        #expect(detector.position == stream.count)
    }
}

/// A chunk header and body, padded to an even length.
func chunk(_ tag: String, _ body: [UInt8]) -> [UInt8] {
    let size = UInt32(body.count)
    var bytes = Array(tag.utf8) + (0..<4).map { UInt8(truncatingIfNeeded: size >> ($0 * 8)) } + body
    if body.count % 2 == 1 { bytes.append(0) }
    return bytes
}

func littleEndian(_ value: Int, bytes count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
}

/// A "fmt " body for PCM.
func formatBody(tag: Int = 1, channels: Int = 1, rate: Int = 48_000, bits: Int = 16) -> [UInt8] {
    let blockAlign = channels * bits / 8
    return littleEndian(tag, bytes: 2) + littleEndian(channels, bytes: 2) + littleEndian(rate, bytes: 4)
        + littleEndian(rate * blockAlign, bytes: 4) + littleEndian(blockAlign, bytes: 2) + littleEndian(bits, bytes: 2)
}

func riff(_ chunks: [UInt8]) -> [UInt8] {
    Array("RIFF".utf8) + littleEndian(chunks.count + 4, bytes: 4) + Array("WAVE".utf8) + chunks
}

func decodeProblem(_ bytes: [UInt8]) -> WAVError.Problem? {
    do {
        _ = try WAVAudio.decode(bytes)
        return nil
    } catch {
        return error.problem
    }
}

@Suite struct WAVTests {
    @Test func roundTripsCanonicalFiles() throws {
        let audio = WAVAudio(sampleRate: 48_000, channelCount: 1, samples: [0, 1, -1, 32_767, -32_768])
        let bytes = try audio.encoded()
        #expect(bytes.count == 44 + 10)
        #expect(Array(bytes[0..<4]) == Array("RIFF".utf8))
        #expect(Array(bytes[40..<44]) == [10, 0, 0, 0])
        #expect(Array(bytes[50..<54]) == [0xFF, 0x7F, 0x00, 0x80])
        #expect(try WAVAudio.decode(bytes) == audio)
    }

    @Test func skipsOtherChunksAndReadsExtensiblePCM() throws {
        let samples: [UInt8] = [1, 0, 2, 0, 3, 0, 4, 0]
        let list = chunk("LIST", Array("INFOabc".utf8))
        let plain = riff(chunk("fmt ", formatBody(channels: 2, rate: 44_100)) + list + chunk("data", samples))
        let stereo = try WAVAudio.decode(plain)
        #expect(stereo.sampleRate == 44_100)
        #expect(stereo.channelCount == 2)
        #expect(stereo.samples == [1, 2, 3, 4])
        #expect(stereo.frameCount == 2)
        #expect(stereo.mixedToMono() == [1, 3])

        let guidTail: [UInt8] = [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]
        let extensible =
            formatBody(tag: 0xFFFE) + littleEndian(22, bytes: 2) + littleEndian(16, bytes: 2)
            + littleEndian(4, bytes: 4) + littleEndian(1, bytes: 2) + guidTail
        let mono = try WAVAudio.decode(riff(chunk("fmt ", extensible) + chunk("data", samples)))
        #expect(mono.samples == [1, 2, 3, 4])
        var float = extensible
        float[24] = 3
        #expect(decodeProblem(riff(chunk("fmt ", float) + chunk("data", samples))) == .unsupportedEncoding(3))
    }

    @Test func everyTruncationIsACleanError() throws {
        let bytes = try WAVAudio(samples: (0..<50).map { Int16($0) }).encoded()
        for length in 0..<bytes.count {
            let problem = decodeProblem(Array(bytes[0..<length]))
            guard case .truncated = problem else {
                Issue.record("prefix of \(length) bytes gave \(String(describing: problem))")
                continue
            }
        }
        #expect(decodeProblem(Array(bytes[0..<30])) == .truncated(needed: 8 + 36 + 100, available: 30))
    }

    @Test func rejectsWhatItCannotPlay() {
        let data = chunk("data", [0, 0, 0, 0])
        #expect(decodeProblem(Array("RIFX".utf8) + Array(riff(data).dropFirst(4))) == .notRIFF)
        var notWave = riff(data)
        notWave.replaceSubrange(8..<12, with: Array("AVI ".utf8))
        #expect(decodeProblem(notWave) == .notWAVE)
        #expect(decodeProblem(riff(data)) == .missingFormat)
        #expect(decodeProblem(riff(chunk("fmt ", formatBody()))) == .missingData)
        #expect(decodeProblem(riff(chunk("fmt ", formatBody(bits: 8)) + data)) == .unsupportedBitDepth(8))
        #expect(decodeProblem(riff(chunk("fmt ", formatBody(tag: 3, bits: 32)) + data)) == .unsupportedEncoding(3))
        #expect(decodeProblem(riff(chunk("fmt ", formatBody(channels: 0)) + data)) == .noChannels)
        #expect(decodeProblem(riff(chunk("fmt ", formatBody(rate: 0)) + data)) == .noSampleRate)
        #expect(decodeProblem(riff(chunk("fmt ", Array(formatBody().prefix(14))) + data)) == .formatChunkTooShort(14))
        #expect(
            decodeProblem(riff(chunk("fmt ", formatBody(channels: 2)) + chunk("data", [0, 0, 0, 0, 0, 0])))
                == .partialFrame(dataSize: 6, frameSize: 4))
        var badRate = formatBody()
        badRate[8] &+= 1
        guard case .inconsistentFormat = decodeProblem(riff(chunk("fmt ", badRate) + data)) else {
            Issue.record("a wrong byte rate was accepted")
            return
        }
    }

    @Test func errorsReadAsSentences() {
        let error = WAVError(offset: 4, problem: .truncated(needed: 100, available: 30))
        #expect(error.description == "WAV: the file is truncated: it needs 100 bytes but has 30 (at byte 4)")
        #expect(throws: WAVError(offset: 44, problem: .samplesNotInterleaved(samples: 3, channels: 2))) {
            _ = try WAVAudio(channelCount: 2, samples: [1, 2, 3]).encoded()
        }
    }
}
