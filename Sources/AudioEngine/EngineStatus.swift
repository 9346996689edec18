import AudioDevices

/// Something about the sound devices that a person should know, in plain words (`message`). Reported from a
/// control thread that polls the device streams (`RoomAudio`'s), never from an audio thread.
public enum EngineStatus: Sendable, Equatable {
    /// The device ran out of audio (playback) or overflowed (capture) `count` more times: sound had gaps.
    case xruns(DeviceDirection, device: String, count: Int)

    /// One sentence for the status line.
    public var message: String {
        switch self {
        case .xruns(let direction, let device, let count):
            let what = direction == .capture ? "Microphone" : "Speaker"
            let times = count == 1 ? "once" : "\(count) times"
            let effect = direction == .capture ? "some of your voice was lost" : "what you hear had gaps"
            return "\(what) “\(device)” could not keep up \(times) (\(effect)); the machine may be too busy."
        }
    }
}
