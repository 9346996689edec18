import AudioCodec
import AudioDevices

/// Something about the engine's devices that a person should know, in plain words (`message`). Delivered on
/// the engine's control thread, never on an audio thread.
public enum EngineStatus: Sendable, Equatable {
    /// A device could not be opened, went away, is being retried or came back.
    case device(DeviceStatus)
    /// The device ran out of audio (playback) or overflowed (capture) `count` more times: sound had gaps.
    case xruns(DeviceDirection, device: String, count: Int)

    /// One sentence for the status line.
    public var message: String {
        switch self {
        case .device(let status):
            return status.message
        case .xruns(let direction, let device, let count):
            let what = direction == .capture ? "Microphone" : "Speaker"
            let times = count == 1 ? "once" : "\(count) times"
            let effect = direction == .capture ? "some of your voice was lost" : "what you hear had gaps"
            return "\(what) “\(device)” could not keep up \(times) (\(effect)); the machine may be too busy."
        }
    }
}

/// Why the engine could not start.
public enum AudioEngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The codec or voice processing could not be set up.
    case codec(AudioCodecError)
    /// A virtual device (a WAV file to play, a file to record into) could not be opened.
    case device(AudioDeviceError)
    /// The recording of what is heard could not be created.
    case recording(AudioDeviceError)

    public var description: String {
        switch self {
        case .codec(let error): return "audio codec: \(error)"
        case .device(let error): return "\(error)"
        case .recording(let error): return "cannot record what is heard: \(error)"
        }
    }
}
