import AudioCore
import Foundation

/// Sound files as the rest of the program uses them: 48 kHz mono, whatever the file's own rate and channels.
/// The one place that reads a WAV file from disk (virtual microphones, the bot's `--play`, the demo's clips, the
/// benchmarks' speech).
public enum SoundFile {
    /// Reads the 16-bit PCM WAV file at `path` as 48 kHz mono: channels are averaged, other rates resampled
    /// (speexdsp, quality 5).
    public static func readMono48k(path: String) throws(SoundFileError) -> [Int16] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SoundFileError(path: path, problem: .unreadable)
        }
        let audio: WAVAudio
        do {
            audio = try WAVAudio.decode([UInt8](data))
        } catch {
            throw SoundFileError(path: path, problem: .notWAV(error))
        }
        do {
            return try mono48k(audio)
        } catch {
            throw SoundFileError(path: path, problem: .notResampled(from: audio.sampleRate, error))
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
        }
    }

    public var description: String { "\(path) \(problemDescription)" }
}
