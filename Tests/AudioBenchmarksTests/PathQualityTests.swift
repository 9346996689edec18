import AudioCore
import Foundation
import RoomTesting
import Testing

@testable import AudioBenchmarks

@Suite(.ownThread) struct PathQualityTests {
    /// A loud voice-like sound (48 kHz, peaks near 0.9 of full scale): harmonics of a pitch gliding between
    /// 110 and 190 Hz, in syllables four times a second, so that Opus codes it as speech, not as noise.
    static func loudVoice(seconds: Double) -> [Int16] {
        let rate = Double(AudioFormat.sampleRate)
        var phase = 0.0
        return (0..<Int(seconds * rate)).map { index in
            let time = Double(index) / rate
            let pitch = 150 + 40 * sin(2 * Double.pi * 1.3 * time)
            phase += 2 * Double.pi * pitch / rate
            let harmonics = (1...6).reduce(0.0) { sum, harmonic in
                sum + sin(Double(harmonic) * phase) / Double(harmonic)
            }
            let syllables = 0.55 + 0.45 * sin(2 * Double.pi * 4 * time)
            return Int16((18_000 * syllables * harmonics).rounded())
        }
    }

    /// One speaker heard alone comes out as libopus decoded it: the listener's mixer must not bend a lone
    /// voice's peaks (its soft clipper, for sums, bends everything above -6 dBFS and never lets one source
    /// past 24576).
    @Test func aLoneLoudSpeakerIsNotBentByTheMixer() throws {
        let speech = Self.loudVoice(seconds: 1.5)
        #expect(speech.map { abs(Int($0)) }.max()! > 28_000)
        let result = try PathQuality.run(
            speech: speech, lossPercent: 0, seed: 1, voiceProcessing: false, leadInSeconds: 1)
        #expect(result.lostFrames == 0)
        #expect(result.opusAlone.map { abs(Int($0)) }.max()! > 27_000)
        #expect(result.path.map { abs(Int($0)) }.max()! > 27_000)
    }
}
