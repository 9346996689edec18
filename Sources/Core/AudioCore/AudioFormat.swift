/// The one audio format Clubroom uses everywhere between devices, codec, jitter buffers and mixer.
///
/// 48 kHz, mono, signed 16-bit samples. Opus frames are 20 ms (960 samples, which is also the RTP timestamp step,
/// since RFC 7587 fixes the RTP clock at 48 kHz); devices run 10 ms periods (480 samples), so two periods make one
/// frame.
public enum AudioFormat {
    /// Samples per second, and the RTP clock rate for Opus (RFC 7587).
    public static let sampleRate = 48_000
    /// Interleaved channels: Clubroom is mono from end to end.
    public static let channelCount = 1
    /// Bytes in one S16 sample.
    public static let bytesPerSample = 2
    /// The Opus frame length in milliseconds.
    public static let frameMilliseconds = 20
    /// Samples in one 20 ms Opus frame.
    public static let samplesPerFrame = 960
    /// The device period in milliseconds.
    public static let periodMilliseconds = 10
    /// Samples in one 10 ms device period.
    public static let samplesPerPeriod = 480
    /// How far the RTP timestamp advances per frame.
    public static let rtpTimestampStep: UInt32 = 960
    /// One frame in microseconds, the unit the jitter buffer keeps time in.
    public static let frameMicroseconds: Int64 = 20_000

    /// The number of samples in `milliseconds` of audio.
    public static func samples(milliseconds: Int) -> Int {
        milliseconds * (sampleRate / 1000)
    }

    /// The duration of `samples` samples in whole milliseconds, rounded down.
    public static func milliseconds(samples: Int) -> Int {
        samples / (sampleRate / 1000)
    }

    /// The duration of `samples` samples in microseconds, rounded down (one sample is 20.83 µs).
    public static func microseconds(samples: Int64) -> Int64 {
        samples * 125 / 6
    }

    /// The duration of `samples` samples in nanoseconds, rounded down.
    public static func nanoseconds(samples: Int64) -> Int64 {
        samples * 62_500 / 3
    }

    /// The number of whole samples in `microseconds`, rounded down.
    public static func samples(microseconds: Int64) -> Int64 {
        microseconds * 6 / 125
    }

    /// The size in bytes of `samples` mono S16 samples.
    public static func byteCount(samples: Int) -> Int {
        samples * bytesPerSample * channelCount
    }
}

extension Int64 {
    /// `self + other`, pinned to the representable range instead of trapping, for times supplied by callers.
    func addingSaturating(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, pinned to the representable range instead of trapping.
    func subtractingSaturating(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other < 0 ? .max : .min
    }
}
