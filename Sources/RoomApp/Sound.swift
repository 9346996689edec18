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
    /// Open the file at this path and play it into the room; the answer comes back as `.filePlay`.
    case play(String)
    /// Stop the file playing.
    case stopPlaying
}

/// A file this person plays into the room: its title, and how far it is, in whole seconds.
public struct PlayingFile: Sendable, Equatable {
    public var title: String
    public var position: Int
    /// Nil when the file does not say.
    public var length: Int?

    public init(title: String, position: Int, length: Int?) {
        self.title = title
        self.position = position
        self.length = length
    }

    /// "“Intro” 0:12 / 0:30" for the status line and `/play`.
    public var progress: String {
        "\u{201C}\(title)\u{201D} \(Self.clock(position))" + (length.map { " / \(Self.clock($0))" } ?? "")
    }

    static func clock(_ seconds: Int) -> String {
        "\(seconds / 60):" + (seconds % 60 < 10 ? "0" : "") + "\(seconds % 60)"
    }
}

/// What the sound says about the file this person plays.
public enum FilePlayReport: Sendable, Equatable {
    /// It opened and plays.
    case started(PlayingFile)
    /// It could not be played: one sentence saying why.
    case refused(String)
    /// How far it is (about once a second).
    case progress(PlayingFile)
    /// It played to its end.
    case ended(title: String)
}

/// `/play`, `/play stop` and `/play FILE`: checked here (the role, the mute), played by the sound, and told to
/// the server only once the file has opened.
func playCommand(_ state: inout AppState, _ command: PlayCommand) -> [AppEffect] {
    switch command {
    case .status:
        let text = state.playing.map { "Playing \($0.progress)." } ?? "Nothing is playing."
        return show(&state, Notice(.info, text))
    case .stop:
        guard let playing = state.playing else { return show(&state, Notice(.refusal, "nothing is playing")) }
        state.playing = nil
        return [.sound(.stopPlaying), .send(.setPlaying(false))]
            + show(&state, Notice(.info, "Stopped \u{201C}\(playing.title)\u{201D}."))
    case .file(let path):
        guard let me = state.room.me else { return show(&state, Notice(.refusal, "you are not in the room yet")) }
        if let refusal = state.room.roles.check(.setPlaying(true), by: me, target: nil) {
            return show(&state, refusal.notice)
        }
        if me.muted {
            return show(
                &state, Notice(.refusal, "unmute first: a file plays in your own audio, which is off while muted"))
        }
        return [.sound(.play(path))]
    }
}

/// The sound's answer about the file this person plays.
func filePlayReport(_ state: inout AppState, _ report: FilePlayReport) -> [AppEffect] {
    switch report {
    case .started(let playing):
        state.playing = playing
        let length = playing.length.map { " (\(PlayingFile.clock($0)))" } ?? ""
        return [.send(.setPlaying(true))]
            + show(
                &state,
                Notice(.info, "Playing \u{201C}\(playing.title)\u{201D}\(length) into the room; /play stop ends it."))
    case .refused(let sentence):
        return show(&state, Notice(.refusal, sentence))
    case .progress(let playing):
        guard let current = state.playing, current.title == playing.title, current != playing else { return [] }
        state.playing = playing
        return []
    case .ended(let title):
        guard state.playing != nil else { return [] }
        state.playing = nil
        return [.send(.setPlaying(false))]
            + show(&state, Notice(.info, "\u{201C}\(title)\u{201D} has finished playing."))
    }
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
    // A muted person's audio, file included, reaches no one: the file stops, and the ♪ with it.
    if wanted.muted, wanted.open, let playing = state.playing {
        state.playing = nil
        effects += [.sound(.stopPlaying), .send(.setPlaying(false))]
        effects += show(&state, Notice(.info, "Muted: \u{201C}\(playing.title)\u{201D} stopped."))
    }
    if told?.open != wanted.open, told != nil || wanted.open {
        effects.append(.sound(wanted.open ? .openMicrophone : .closeMicrophone))
        // Closing the microphone stops the file too (the server has taken the ♪ down with the role).
        if !wanted.open { state.playing = nil }
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
