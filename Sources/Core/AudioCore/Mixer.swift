/// Mixes any number of speakers' frames into one, with per-speaker gain and a soft clipper for headroom.
///
/// Samples add up in a preallocated `Float` accumulator, so nothing wraps however many sources there are; on
/// ``render(into:)`` everything below the knee (-6 dBFS) passes through unchanged and everything above it bends
/// smoothly towards full scale without ever reaching past it. No call allocates after `init`.
public struct Mixer: Sendable {
    /// Where soft clipping starts: half of full scale, -6 dBFS.
    public static let knee: Float = 16_384
    /// The loudest sample the output can hold.
    public static let fullScale: Float = 32_767
    /// The largest per-speaker gain: 200 %.
    public static let maximumGain: Float = 2

    private var accumulator: [Float]
    /// Samples per mixed frame.
    public let frameLength: Int
    /// Sources added since the last render.
    public private(set) var sourceCount = 0

    /// A mixer for frames of `frameLength` samples (one 20 ms frame by default).
    public init(frameLength: Int = AudioFormat.samplesPerFrame) {
        self.frameLength = max(1, frameLength)
        accumulator = Array(repeating: 0, count: self.frameLength)
    }

    /// The gain for a local volume in percent, clamped to 0–200 %.
    public static func gain(percent: Int) -> Float {
        Float(min(200, max(0, percent))) / 100
    }

    /// Adds one source's frame at `gain` (clamped to 0–2). Samples beyond `frameLength` are ignored; a shorter
    /// frame adds silence for the rest.
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>, gain: Float = 1) {
        let gain = min(Self.maximumGain, max(0, gain.isNaN ? 0 : gain))
        let count = min(samples.count, frameLength)
        accumulator.withUnsafeMutableBufferPointer { sums in
            for index in 0..<count {
                sums[index] += Float(samples[index]) * gain
            }
        }
        sourceCount += 1
    }

    /// Adds one source's frame at `gain` (clamped to 0–2), like the buffer-pointer form.
    public mutating func add(_ samples: borrowing [Int16], gain: Float = 1) {
        samples.withUnsafeBufferPointer { add($0, gain: gain) }
    }

    /// Writes the soft-clipped mix to the front of `output` (up to `frameLength` samples) and starts a new frame.
    public mutating func render(into output: UnsafeMutableBufferPointer<Int16>) {
        let count = min(output.count, frameLength)
        accumulator.withUnsafeMutableBufferPointer { sums in
            for index in 0..<count {
                output[index] = Self.toSample(Self.softClip(sums[index]))
            }
            for index in sums.indices {
                sums[index] = 0
            }
        }
        sourceCount = 0
    }

    /// The clipping curve, in sample units: identity up to ``knee``, then `knee + r·v/(1+v)` with
    /// `v = (|x| - knee)/r` and `r = fullScale - knee`, which meets the identity with the same slope and
    /// approaches full scale without reaching it.
    public static func softClip(_ x: Float) -> Float {
        let magnitude = abs(x)
        guard magnitude > knee else { return x }
        guard magnitude.isFinite else { return x.isNaN ? 0 : (x > 0 ? fullScale : -fullScale) }
        let range = fullScale - knee
        let excess = (magnitude - knee) / range
        let bent = knee + range * excess / (1 + excess)
        return x < 0 ? -bent : bent
    }

    private static func toSample(_ value: Float) -> Int16 {
        let rounded = value.rounded()
        if rounded >= 32_767 { return 32_767 }
        if rounded <= -32_768 { return -32_768 }
        return Int16(rounded)
    }
}
