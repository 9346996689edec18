import AudioCore
import Foundation

/// Test tones and measurements in the units the audio tests speak (16-bit samples, amplitudes in sample units),
/// made and measured by AudioCore's `ToneGenerator` and `ToneAnalysis`.
public enum Signals {
    /// Candidate frequencies from 100 Hz to 3 kHz in 20 Hz steps.
    public static let candidates: [Double] = stride(from: 100.0, through: 3_000.0, by: 20.0).map { $0 }

    /// A sine tone of `frequency` Hz with peak `amplitude` (in sample units), `count` samples long.
    public static func tone(
        frequency: Double, sampleRate: Double = 48_000, amplitude: Double = 8_000, count: Int
    ) -> [Int16] {
        var generator = ToneGenerator(frequency: frequency, amplitude: amplitude / 32_767, sampleRate: Int(sampleRate))
        var samples = [Int16](repeating: 0, count: count)
        generator.fill(&samples)
        return samples
    }

    /// Which of `candidates` (Hz) carries the most power in the first `seconds` of `samples`: 200 ms tells 20 Hz
    /// apart and stays quick in a debug build.
    public static func dominantFrequency(
        _ samples: ArraySlice<Int16>, candidates: [Double] = Signals.candidates, seconds: Double = 0.2,
        sampleRate: Double = 48_000
    ) -> Double {
        let window = Array(samples.prefix(Int(sampleRate * seconds)))
        let rate = Int(sampleRate)
        return candidates.max {
            ToneAnalysis.power(of: window, frequency: $0, sampleRate: rate)
                < ToneAnalysis.power(of: window, frequency: $1, sampleRate: rate)
        }!
    }

    /// Root mean square of `samples`, in sample units.
    public static func rms(_ samples: ArraySlice<Int16>) -> Double {
        ToneAnalysis.rms(of: Array(samples)) * 32_768
    }

    /// Speech-like test signal: a tone whose pitch and loudness wander, with a little noise.
    /// Deterministic, so that failures reproduce.
    public static func speechLike(count: Int, seed: UInt64 = 7) -> [Int16] {
        var generator = SplitMix64(seed: seed)
        var phase = 0.0
        return (0..<count).map { index in
            let time = Double(index) / 48_000
            let pitch = 180 + 60 * sin(2 * Double.pi * 3 * time)
            phase += 2 * Double.pi * pitch / 48_000
            let envelope = 0.5 + 0.5 * sin(2 * Double.pi * 4 * time)
            let voiced = 6_000 * envelope * (sin(phase) + 0.5 * sin(2 * phase) + 0.25 * sin(3 * phase))
            let noise = Double(Int(generator.next() % 401) - 200)
            return Int16(max(-32_000, min(32_000, voiced + noise)))
        }
    }
}
