/// The one audio format every Clubroom device speaks to the rest of the program: 48 kHz, mono, signed 16-bit,
/// in periods of 10 ms. Devices that run at another rate or channel count are converted at the edge.
public enum DeviceFormat {
    /// Samples per second.
    public static let sampleRate = 48_000
    /// Samples per period: 10 ms, the unit in which devices are read and written.
    public static let periodSamples = 480
    /// Periods the ALSA buffer holds: enough to ride out a late wake-up without adding much delay.
    public static let bufferPeriods = 4
}

/// Which way audio flows through a device.
public enum DeviceDirection: String, Sendable, Equatable {
    /// From a microphone into the program.
    case capture
    /// From the program to a loudspeaker.
    case playback
}
