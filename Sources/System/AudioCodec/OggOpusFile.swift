internal import COpusFile

/// An Ogg Opus file read with libopusfile, as 48 kHz mono 16-bit samples: libopusfile always decodes at
/// 48 kHz; its stereo output is averaged to mono here. Opening reads the headers, so a file that is not Ogg Opus
/// is refused before any sample is asked for.
///
/// One thread at a time. `read` does not allocate after the first call.
public final class OggOpusFile {
    private let file: OpaquePointer
    private var stereo: UnsafeMutableBufferPointer<Int16>
    /// The TITLE comment, when the file has one.
    public let title: String?
    /// The length in 48 kHz samples, when the file says it (a seekable file does).
    public let sampleCount: Int?

    /// Opens the file at `path` and reads its headers.
    public init(path: String) throws(SoundFileError) {
        var error: Int32 = 0
        guard let file = op_open_file(path, &error), error == 0 else {
            throw SoundFileError(path: path, problem: Self.problem(error))
        }
        self.file = file
        if let tags = op_tags(file, -1), let text = opus_tags_query(tags, "TITLE", 0) {
            title = String(cString: text)
        } else {
            title = nil
        }
        let total = op_pcm_total(file, -1)
        sampleCount = total >= 0 ? Int(total) : nil
        stereo = .allocate(capacity: 2 * 5_760)
        stereo.initialize(repeating: 0)
    }

    deinit {
        op_free(file)
        stereo.deallocate()
    }

    /// Decodes the next samples into the front of `output` (mono, 48 kHz) and returns how many; 0 at the end of
    /// the file. A hole in the stream (a missing page) is skipped.
    public func read(into output: UnsafeMutableBufferPointer<Int16>) throws(SoundFileError) -> Int {
        guard let target = output.baseAddress, !output.isEmpty else { return 0 }
        while true {
            let wanted = min(output.count, stereo.count / 2)
            let frames = op_read_stereo(file, stereo.baseAddress, Int32(wanted * 2))
            if frames == OP_HOLE { continue }
            guard frames >= 0 else { throw SoundFileError(path: "", problem: Self.problem(frames)) }
            for index in 0..<Int(frames) {
                target[index] = Int16((Int32(stereo[2 * index]) + Int32(stereo[2 * index + 1])) / 2)
            }
            return Int(frames)
        }
    }

    /// Moves to `sample` (48 kHz, from the start of the file): the next `read` starts there. A file that cannot
    /// seek (or a place past its end) throws.
    public func seek(toSample sample: Int) throws(SoundFileError) {
        let code = op_pcm_seek(file, Int64(max(0, sample)))
        guard code == 0 else { throw SoundFileError(path: "", problem: Self.problem(code)) }
    }

    /// libopusfile's error code as a problem, in words.
    static func problem(_ code: Int32) -> SoundFileError.Problem {
        switch code {
        case OP_EREAD, OP_EFAULT: return .unreadable
        case OP_ENOTFORMAT: return .unknownFormat
        case OP_EVERSION: return .notOggOpus("an Opus version this reader does not know")
        case OP_EBADHEADER: return .notOggOpus("a damaged Opus header")
        case OP_ENOTAUDIO: return .notOggOpus("no audio in it")
        case OP_EBADPACKET, OP_EBADLINK, OP_EBADTIMESTAMP: return .notOggOpus("a damaged stream")
        default: return .notOggOpus("libopusfile error \(code)")
        }
    }
}
