import RoomCore

/// What the reducer asks of the client's sound. The runtime hands each command, in order, to whatever plays the
/// room and sends the microphone; the reducer never touches a device.
public enum SoundCommand: Sendable, Equatable {
    /// Open the microphone: the person's role may publish now.
    case openMicrophone
    /// Close the microphone: the person's role may not publish any more (an audience member's is never open).
    case closeMicrophone
    /// Send silence (true) or the voice (false) from now on, as the server says the person is muted or not.
    case setMuted(Bool)
    /// Play `peer` at this volume (0–200 %) from now on and keep it for the next session.
    case setVolume(PeerID, percent: Int)
    /// Show the microphone's live level (opening it for the preview only, sending nothing), or why it cannot
    /// open, as `.preview` actions: while the invitation to speak is up.
    case startPreview
    /// End the preview; the microphone closes unless it is open for speaking.
    case stopPreview
}

/// What the microphone was last told: whether it is open and whether it is muted.
public struct MicrophoneState: Sendable, Equatable {
    public var open: Bool
    public var muted: Bool

    public init(open: Bool, muted: Bool) {
        self.open = open
        self.muted = muted
    }
}

/// The microphone the room asks for now: open while the person's role may publish, muted as the server says.
/// `nil` before the person is in the room.
func wantedMicrophone(_ state: AppState) -> MicrophoneState? {
    guard let me = state.room.me else { return nil }
    return MicrophoneState(open: state.room.roles.can(me.role, .publishAudio), muted: me.muted)
}

/// The commands that bring the sound to what the room now asks for, after an event from the server (the only
/// thing that changes the person's role or mute): the mute first, so a microphone opens already muted or not.
func syncMicrophone(_ state: inout AppState) -> [AppEffect] {
    guard let wanted = wantedMicrophone(state), wanted != state.microphone else { return [] }
    let told = state.microphone
    state.microphone = wanted
    var effects: [AppEffect] = []
    if told?.muted != wanted.muted { effects.append(.sound(.setMuted(wanted.muted))) }
    if told?.open != wanted.open, told != nil || wanted.open {
        effects.append(.sound(wanted.open ? .openMicrophone : .closeMicrophone))
    }
    return effects
}

/// Starts the microphone preview when the invitation prompt comes up and stops it when the prompt goes (answered,
/// withdrawn, expired, or the room is over), so the person sees the microphone's level before deciding.
func syncPreview(_ state: inout AppState) -> [AppEffect] {
    let wanted = state.showsInvitation
    guard wanted != state.previewing else { return [] }
    state.previewing = wanted
    if !wanted { state.preview = nil }
    return [.sound(wanted ? .startPreview : .stopPreview)]
}
