/// How a speaker's microphone opens when not muted.
public enum TalkMode: String, Sendable, Equatable, CaseIterable {
    /// Always open.
    case open
    /// Open for a short hold after each press of the talk key (terminals report no key release).
    case pushToTalk = "push-to-talk"
    /// Open while the voice is louder than a threshold, and for a hangover after it drops.
    case voiceActivated = "voice-activated"
}

/// Whether the microphone is open, from mute, the talk mode, key presses and captured levels. A pure state
/// machine: time comes in as milliseconds on any monotonic clock.
public struct TalkControl: Sendable, Equatable {
    /// How the microphone opens when not muted.
    public var mode: TalkMode
    /// When true the microphone is closed whatever the mode says.
    public var muted: Bool
    /// How long each talk-key press keeps the microphone open, in milliseconds.
    public var pushToTalkHold: Int64
    /// In voice-activated mode, frames at or louder than this many -dBov count as voice.
    public var voiceThreshold: UInt8
    /// In voice-activated mode, how long the microphone stays open after the last voiced frame, in milliseconds.
    public var voiceHangover: Int64

    private var pushToTalkUntil: Int64 = .min
    private var voiceUntil: Int64 = .min

    /// A control in `mode`, muted or not, with a 600 ms push-to-talk hold, a 40 dBov voice threshold and a 400 ms
    /// hangover by default.
    public init(
        mode: TalkMode = .open, muted: Bool = false, pushToTalkHold: Int64 = 600, voiceThreshold: UInt8 = 40,
        voiceHangover: Int64 = 400
    ) {
        self.mode = mode
        self.muted = muted
        self.pushToTalkHold = max(0, pushToTalkHold)
        self.voiceThreshold = voiceThreshold
        self.voiceHangover = max(0, voiceHangover)
    }

    /// The talk key was pressed at `time`: latch the microphone open until the hold after this press.
    public mutating func talkKeyPressed(at time: Int64) {
        pushToTalkUntil = max(pushToTalkUntil, time.addingSaturating(pushToTalkHold))
    }

    /// A captured frame measured `dBov` at `time`; in voice-activated mode this opens or extends the hangover.
    public mutating func observe(dBov: UInt8, at time: Int64) {
        if dBov <= voiceThreshold {
            voiceUntil = max(voiceUntil, time.addingSaturating(voiceHangover))
        }
    }

    /// Whether captured audio should be sent at `time`.
    public func isOpen(at time: Int64) -> Bool {
        guard !muted else { return false }
        switch mode {
        case .open: return true
        case .pushToTalk: return time < pushToTalkUntil
        case .voiceActivated: return time < voiceUntil
        }
    }
}
