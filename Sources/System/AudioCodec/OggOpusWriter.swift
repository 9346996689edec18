import AudioCore
internal import COpusEnc
import Glibc

/// Why an Ogg Opus file could not be written: the path and the problem in words (the system's, for a failed write).
public struct OggOpusWriterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What went wrong, as a phrase ("No space left on device").
    public var problem: String

    public var description: String { "\(path): \(problem)" }
}

/// An Ogg Opus file written as it goes (libopusenc): 48 kHz mono 20 ms frames in, pages out, so that a process
/// killed at any moment leaves a file that plays up to its last second.
///
/// Each frame is encoded as it comes (no decision delay), and a page goes to the file at least every second of
/// audio (the muxing delay), through `write(2)` on the file itself, with no buffer in the process: what was
/// written survives the process. The header goes out when the file is created, so even a file killed at once is an
/// Ogg Opus file with its tags. A failed write (a full disk, a file that went away) is a thrown error with the
/// system's words; nothing is written after it.
public final class OggOpusWriter: MixOutput {
    /// The most audio a page holds before it is written, in samples at 48 kHz: at most this much is lost when the
    /// process is killed.
    public static let pageDelaySamples: Int32 = 48_000
    /// The bit rate of the room's mix: 32 kbit/s, about 14 MB an hour.
    public static let defaultBitrate: Int32 = 32_000

    /// The file written.
    public let path: String
    private var encoder: OpaquePointer?
    private let sink: Sink
    private var failed: OggOpusWriterError?
    /// Whether any sample went to the encoder: libopusenc cannot end a stream that has none.
    private var hasAudio = false

    /// Where libopusenc's pages go: the file's descriptor, and the first write's failure.
    private final class Sink {
        var descriptor: Int32
        var failure: Int32 = 0
        var bytes: Int64 = 0
        init(descriptor: Int32) { self.descriptor = descriptor }
    }

    /// Creates (or truncates) the file at `path`, mode 0600, and writes its header with `tags` (Vorbis comments, in
    /// order, such as `("ROOM", "jazz")`).
    public init(
        path: String, tags: [(String, String)], bitrate: Int32 = OggOpusWriter.defaultBitrate
    )
        throws(OggOpusWriterError)
    {
        self.path = path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OggOpusWriterError(path: path, problem: String(cString: strerror(errno))) }
        sink = Sink(descriptor: descriptor)
        guard let comments = ope_comments_create() else {
            Glibc.close(descriptor)
            sink.descriptor = -1
            throw OggOpusWriterError(path: path, problem: "libopusenc could not make the tags")
        }
        defer { ope_comments_destroy(comments) }
        for (tag, value) in tags { _ = ope_comments_add(comments, tag, value) }
        var callbacks = OpusEncCallbacks(
            write: { user, bytes, length in
                let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
                return OggOpusWriter.writeAll(sink, bytes, Int(length)) ? 0 : 1
            },
            close: { user in
                let sink = Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue()
                guard sink.descriptor >= 0 else { return 0 }
                let closed = Glibc.close(sink.descriptor)
                if closed != 0, sink.failure == 0 { sink.failure = errno }
                sink.descriptor = -1
                return closed == 0 ? 0 : 1
            })
        var error: Int32 = 0
        let user = Unmanaged.passUnretained(sink).toOpaque()
        encoder = ope_encoder_create_callbacks(&callbacks, user, comments, 48_000, 1, 0, &error)
        guard let encoder else {
            Glibc.close(descriptor)
            sink.descriptor = -1
            throw OggOpusWriterError(path: path, problem: "libopusenc: \(String(cString: ope_strerror(error)))")
        }
        _ = clubroom_ope_set_decision_delay(encoder, 0)
        _ = clubroom_ope_set_muxing_delay(encoder, Self.pageDelaySamples)
        _ = clubroom_ope_set_bitrate(encoder, bitrate)
        let status = ope_encoder_flush_header(encoder)
        if let problem = problem(status: status) {
            ope_encoder_destroy(encoder)
            self.encoder = nil
            if sink.descriptor >= 0 { Glibc.close(sink.descriptor) }
            sink.descriptor = -1
            throw problem
        }
    }

    deinit {
        if let encoder { ope_encoder_destroy(encoder) }
        if sink.descriptor >= 0 { Glibc.close(sink.descriptor) }
    }

    /// Bytes written to the file so far.
    public var writtenBytes: Int64 { sink.bytes }

    /// Encodes one frame (any length; the room's are 960 samples); `offset` is not needed, the file's own
    /// granule positions keep the timeline.
    public func write(_ frame: [Int16], offset: Int64) throws {
        try append(frame)
    }

    /// Encodes samples (48 kHz mono), throwing the file's failure.
    public func append(_ samples: [Int16]) throws(OggOpusWriterError) {
        if let failed { throw failed }
        guard let encoder else { throw OggOpusWriterError(path: path, problem: "the file is closed") }
        let status = samples.withUnsafeBufferPointer { ope_encoder_write(encoder, $0.baseAddress, Int32($0.count)) }
        if let problem = problem(status: status) {
            failed = problem
            throw problem
        }
        hasAudio = hasAudio || !samples.isEmpty
    }

    /// Writes the last page (end of stream) and closes the file.
    public func close() throws {
        try finish()
    }

    /// Writes the last page and closes the file, throwing its failure.
    public func finish() throws(OggOpusWriterError) {
        guard let encoder else {
            if let failed { throw failed }
            return
        }
        // Draining a stream no sample went into fails an assertion inside libopusenc (0.2) and aborts the
        // process: a file closed before any audio gets one frame of silence, and is a complete file of 20 ms.
        if !hasAudio, failed == nil {
            let silence = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            let status = silence.withUnsafeBufferPointer {
                ope_encoder_write(encoder, $0.baseAddress, Int32($0.count))
            }
            failed = problem(status: status)
        }
        self.encoder = nil
        let status = failed == nil ? ope_encoder_drain(encoder) : OPE_OK
        ope_encoder_destroy(encoder)
        if sink.descriptor >= 0 {
            if Glibc.close(sink.descriptor) != 0, sink.failure == 0 { sink.failure = errno }
            sink.descriptor = -1
        }
        if let failed { throw failed }
        if let problem = problem(status: status) { throw problem }
    }

    /// The error for a libopusenc status and the sink's failure, or nil when all went well.
    private func problem(status: Int32) -> OggOpusWriterError? {
        if sink.failure != 0 { return OggOpusWriterError(path: path, problem: String(cString: strerror(sink.failure))) }
        guard status != OPE_OK else { return nil }
        return OggOpusWriterError(path: path, problem: "libopusenc: \(String(cString: ope_strerror(status)))")
    }

    /// Writes `length` bytes to the sink's file, through short writes and interruptions; false (the error kept)
    /// when the file refuses them.
    private static func writeAll(_ sink: Sink, _ bytes: UnsafePointer<UInt8>?, _ length: Int) -> Bool {
        guard sink.failure == 0 else { return false }
        guard sink.descriptor >= 0, let bytes else {
            sink.failure = EBADF
            return false
        }
        var done = 0
        while done < length {
            let written = Glibc.write(sink.descriptor, bytes + done, length - done)
            if written < 0 {
                if errno == EINTR { continue }
                sink.failure = errno
                return false
            }
            done += written
        }
        sink.bytes += Int64(length)
        return true
    }
}
