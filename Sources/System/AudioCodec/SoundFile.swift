import AudioCore
import Foundation

/// Sound files as the rest of the program uses them: 48 kHz mono, whatever the file's own rate and channels.
/// The one place that reads a WAV file from disk (virtual microphones, a bot's `--input wav:PATH`, the demo's
/// clips, the benchmarks' speech).
public enum SoundFile {
    /// Reads the 16-bit PCM WAV file at `path` as 48 kHz mono: channels are averaged, other rates resampled
    /// (speexdsp, quality 5).
    public static func readMono48k(path: String) throws(SoundFileError) -> [Int16] {
        let audio = try readWAV(path: path)
        do {
            return try mono48k(audio)
        } catch {
            throw SoundFileError(path: path, problem: .notResampled(from: audio.sampleRate, error))
        }
    }

    /// The WAV file at `path`, decoded; unreadable and not-WAV files are told apart.
    static func readWAV(path: String) throws(SoundFileError) -> WAVAudio {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SoundFileError(path: path, problem: .unreadable)
        }
        do {
            return try WAVAudio.decode([UInt8](data))
        } catch {
            throw SoundFileError(path: path, problem: .notWAV(error))
        }
    }

    /// `audio` as 48 kHz mono samples.
    public static func mono48k(_ audio: WAVAudio) throws(AudioCodecError) -> [Int16] {
        let mono = audio.mixedToMono()
        guard audio.sampleRate != AudioFormat.sampleRate else { return mono }
        return try Resampler(inputRate: audio.sampleRate, outputRate: AudioFormat.sampleRate).process(mono)
    }
}

/// A sound file that could not be used, with the file and why.
public struct SoundFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why the file could not be used.
    public enum Problem: Sendable, Equatable {
        /// It does not exist or cannot be read.
        case unreadable
        /// It is not a 16-bit PCM WAV file (the reader's error says where and why).
        case notWAV(WAVError)
        /// Its rate could not be converted to 48 kHz.
        case notResampled(from: Int, AudioCodecError)
        /// It is neither a WAV nor an Ogg Opus file.
        case unknownFormat
        /// It is an Ogg file that libopusfile cannot play; why, in words.
        case notOggOpus(String)
    }

    /// The file.
    public let path: String
    /// What is wrong with it.
    public let problem: Problem

    /// An error about the file at `path`.
    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// What is wrong, without the path: "cannot be read", "is not a 16-bit PCM WAV file (…)".
    public var problemDescription: String {
        switch problem {
        case .unreadable: return "cannot be read"
        case .notWAV(let error): return "is not a 16-bit PCM WAV file (\(error))"
        case .notResampled(let rate, let error): return "cannot be converted from \(rate) Hz (\(error))"
        case .unknownFormat: return "is neither a WAV nor an Ogg Opus file"
        case .notOggOpus(let why): return "cannot be played as Ogg Opus (\(why))"
        }
    }

    public var description: String { "\(path) \(problemDescription)" }
}

/// A sound file opened to be played into a room: a 16-bit PCM WAV or an Ogg Opus file, told apart by their first
/// bytes, read as 48 kHz mono a piece at a time (WAV resampled with speexdsp, Ogg Opus decoded by libopusfile).
/// Opening checks the whole header, so a file that cannot be played is refused before a sample is read.
///
/// One thread at a time; `read` does not allocate.
public final class SoundFileReader {
    /// What kind of file it is.
    public enum Format: String, Sendable, Equatable {
        case wav = "WAV"
        case oggOpus = "Ogg Opus"
    }

    /// The file.
    public let path: String
    /// Its kind.
    public let format: Format
    /// What to call it: the file's TITLE comment (Ogg Opus), or its name without the extension.
    public let title: String
    /// Its length in 48 kHz samples, when known.
    public let sampleCount: Int?

    private let opus: OggOpusFile?
    private let wavSamples: [Int16]
    private var wavPosition = 0
    private let resampler: Resampler?

    /// Opens the file at `path`.
    public init(path: String) throws(SoundFileError) {
        self.path = path
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw SoundFileError(path: path, problem: .unreadable)
        }
        let magic = [UInt8]((try? handle.read(upToCount: 4)) ?? Data())
        try? handle.close()
        if magic == Array("OggS".utf8) {
            let file = try OggOpusFile(path: path)
            format = .oggOpus
            opus = file
            title = file.title.flatMap { $0.isEmpty ? nil : $0 } ?? name
            sampleCount = file.sampleCount
            wavSamples = []
            resampler = nil
        } else if magic == Array("RIFF".utf8) {
            let audio = try SoundFile.readWAV(path: path)
            format = .wav
            opus = nil
            title = name
            wavSamples = audio.mixedToMono()
            if audio.sampleRate == AudioFormat.sampleRate {
                resampler = nil
            } else {
                do {
                    resampler = try Resampler(inputRate: audio.sampleRate, outputRate: AudioFormat.sampleRate)
                } catch {
                    throw SoundFileError(path: path, problem: .notResampled(from: audio.sampleRate, error))
                }
            }
            sampleCount = audio.sampleRate > 0 ? wavSamples.count * AudioFormat.sampleRate / audio.sampleRate : nil
        } else {
            throw SoundFileError(path: path, problem: .unknownFormat)
        }
    }

    /// Reads the next samples into the front of `output` and returns how many; 0 at the end.
    public func read(into output: UnsafeMutableBufferPointer<Int16>) throws(SoundFileError) -> Int {
        if let opus {
            do {
                return try opus.read(into: output)
            } catch {
                throw SoundFileError(path: path, problem: error.problem)
            }
        }
        guard wavPosition < wavSamples.count, !output.isEmpty else { return 0 }
        guard let resampler else {
            let count = min(output.count, wavSamples.count - wavPosition)
            for index in 0..<count { output[index] = wavSamples[wavPosition + index] }
            wavPosition += count
            return count
        }
        let result = wavSamples.withUnsafeBufferPointer { samples in
            Result { () throws(AudioCodecError) in
                try resampler.process(UnsafeBufferPointer(rebasing: samples[wavPosition...]), into: output)
            }
        }
        switch result {
        case .success(let (consumed, produced)):
            wavPosition += consumed
            if consumed == 0 && produced == 0 { wavPosition = wavSamples.count }
            return produced
        case .failure(let error):
            throw SoundFileError(path: path, problem: .notResampled(from: resampler.inputRate, error))
        }
    }
}
