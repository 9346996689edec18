import Glibc

/// A microphone that hears a steady sine tone, for bots, tests and benchmarks.
public final class ToneInput: AudioInput {
    public let name: String
    /// The tone's frequency in hertz.
    public let frequency: Double
    /// The tone's peak amplitude, in sample units (at most 32767).
    public let amplitude: Double
    private var clock = PeriodClock()
    private let pacing: Pacing
    /// Only when paced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacing == .realTime }
    private var phase = 0.0

    /// Creates a tone of `frequency` Hz at `amplitude` (default about −12 dBFS).
    public init(frequency: Double = 440, amplitude: Double = 8_000, pacing: Pacing = .realTime) {
        self.name = "tone:\(Int(frequency))"
        self.frequency = frequency
        self.amplitude = min(abs(amplitude), 32_767)
        self.pacing = pacing
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        if pacing == .realTime { clock.wait() }
        let step = 2 * Double.pi * frequency / Double(DeviceFormat.sampleRate)
        let samples = buffer.baseAddress!
        for index in 0..<buffer.count {
            samples[index] = Int16(amplitude * sin(phase))
            phase += step
            // Keeping the phase small keeps `sin` exact over hours of tone.
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return 0
    }
}

/// A microphone that hears nothing: what a stream falls back to when there is no capture device.
public final class SilenceInput: AudioInput {
    public let name: String
    private var clock = PeriodClock()
    private let pacing: Pacing
    /// Only when paced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacing == .realTime }

    /// Creates a silent input called `name`.
    public init(name: String = "silence", pacing: Pacing = .realTime) {
        self.name = name
        self.pacing = pacing
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        if pacing == .realTime { clock.wait() }
        buffer.baseAddress!.update(repeating: 0, count: buffer.count)
        return 0
    }
}

/// A microphone that plays a WAV file, over and over (or once, then silence), for bots and tests.
///
/// The file is read whole when the input is created (converted to 48 kHz mono), so reading periods does not
/// touch the disk or allocate.
public final class WAVFileInput: AudioInput {
    public let name: String
    /// The file's samples at 48 kHz mono.
    public let samples: [Int16]
    /// Whether the file starts again after its end (otherwise silence follows).
    public let loops: Bool
    private var position = 0
    private var clock = PeriodClock()
    private let pacing: Pacing
    /// Only when paced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacing == .realTime }

    /// Reads the WAV file at `path` (16-bit PCM, any rate and channel count).
    public init(path: String, loops: Bool = true, pacing: Pacing = .realTime) throws(AudioDeviceError) {
        self.name = path
        self.samples = try WAVFile.readMono48k(path: path)
        self.loops = loops
        self.pacing = pacing
    }

    /// Whether a non-looping file has been read to its end.
    public var isFinished: Bool { !loops && position >= samples.count }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        if pacing == .realTime { clock.wait() }
        var filled = 0
        while filled < buffer.count {
            if position >= samples.count {
                guard loops, !samples.isEmpty else { break }
                position = 0
            }
            let count = min(buffer.count - filled, samples.count - position)
            samples.withUnsafeBufferPointer { source in
                (buffer.baseAddress! + filled).update(from: source.baseAddress! + position, count: count)
            }
            filled += count
            position += count
        }
        (buffer.baseAddress! + filled).update(repeating: 0, count: buffer.count - filled)
        return 0
    }
}

/// A loudspeaker that plays into nothing: what a stream falls back to when there is no playback device.
public final class NullOutput: AudioOutput {
    public let name: String
    private var clock = PeriodClock()
    private let pacing: Pacing
    /// Only when paced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacing == .realTime }

    /// Creates a sink called `name` that discards what it is given.
    public init(name: String = "null", pacing: Pacing = .realTime) {
        self.name = name
        self.pacing = pacing
    }

    public func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        if pacing == .realTime { clock.wait() }
        return 0
    }
}

/// A loudspeaker that records what it plays into a 48 kHz mono 16-bit WAV file, for bots and tests.
///
/// Periods go straight to the file with `write(2)` and no allocation; the header's sizes are filled in by
/// `close()` (or when the output is released).
public final class WAVFileOutput: AudioOutput {
    public let name: String
    private var descriptor: Int32
    private var dataBytes = 0
    private var clock = PeriodClock()
    private let pacing: Pacing
    /// Only when paced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacing == .realTime }

    /// Creates (or truncates) the WAV file at `path`.
    public init(path: String, pacing: Pacing = .realTime) throws(AudioDeviceError) {
        name = path
        self.pacing = pacing
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .file(path: path, problem: String(cString: strerror(errno))) }
        let header = WAVFile.header(sampleRate: DeviceFormat.sampleRate, channels: 1, dataBytes: 0)
        guard header.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == header.count else {
            Glibc.close(descriptor)
            throw .file(path: path, problem: "cannot write the header")
        }
    }

    deinit {
        close()
    }

    /// Bytes of audio written so far.
    public var writtenBytes: Int { dataBytes }

    public func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        if pacing == .realTime { clock.wait() }
        guard descriptor >= 0 else { throw .ioFailed(device: name, code: -EBADF) }
        let bytes = UnsafeRawPointer(buffer.baseAddress!)
        let total = buffer.count * 2
        var done = 0
        while done < total {
            let written = Glibc.write(descriptor, bytes + done, total - done)
            if written < 0 {
                if errno == EINTR { continue }
                throw .ioFailed(device: name, code: -errno)
            }
            done += written
        }
        dataBytes += buffer.count * 2
        return 0
    }

    /// Writes the final sizes into the header and closes the file; later writes fail.
    public func close() {
        guard descriptor >= 0 else { return }
        let header = WAVFile.header(sampleRate: DeviceFormat.sampleRate, channels: 1, dataBytes: dataBytes)
        _ = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        Glibc.close(descriptor)
        descriptor = -1
    }
}
