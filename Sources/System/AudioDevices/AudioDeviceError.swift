internal import CALSA
import Glibc

/// What went wrong with an audio device, with the device and the system's error code.
///
/// Errors carry codes rather than text so that the audio threads can create them without allocating; the
/// text is made when someone reads `description`.
public enum AudioDeviceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The device does not exist (no such PCM, no sound card).
    case notFound(device: String, code: Int32)
    /// The device exists but could not be opened (busy, no permission).
    case openFailed(device: String, code: Int32)
    /// The device refused a setting that Clubroom needs.
    case unsupported(device: String, setting: String, code: Int32)
    /// The ALSA configuration text given for the device did not parse.
    case invalidConfiguration(device: String, code: Int32)
    /// The device went away while in use (unplugged, sound server stopped).
    case disconnected(device: String, code: Int32)
    /// Reading or writing failed for another reason.
    case ioFailed(device: String, code: Int32)
    /// A file behind a virtual device could not be read or written.
    case file(path: String, problem: String)
    /// alsa-lib could not list the devices it knows.
    case listingFailed(code: Int32)

    /// The device or file the error is about.
    public var device: String {
        switch self {
        case .notFound(let device, _), .openFailed(let device, _), .unsupported(let device, _, _),
            .invalidConfiguration(let device, _), .disconnected(let device, _), .ioFailed(let device, _):
            return device
        case .file(let path, _):
            return path
        case .listingFailed:
            return "pcm"
        }
    }

    public var description: String {
        switch self {
        case .notFound(let device, let code):
            return "audio device “\(device)” was not found (\(Self.text(code)))"
        case .openFailed(let device, let code):
            return "audio device “\(device)” could not be opened (\(Self.text(code)))"
        case .unsupported(let device, let setting, let code):
            return "audio device “\(device)” does not support \(setting) (\(Self.text(code)))"
        case .invalidConfiguration(let device, let code):
            return "the ALSA configuration for “\(device)” is invalid (\(Self.text(code)))"
        case .disconnected(let device, let code):
            return "audio device “\(device)” went away (\(Self.text(code)))"
        case .ioFailed(let device, let code):
            return "audio device “\(device)” failed (\(Self.text(code)))"
        case .file(let path, let problem):
            return "\(path): \(problem)"
        case .listingFailed(let code):
            return "could not list audio devices (\(Self.text(code)))"
        }
    }

    /// The problem in a few words, naming the device but not the system's error text: for one-line notices
    /// on a narrow screen, where the full `description` goes to the log.
    public var briefDescription: String {
        switch self {
        case .notFound(let device, _): return "“\(device)” not found"
        case .openFailed(let device, _): return "“\(device)” could not be opened"
        case .unsupported(let device, let setting, _): return "“\(device)” cannot do \(setting)"
        case .invalidConfiguration(let device, _): return "“\(device)” is misconfigured"
        case .disconnected(let device, _): return "“\(device)” went away"
        case .ioFailed(let device, _): return "“\(device)” failed"
        case .file(let path, _): return "“\(path)” unusable"
        case .listingFailed: return "devices could not be listed"
        }
    }

    /// alsa-lib's text for a negative error code (which covers errno values too).
    static func text(_ code: Int32) -> String {
        snd_strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// Classifies an error from reading or writing: codes that mean the device is gone become `disconnected`.
    static func transfer(device: String, code: Int32) -> AudioDeviceError {
        switch -code {
        case ENODEV, EBADFD, ENXIO, ESHUTDOWN, EIO, ENOENT, EPIPE:
            return .disconnected(device: device, code: code)
        default:
            return .ioFailed(device: device, code: code)
        }
    }
}
