/// A source of captured audio: a microphone through ALSA, or a virtual device (tone, WAV file, silence).
///
/// A capture stream calls `read` over and over on its own real-time thread, so implementations must not
/// allocate, log or take locks there. They are used by one thread at a time.
public protocol AudioInput: AnyObject {
    /// The device's name, as a person would choose it (`default`, `hw:1`, `tone:440`, a file path).
    var name: String { get }

    /// Waits for one period of audio (48 kHz mono; `buffer.count` samples, normally 480) and writes it to
    /// `buffer`. Returns how many overruns (xruns) were recovered along the way, normally 0.
    ///
    /// A thrown error means the device stopped working; the stream reopens it.
    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int

    /// Whether the thread serving this device should run at real-time priority (when the stream asks for it):
    /// true for hardware and paced virtual devices, false for a sound server's plugin.
    var suitsRealTimePriority: Bool { get }
}

/// A place captured or mixed audio is played: a loudspeaker through ALSA, or a virtual sink (WAV file, null).
///
/// A playback stream calls `write` over and over on its own real-time thread, so implementations must not
/// allocate, log or take locks there. They are used by one thread at a time.
public protocol AudioOutput: AnyObject {
    /// The device's name, as a person would choose it.
    var name: String { get }

    /// Plays one period (48 kHz mono; `buffer.count` samples, normally 480), waiting while the device's buffer
    /// is full. Returns how many underruns (xruns) were recovered along the way, normally 0.
    ///
    /// A thrown error means the device stopped working; the stream reopens it.
    func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int

    /// Whether the thread serving this device should run at real-time priority (when the stream asks for it):
    /// true for hardware and paced virtual devices, false for a sound server's plugin.
    var suitsRealTimePriority: Bool { get }
}

extension AudioInput {
    public var suitsRealTimePriority: Bool { true }
}

extension AudioOutput {
    public var suitsRealTimePriority: Bool { true }
}

/// Where a capture stream delivers its samples: the producer end of a lock-free single-producer,
/// single-consumer ring that the rest of the program reads.
///
/// Called on the real-time capture thread: it must not allocate, log, block or take a lock.
public protocol SampleSink: AnyObject, Sendable {
    /// Appends up to `samples.count` samples and returns how many fitted.
    func write(_ samples: UnsafeBufferPointer<Int16>) -> Int
}

/// Where a playback stream takes its samples from: the consumer end of a lock-free single-producer,
/// single-consumer ring (or the mixer behind one).
///
/// Called on the real-time playback thread: it must not allocate, log, block or take a lock.
public protocol SampleSource: AnyObject, Sendable {
    /// Moves up to `buffer.count` samples into `buffer` and returns how many there were.
    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int
}

/// Which way audio flows through a device.
public enum DeviceDirection: String, Sendable, Equatable {
    /// From a microphone into the program.
    case capture
    /// From the program to a loudspeaker.
    case playback
}
