import RoomTesting
import Testing

@testable import AudioCodec

@Suite struct SpeexTests {
    @Test func resamplingFrom44_1kHzTo48kHzKeepsAToneItsFrequency() throws {
        let resampler = try Resampler(inputRate: 44_100, outputRate: 48_000)
        let input = Signals.tone(frequency: 1_000, sampleRate: 44_100, count: 44_100)
        let output = try resampler.process(input)
        #expect(abs(output.count - 48_000) < 100)
        let steady = output[2_400...]
        #expect(Signals.dominantFrequency(steady, candidates: Signals.candidates) == 1_000)
        #expect(Signals.rms(steady) > Signals.rms(input[...]) * 0.9)
    }

    @Test func resamplingInPeriodsProducesTheRightAmountOverall() throws {
        let resampler = try Resampler(inputRate: 44_100, outputRate: 48_000)
        let period = [Int16](repeating: 100, count: 441)
        var output = [Int16](repeating: 0, count: resampler.maximumOutputCount(forInput: 441))
        var total = 0
        for _ in 0..<100 {
            let (consumed, produced) = try period.withUnsafeBufferPointer { input in
                try output.withUnsafeMutableBufferPointer { try resampler.process(input, into: $0) }
            }
            #expect(consumed == 441)
            total += produced
        }
        #expect(abs(total - 48_000) < 100)
    }

    @Test func voiceActivityDetectionTellsSpeechFromSilence() throws {
        let processor = try VoiceProcessor()
        var silentDecisions: [Bool] = []
        var voicedDecisions: [Bool] = []
        var generator = SplitMix64(seed: 3)
        for _ in 0..<50 {
            var frame = (0..<960).map { _ in Int16(Int(generator.next() % 21) - 10) }
            silentDecisions.append(try processor.process(&frame))
        }
        let speech = Signals.speechLike(count: 48_000)
        for start in stride(from: 0, to: speech.count, by: 960) {
            var frame = Array(speech[start..<start + 960])
            voicedDecisions.append(try processor.process(&frame))
        }
        #expect(silentDecisions[25...].filter { $0 }.count <= 2)
        #expect(voicedDecisions[10...].filter { $0 }.count >= 30)
    }

    @Test func voiceStartsAbove35PercentAndContinuesAbove20() {
        let probabilities = [10, 30, 36, 25, 21, 20, 30, 35, 36, 90, 0]
        var wasSpeech = false
        let decisions = probabilities.map { probability in
            wasSpeech = VoiceProcessor.holdsVoice(probability: probability, after: wasSpeech)
            return wasSpeech
        }
        #expect(decisions == [false, false, true, true, true, false, false, false, true, true, false])
    }

    @Test func voiceActivityDetectionOffCallsEveryFrameVoice() throws {
        let processor = try VoiceProcessor(configuration: .init(voiceActivityDetection: false))
        var frame = [Int16](repeating: 0, count: 960)
        #expect((0..<20).allSatisfy { _ in (try? processor.process(&frame)) == true })
    }

    @Test func noiseSuppressionLowersStationaryNoise() throws {
        let processor = try VoiceProcessor(configuration: .init(automaticGain: false))
        var generator = SplitMix64(seed: 11)
        var before = 0.0
        var after = 0.0
        for index in 0..<100 {
            var frame = (0..<960).map { _ in Int16(Int(generator.next() % 2_001) - 1_000) }
            if index >= 50 { before += Signals.rms(frame[...]) }
            _ = try processor.process(&frame)
            if index >= 50 { after += Signals.rms(frame[...]) }
        }
        #expect(after < before / 2)
    }

    @Test func echoCancellationRemovesADelayedCopyOfThePlayback() throws {
        let canceller = try EchoCanceller(frameSamples: 480)
        let played = Signals.speechLike(count: 48_000 * 4, seed: 5)
        let delay = 2_400
        // The microphone hears the loudspeaker 50 ms late and quieter.
        let captured = (0..<played.count).map { $0 >= delay ? played[$0 - delay] / 2 : 0 }
        var residual = 0.0
        var echo = 0.0
        var output = [Int16](repeating: 0, count: 480)
        for start in stride(from: 0, to: played.count, by: 480) {
            try captured[start..<start + 480].withUnsafeBufferPointer { mic in
                try played[start..<start + 480].withUnsafeBufferPointer { speaker in
                    try output.withUnsafeMutableBufferPointer {
                        try canceller.cancel(captured: mic, played: speaker, output: $0)
                    }
                }
            }
            if start >= 48_000 * 3 {
                residual += Signals.rms(output[...])
                echo += Signals.rms(captured[start..<start + 480])
            }
        }
        #expect(residual < echo / 4)
    }

    @Test func mismatchedFramesAreTypedErrors() throws {
        let canceller = try EchoCanceller(frameSamples: 480)
        #expect(throws: AudioCodecError.wrongFrameSize(place: "VoiceProcessor.init", expected: 960, actual: 480)) {
            try VoiceProcessor(echoCanceller: canceller)
        }
        #expect(throws: AudioCodecError.self) { try Resampler(inputRate: 0, outputRate: 48_000) }
    }
}
