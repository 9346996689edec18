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

/// Tells the server when the microphone of a person who may speak does not work (no capture device could be
/// opened, or it was lost) or works again, so the stage shows everyone that nobody hears them; once per change
/// and session. That it works is said only once the sound has opened it: a room that still shows the person's
/// microphone as not working (from their last session) is not told "works" before the device is tried, which
/// would say "works again" and then "does not work" for one device that never changed.
func syncMicReport(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me, state.room.connection == .connected, !state.isOver,
        state.room.roles.can(me.role, .publishAudio)
    else { return [] }
    let working = !state.microphoneMissing
    if working && !state.microphoneTried { return [] }
    guard me.micWorking != working, state.micReported != working else { return [] }
    state.micReported = working
    return [.send(.setMicWorking(working))]
}

/// Starts the microphone preview when the invitation prompt comes up and stops it when the prompt goes (answered,
/// withdrawn, expired, or the room is over), so the person sees the microphone's level before deciding.
func syncPreview(_ state: inout AppState) -> [AppEffect] {
    let wanted = state.showsInvitation
    guard wanted != state.previewing else { return [] }
    state.previewing = wanted
    if !wanted {
        state.preview = nil
        state.microphoneCheckSaid = nil
    }
    return [.sound(wanted ? .startPreview : .stopPreview)]
}

/// What the microphone preview says is wrong: why the microphone could not open, or that it runs on silence
/// (no capture device); `nil` while it works or has not answered yet.
func previewProblem(_ state: AppState) -> String? {
    if case .unavailable(let why) = state.preview { return why }
    if state.previewing, state.microphoneMissing {
        return "no microphone could be opened; others would hear silence"
    }
    return nil
}

/// The preview level from which line mode says the microphone hears the person (a level bar's first steps are
/// room noise).
let microphoneCheckLevel = 15

/// Line mode's microphone check while the invitation is up, said once per invitation: that the microphone
/// cannot open (and why), or that it hears the person once they speak. The screen draws the preview instead.
func sayMicrophoneCheck(_ state: inout AppState) -> [AppEffect] {
    guard state.lineMode, state.previewing else { return [] }
    let device = state.microphoneName.map { "Your microphone (\($0))" } ?? "Your microphone"
    // Why it cannot open was said as the device's own notice, once; this says what it means for the answer.
    if previewProblem(state) != nil {
        guard state.microphoneCheckSaid != .problem else { return [] }
        state.microphoneCheckSaid = .problem
        return show(
            &state,
            Notice(
                .error, "Microphone check: \(device.lowercasedFirst) cannot be heard; if you accept, nobody hears you.")
        )
    }
    guard state.microphoneCheckSaid == nil, case .level(let level) = state.preview, level >= microphoneCheckLevel
    else { return [] }
    state.microphoneCheckSaid = .works
    return show(&state, Notice(.info, "Microphone check: \(device.lowercasedFirst) hears you."))
}

/// What line mode's microphone check has said for the invitation that is up.
enum MicrophoneCheck: Sendable, Equatable {
    case works
    case problem
}

extension String {
    fileprivate var lowercasedFirst: String { prefix(1).lowercased() + dropFirst() }
}
