import AudioCore
import AudioDevices

/// How the room's sound opens its microphone and loudspeaker, given the period (in milliseconds) the stream
/// will move. By default the devices its settings name (`--input`, `--output`); a program may hand its own, such
/// as ALSA devices with options of its own or a benchmark's click devices, and everything else (rings, send
/// path, media) stays the same. Virtual devices keep the pace of the periods they are asked for.
public struct RoomAudioDevices: Sendable {
    /// Opens the microphone (on the capture stream's thread, and again after the device is lost).
    public var openInput: @Sendable (_ periodMilliseconds: Int) throws(AudioDeviceError) -> any AudioInput
    /// Opens the loudspeaker (on the playback stream's thread, and again after the device is lost).
    public var openOutput: @Sendable (_ periodMilliseconds: Int) throws(AudioDeviceError) -> any AudioOutput

    /// Devices opened by these functions.
    public init(
        openInput: @escaping @Sendable (_ periodMilliseconds: Int) throws(AudioDeviceError) -> any AudioInput,
        openOutput: @escaping @Sendable (_ periodMilliseconds: Int) throws(AudioDeviceError) -> any AudioOutput
    ) {
        self.openInput = openInput
        self.openOutput = openOutput
    }

    /// The devices `settings` name, virtual ones paced in real time.
    public init(_ settings: RoomAudioSettings) {
        let input = settings.input
        let output = settings.output
        openInput = { (period: Int) throws(AudioDeviceError) in
            try input.openInput(alsaOptions: ALSAOptions(periodMilliseconds: period))
        }
        openOutput = { (period: Int) throws(AudioDeviceError) in
            try output.openOutput(alsaOptions: ALSAOptions(periodMilliseconds: period))
        }
    }
}
