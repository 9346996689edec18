/// What a microphone preview shows: the live level of the microphone that speaking would use, or why it cannot
/// be used. The sound (ClientAudio's `RoomAudio`) reports it and the room screen (RoomApp) shows it.
public enum MicrophonePreview: Sendable, Equatable {
    /// The microphone is open; its level now (0–100).
    case level(Int)
    /// It could not be opened; one sentence saying why and what to do.
    case unavailable(String)
}
