import AudioCodec
import AudioCore
import Glibc
import Synchronization

/// A microphone that hears a steady sine tone (`tone:HZ`), for bots, tests and benchmarks: AudioCore's
/// `ToneGenerator`, paced like a device.
public final class ToneInput: AudioInput {
    public let name: String
    /// The tone's peak amplitude, in sample units (at most 32767).
    public let amplitude: Double
    private var generator: ToneGenerator
    private var pacer: Pacer
    /// Not when unpaced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacer.pacing.suitsRealTimePriority }

    /// The tone's frequency in hertz.
    public var frequency: Double { generator.frequency }

    /// Creates a tone of `frequency` Hz at `amplitude` (default about −12 dBFS).
    public init(frequency: Double = 440, amplitude: Double = 8_000, pacing: Pacing = .realTime) {
        self.name = "tone:\(Int(frequency))"
        self.amplitude = min(abs(amplitude), 32_767)
        generator = ToneGenerator(frequency: frequency, amplitude: self.amplitude / 32_767)
        pacer = Pacer(pacing)
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        pacer.wait(samples: buffer.count)
        generator.fill(buffer)
        return 0
    }
}

/// A microphone that hears nothing: what a stream falls back to when there is no capture device.
public final class SilenceInput: AudioInput {
    public let name: String
    private var pacer: Pacer
    /// Not when unpaced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacer.pacing.suitsRealTimePriority }

    /// Creates a silent input called `name`.
    public init(name: String = "silence", pacing: Pacing = .realTime) {
        self.name = name
        pacer = Pacer(pacing)
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        pacer.wait(samples: buffer.count)
        buffer.baseAddress!.update(repeating: 0, count: buffer.count)
        return 0
    }
}

/// A microphone that plays samples, over and over (or once, then silence): a WAV file for bots and tests, or
/// samples held in memory for the benchmarks.
///
/// The samples are in memory (a file is read whole and converted to 48 kHz mono when the input is created), so
/// reading periods does not touch the disk or allocate.
public final class WAVFileInput: AudioInput {
    public let name: String
    /// The samples, 48 kHz mono.
    public let samples: [Int16]
    /// Whether the samples start again after their end (otherwise silence follows).
    public let loops: Bool
    /// Samples read so far, counted past the end and from the starting offset.
    public private(set) var position = 0
    private var pacer: Pacer
    /// Not when unpaced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacer.pacing.suitsRealTimePriority }

    /// Reads the WAV file at `path` (16-bit PCM, any rate and channel count).
    public init(path: String, loops: Bool = true, pacing: Pacing = .realTime) throws(AudioDeviceError) {
        name = path
        do {
            samples = try SoundFile.readMono48k(path: path)
        } catch {
            throw .file(path: path, problem: error.problemDescription)
        }
        self.loops = loops
        pacer = Pacer(pacing)
    }

    /// Plays `samples` (48 kHz mono), starting `offset` samples in.
    public init(
        samples: [Int16], loops: Bool, offset: Int = 0, name: String = "samples", pacing: Pacing = .unpaced
    ) {
        self.name = name
        self.samples = samples
        self.loops = loops
        position = samples.isEmpty ? 0 : offset % samples.count
        pacer = Pacer(pacing)
    }

    /// Whether a non-looping input has been read to its end.
    public var isFinished: Bool { !loops && position >= samples.count }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        pacer.wait(samples: buffer.count)
        var filled = 0
        samples.withUnsafeBufferPointer { source in
            while filled < buffer.count {
                var at = position
                if loops, !source.isEmpty { at %= source.count }
                guard at < source.count else { break }
                let count = min(buffer.count - filled, source.count - at)
                (buffer.baseAddress! + filled).update(from: source.baseAddress! + at, count: count)
                filled += count
                position = at + count
            }
        }
        if filled < buffer.count {
            (buffer.baseAddress! + filled).update(repeating: 0, count: buffer.count - filled)
            position += buffer.count - filled
        }
        return 0
    }
}

/// A loudspeaker that plays into nothing: what a stream falls back to when there is no playback device.
public final class NullOutput: AudioOutput {
    public let name: String
    private var pacer: Pacer
    /// Not when unpaced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacer.pacing.suitsRealTimePriority }

    /// Creates a sink called `name` that discards what it is given.
    public init(name: String = "null", pacing: Pacing = .realTime) {
        self.name = name
        pacer = Pacer(pacing)
    }

    public func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        pacer.wait(samples: buffer.count)
        return 0
    }
}

/// A loudspeaker that records what it plays into a 48 kHz mono 16-bit WAV file, for bots and tests.
///
/// Periods gather in a buffer of a second, allocated when the file is opened, which goes to the file with one
/// `write(2)` when full: one system call a second on the audio thread instead of one a period, and no
/// allocation. After each of those writes the header's sizes are brought up to date (two 4-byte `pwrite`s), so
/// a file whose program was killed still holds a readable WAV of all but its last second. `close()` (or
/// releasing the output) writes what is left and the final sizes.
public final class WAVFileOutput: AudioOutput {
    public let name: String
    private var descriptor: Int32
    private var dataBytes = 0
    /// Bytes of audio in the file (the rest of `dataBytes` waits in `pending`).
    private var fileBytes = 0
    private let pending = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.sampleRate)
    private var pendingCount = 0
    private var pacer: Pacer
    /// Not when unpaced: an unpaced device on a real-time thread would starve the machine.
    public var suitsRealTimePriority: Bool { pacer.pacing.suitsRealTimePriority }

    /// The paths `continuing` opens have opened in this process (see `init`).
    private static let opened = Mutex<Set<String>>([])

    /// Creates (or truncates) the WAV file at `path`. With `continuing`, a file this process already recorded
    /// to is continued instead: a loudspeaker reopened (the stage opens it anew with the microphone, and again
    /// on leaving it) adds to the recording rather than starting it over.
    public init(path: String, pacing: Pacing = .realTime, continuing: Bool = false) throws(AudioDeviceError) {
        name = path
        pacer = Pacer(pacing)
        let again = continuing && !Self.opened.withLock { $0.insert(path).inserted }
        if again {
            descriptor = open(path, O_WRONLY | O_CLOEXEC)
            var status = stat()
            if descriptor >= 0, fstat(descriptor, &status) == 0, Int(status.st_size) >= 44 {
                fileBytes = (Int(status.st_size) - 44) & ~1
                dataBytes = fileBytes
                guard lseek(descriptor, off_t(44 + fileBytes), SEEK_SET) >= 0 else {
                    Glibc.close(descriptor)
                    throw .file(path: path, problem: String(cString: strerror(errno)))
                }
                return
            }
            if descriptor >= 0 { Glibc.close(descriptor) }
        }
        // What the room said is for whoever recorded it: mode 0600, also when an older file is written over.
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .file(path: path, problem: String(cString: strerror(errno))) }
        guard fchmod(descriptor, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw .file(path: path, problem: reason)
        }
        let header = Self.header(dataBytes: 0)
        guard header.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress, $0.count) }) == header.count else {
            Glibc.close(descriptor)
            throw .file(path: path, problem: "cannot write the header")
        }
    }

    deinit {
        close()
        pending.deallocate()
    }

    /// Why a recording could not be written at `path`, in words, or nil when it can: checked without creating
    /// or changing anything, so that a bad path is said before joining rather than found when the loudspeaker
    /// opens (see `DeviceSpec.outputProblem`).
    public static func problemWriting(path: String) -> String? {
        var status = stat()
        if stat(path, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR { return "\(path) is a folder; give a file name inside it" }
            return access(path, W_OK) == 0 ? nil : "the file \(path) cannot be written over (you may not write it)"
        }
        let cut = path.lastIndex(of: "/")
        let folder = cut.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard stat(folder, &status) == 0 else { return "the folder \(folder) does not exist" }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "\(folder) is not a folder" }
        return access(folder, W_OK | X_OK) == 0 ? nil : "you may not write in the folder \(folder)"
    }

    /// Bytes of audio played so far (some may still wait in the buffer until `close()`).
    public var writtenBytes: Int { dataBytes }

    public func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        pacer.wait(samples: buffer.count)
        guard descriptor >= 0 else { throw .ioFailed(device: name, code: -EBADF) }
        var offset = 0
        while offset < buffer.count {
            let count = min(buffer.count - offset, pending.count - pendingCount)
            (pending.baseAddress! + pendingCount).update(from: buffer.baseAddress! + offset, count: count)
            pendingCount += count
            offset += count
            if pendingCount == pending.count { try flush() }
        }
        dataBytes += buffer.count * 2
        return 0
    }

    /// Writes the buffered periods to the file.
    private func flush() throws(AudioDeviceError) {
        let bytes = UnsafeRawPointer(pending.baseAddress!)
        let total = pendingCount * 2
        var done = 0
        while done < total {
            let written = Glibc.write(descriptor, bytes + done, total - done)
            if written < 0 {
                if errno == EINTR { continue }
                throw .ioFailed(device: name, code: -errno)
            }
            done += written
        }
        pendingCount = 0
        fileBytes += total
        // The header's two sizes, at their offsets in the 44-byte header (no allocation on the audio thread).
        let data = UInt32(min(fileBytes, Int(UInt32.max) - 36))
        var riffSize = (data + 36).littleEndian
        var dataSize = data.littleEndian
        _ = pwrite(descriptor, &riffSize, 4, 4)
        _ = pwrite(descriptor, &dataSize, 4, 40)
    }

    /// Writes what is buffered and the final sizes into the header, and closes the file; later writes fail.
    public func close() {
        guard descriptor >= 0 else { return }
        try? flush()
        let header = Self.header(dataBytes: dataBytes)
        _ = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// The header for this much audio; past the 4 GiB a RIFF file can say, the sizes stay at their largest.
    private static func header(dataBytes: Int) -> [UInt8] {
        let largest = Int(UInt32.max) - 36
        return WAVAudio.header(sampleRate: AudioFormat.sampleRate, channelCount: 1, dataBytes: min(dataBytes, largest))
            ?? []
    }
}
