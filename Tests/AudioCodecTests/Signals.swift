import Foundation
import RoomTesting

/// The codec tests' own signal: tones and measurements come from RoomTesting's `Signals`.
extension Signals {
    /// Speech-like test signal: a tone whose pitch and loudness wander, with a little noise.
    /// Deterministic, so that failures reproduce.
    static func speechLike(count: Int, seed: UInt64 = 7) -> [Int16] {
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
