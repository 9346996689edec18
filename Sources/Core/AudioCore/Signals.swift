/// A phase-continuous sine generator: consecutive calls continue the wave exactly where the last one stopped.
public struct ToneGenerator: Sendable, Equatable {
    /// The tone's frequency in hertz.
    public let frequency: Double
    /// The peak amplitude as a fraction of full scale (0–1).
    public let amplitude: Double
    /// Samples per second.
    public let sampleRate: Int
    private var phase = 0.0
    private let increment: Double

    /// A tone at `frequency` Hz with peak `amplitude` (a fraction of full scale, clamped to 0–1).
    public init(frequency: Double, amplitude: Double = 0.5, sampleRate: Int = AudioFormat.sampleRate) {
        self.frequency = frequency
        self.amplitude = min(1, max(0, amplitude))
        self.sampleRate = max(1, sampleRate)
        increment = frequency / Double(self.sampleRate)
    }

    /// The next sample.
    public mutating func next() -> Int16 {
        let value = amplitude * 32_767 * AudioMath.sin(2 * AudioMath.pi * phase)
        phase += increment
        phase -= phase.rounded(.down)
        return Int16(value.rounded())
    }

    /// Fills `buffer` with the next samples.
    public mutating func fill(_ buffer: UnsafeMutableBufferPointer<Int16>) {
        for index in buffer.indices {
            buffer[index] = next()
        }
    }

    /// Fills `buffer` with the next samples.
    public mutating func fill(_ buffer: inout [Int16]) {
        buffer.withUnsafeMutableBufferPointer { fill($0) }
    }
}

/// Adds clicks at a fixed interval to a stream, for measuring latency: each click starts at full amplitude
/// (a cosine burst, which survives Opus), so its onset can be found to the sample.
public struct ClickInjector: Sendable, Equatable {
    /// Samples from one click's onset to the next.
    public let interval: Int
    /// Samples in one click.
    public let length: Int
    /// The click's peak amplitude as a fraction of full scale.
    public let amplitude: Double
    /// The click's carrier frequency in hertz.
    public let frequency: Double
    /// Samples processed so far: the stream position of the next sample.
    public private(set) var position = 0

    /// Clicks every `interval` samples (one second by default), each `length` samples long (5 ms); the first
    /// click starts at stream position 0.
    public init(
        interval: Int = AudioFormat.sampleRate, length: Int = 240, amplitude: Double = 0.8, frequency: Double = 1_000
    ) {
        self.interval = max(1, interval)
        self.length = max(1, min(length, self.interval))
        self.amplitude = min(1, max(0, amplitude))
        self.frequency = frequency
    }

    /// The click's sample `index` samples after its onset (0 outside the click).
    public func clickSample(_ index: Int) -> Int16 {
        guard index >= 0 && index < length else { return 0 }
        let carrier = AudioMath.cos(2 * AudioMath.pi * frequency * Double(index) / Double(AudioFormat.sampleRate))
        let fade = 1 - Double(index) / Double(length)
        return Int16((amplitude * 32_767 * carrier * fade).rounded())
    }

    /// Overwrites the click samples that fall in `buffer` (the next `buffer.count` samples of the stream) and
    /// advances the position.
    public mutating func process(_ buffer: UnsafeMutableBufferPointer<Int16>) {
        for index in buffer.indices {
            let offset = (position + index) % interval
            if offset < length {
                buffer[index] = clickSample(offset)
            }
        }
        position += buffer.count
    }

    /// Overwrites the click samples that fall in `buffer` and advances the position.
    public mutating func process(_ buffer: inout [Int16]) {
        buffer.withUnsafeMutableBufferPointer { process($0) }
    }
}

/// Finds click onsets in a recorded stream, to the sample: an onset is the first sample whose magnitude reaches
/// the threshold after at least `quietSamples` below it.
public struct ClickDetector: Sendable, Equatable {
    /// The magnitude that counts as a click.
    public let threshold: Int16
    /// How many samples below the threshold separate two clicks.
    public let quietSamples: Int
    /// Samples processed so far.
    public private(set) var position = 0
    private var quietRun: Int

    /// A detector for clicks reaching `threshold` (a quarter of full scale by default) separated by at least
    /// `quietSamples` (50 ms) of quieter signal.
    public init(threshold: Int16 = 8_192, quietSamples: Int = 2_400) {
        self.threshold = max(1, threshold)
        self.quietSamples = max(1, quietSamples)
        quietRun = self.quietSamples
    }

    /// Scans the next samples of the stream and calls `onset` with the stream position of each click found.
    public mutating func process(_ samples: UnsafeBufferPointer<Int16>, onset: (Int) -> Void) {
        let limit = Int(threshold)
        for (index, sample) in samples.enumerated() {
            if abs(Int(sample)) >= limit {
                if quietRun >= quietSamples {
                    onset(position + index)
                }
                quietRun = 0
            } else {
                quietRun += 1
            }
        }
        position += samples.count
    }

    /// Scans the next samples and returns the stream positions of the clicks found.
    public mutating func process(_ samples: borrowing [Int16]) -> [Int] {
        var onsets: [Int] = []
        samples.withUnsafeBufferPointer { buffer in
            process(buffer) { onsets.append($0) }
        }
        return onsets
    }
}

extension ClickDetector {
    /// Pairs injected click onsets with detected ones: for each sent onset, the delay in samples to the first
    /// detected onset at or after it and less than `maximum` samples later, or nil when that click never arrived.
    /// Both lists are stream positions in ascending order.
    public static func latencies(sent: [Int], received: [Int], maximum: Int) -> [Int?] {
        var next = 0
        return sent.map { onset in
            while next < received.count && received[next] < onset {
                next += 1
            }
            guard next < received.count, received[next] - onset < maximum else { return nil }
            defer { next += 1 }
            return received[next] - onset
        }
    }
}

/// Measures signal energy at chosen frequencies with the Goertzel algorithm, for checking that audio holds a tone.
public enum ToneAnalysis {
    /// The power at `frequency` Hz as a fraction of a full-scale sine's: about 1 for a full-scale sine at that
    /// frequency, 0.25 at half amplitude, near 0 for other frequencies (over whole-cycle windows).
    public static func power(
        of samples: UnsafeBufferPointer<Int16>, frequency: Double, sampleRate: Int = AudioFormat.sampleRate
    ) -> Double {
        guard !samples.isEmpty else { return 0 }
        let omega = 2 * AudioMath.pi * frequency / Double(sampleRate)
        let coefficient = 2 * AudioMath.cos(omega)
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) / 32_767 + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let magnitudeSquared =
            previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let count = Double(samples.count)
        return 4 * magnitudeSquared / (count * count)
    }

    /// The power at `frequency` Hz as a fraction of a full-scale sine's.
    public static func power(
        of samples: borrowing [Int16], frequency: Double, sampleRate: Int = AudioFormat.sampleRate
    ) -> Double {
        samples.withUnsafeBufferPointer { power(of: $0, frequency: frequency, sampleRate: sampleRate) }
    }

    /// The frequency with the most power among `range` scanned in `step` Hz, with that power.
    public static func dominantFrequency(
        of samples: borrowing [Int16], in range: ClosedRange<Double> = 50...8_000, step: Double = 10,
        sampleRate: Int = AudioFormat.sampleRate
    ) -> (frequency: Double, power: Double) {
        samples.withUnsafeBufferPointer { buffer in
            var best = (frequency: range.lowerBound, power: -1.0)
            var frequency = range.lowerBound
            let step = max(0.1, step)
            while frequency <= range.upperBound {
                let power = power(of: buffer, frequency: frequency, sampleRate: sampleRate)
                if power > best.power {
                    best = (frequency, power)
                }
                frequency += step
            }
            return best
        }
    }

    /// The RMS of `samples` as a fraction of full scale.
    public static func rms(of samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        var sum = 0.0
        for sample in samples {
            let value = Double(sample) / 32_768
            sum += value * value
        }
        return (sum / Double(samples.count)).squareRoot()
    }
}
