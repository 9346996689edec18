import AudioDevices

/// A microphone that plays samples held in memory, once (then silence) or looped, without pacing: for
/// benchmarks and the quality path, which run faster than real time.
public final class SampleInput: AudioInput {
    public let name: String
    /// The samples, 48 kHz mono.
    public let samples: [Int16]
    /// Whether the samples start again after their end.
    public let loops: Bool
    /// Samples read so far, counted past the end.
    public private(set) var position = 0

    /// Plays `samples`, starting `offset` samples in.
    public init(samples: [Int16], loops: Bool, offset: Int = 0, name: String = "samples") {
        self.samples = samples
        self.loops = loops
        self.name = name
        position = samples.isEmpty ? 0 : offset % samples.count
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        samples.withUnsafeBufferPointer { source in
            for index in 0..<buffer.count {
                let at = position + index
                if loops, !source.isEmpty {
                    buffer[index] = source[at % source.count]
                } else {
                    buffer[index] = at < source.count ? source[at] : 0
                }
            }
        }
        position += buffer.count
        return 0
    }
}
