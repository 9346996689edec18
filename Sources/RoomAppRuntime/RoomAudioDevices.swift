import AudioDevices
import AudioEngine

/// How the room's sound opens its microphone and loudspeaker. By default the devices its settings name
/// (`--input`, `--output`); a program may hand its own, such as ALSA devices with options of its own or a
/// benchmark's click devices, and everything else (rings, send pipeline, media) stays the same.
public struct RoomAudioDevices: Sendable {
    /// Opens the microphone (on the capture stream's thread, and again after the device is lost).
    public var openInput: InputOpener
    /// Opens the loudspeaker (on the playback stream's thread, and again after the device is lost).
    public var openOutput: OutputOpener

    /// Devices opened by these functions.
    public init(openInput: @escaping InputOpener, openOutput: @escaping OutputOpener) {
        self.openInput = openInput
        self.openOutput = openOutput
    }

    /// The devices `settings` name, virtual ones paced in real time.
    public init(_ settings: RoomAudioSettings) {
        let input = settings.input
        let output = settings.output
        openInput = { () throws(AudioDeviceError) in try input.openInput() }
        openOutput = { () throws(AudioDeviceError) in try output.openOutput() }
    }
}
