import AudioCore
import AudioDevices

/// What the room's sound asks of a device when it opens one.
public struct DeviceRequest: Sendable, Equatable {
    /// The period the stream moves, in milliseconds: an ALSA device is opened with it.
    public var periodMilliseconds: Int
    /// How a virtual device keeps time: on its own (`realTime`), or `driven` by the microphone that shares its
    /// thread (a speaker's loudspeaker).
    public var pacing: Pacing
}

/// How the room's sound opens its microphone and loudspeaker. By default the devices its settings name
/// (`--input`, `--output`); a program may hand its own, such as ALSA devices with options of its own or a
/// benchmark's click devices, and everything else (rings, send path, media) stays the same. The opener is
/// called on the stream's thread, and again to reopen a device that went away.
public struct RoomAudioDevices: Sendable {
    /// Opens the microphone.
    public var openInput: @Sendable (DeviceRequest) throws(AudioDeviceError) -> any AudioInput
    /// Opens the loudspeaker.
    public var openOutput: @Sendable (DeviceRequest) throws(AudioDeviceError) -> any AudioOutput

    /// Devices opened by these functions.
    public init(
        openInput: @escaping @Sendable (DeviceRequest) throws(AudioDeviceError) -> any AudioInput,
        openOutput: @escaping @Sendable (DeviceRequest) throws(AudioDeviceError) -> any AudioOutput
    ) {
        self.openInput = openInput
        self.openOutput = openOutput
    }

    /// The devices `settings` name: ALSA PCMs with the period asked for, virtual ones paced as asked.
    public init(_ settings: RoomAudioSettings) {
        let input = settings.input
        let output = settings.output
        openInput = { (request: DeviceRequest) throws(AudioDeviceError) in
            try input.openInput(
                pacing: request.pacing, alsaOptions: ALSAOptions(periodMilliseconds: request.periodMilliseconds))
        }
        openOutput = { (request: DeviceRequest) throws(AudioDeviceError) in
            try output.openOutput(
                pacing: request.pacing, alsaOptions: ALSAOptions(periodMilliseconds: request.periodMilliseconds))
        }
    }
}
