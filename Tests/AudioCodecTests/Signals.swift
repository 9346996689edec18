import Foundation

/// Test signals and measurements shared by the codec tests.
enum Signals {
    /// A sine tone of `frequency` Hz at `amplitude`, `count` samples long.
    static func tone(
        frequency: Double, sampleRate: Double = 48_000, amplitude: Double = 8_000, count: Int
    )
        -> [Int16]
    {
        (0..<count).map { Int16(amplitude * sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
    }

    /// Power of `samples` at `frequency` (Goertzel's algorithm), normalised by the length.
    static func goertzelPower(
        _ samples: ArraySlice<Int16>, frequency: Double, sampleRate: Double = 48_000
    )
        -> Double
    {
        let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return power / Double(samples.count * samples.count)
    }

    /// Which of `candidates` (Hz) carries the most power in the first 200 ms of `samples` (enough to tell
    /// 20 Hz apart, and quick in a debug build).
    static func dominantFrequency(
        _ samples: ArraySlice<Int16>, candidates: [Double], sampleRate: Double = 48_000
    )
        -> Double
    {
        let window = samples.prefix(Int(sampleRate / 5))
        return candidates.max {
            goertzelPower(window, frequency: $0, sampleRate: sampleRate)
                < goertzelPower(window, frequency: $1, sampleRate: sampleRate)
        }!
    }

    /// Root mean square of `samples`.
    static func rms(_ samples: ArraySlice<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return sqrt(samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count))
    }

    /// Candidate frequencies from 100 Hz to 3 kHz in 20 Hz steps.
    static let candidates: [Double] = stride(from: 100.0, through: 3_000.0, by: 20.0).map { $0 }

    /// Deterministic pseudo-random numbers (SplitMix64) so that failures reproduce.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Speech-like test signal: a tone whose pitch and loudness wander, with a little noise.
    static func speechLike(count: Int, seed: UInt64 = 7) -> [Int16] {
        var generator = SeededGenerator(state: seed)
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
