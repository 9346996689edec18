import RoomCore
import TermUI

// Recording, as people see it and ask for it: the sentences of the `recording` event, the join line's clause,
// `/who`'s, and `R` / `/record` / `/record stop` (stopping asks first, on the screen and in line mode alike).

extension Narration {
    /// The sentence for a recording that started or stopped: who did it, or why it stopped when it stopped on a
    /// fault. News for everyone, so it also goes up as a notice.
    static func recordingSentence(active: Bool, by: PeerID?, reason: String?, state: AppState) -> Sentence {
        if active { return Sentence("\(actorName(by, state)) started recording this room.", notice: true) }
        if let reason, !reason.isEmpty {
            let why = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            return Sentence("Recording stopped: \(why).", notice: true)
        }
        guard let who = name(by, state) else { return Sentence("Recording stopped.", notice: true) }
        return Sentence("\(capitalized(who)) stopped recording.", notice: true)
    }

    /// The join line's clause for a room that is being recorded ("" when it is not).
    static func recordedClause(_ room: RoomState) -> String {
        room.recording == nil ? "" : " This room is being recorded."
    }

    /// `/who`'s sentence for a room being recorded: since when, for how long, and who started it; nil when not.
    static func recordingWho(_ state: AppState) -> String? {
        guard let recording = state.room.recording else { return nil }
        let started = name(recording.by, state).map { ", started by \($0)" } ?? ""
        let since = recording.since
        guard since > 0 else { return "This room is being recorded\(started)." }
        let minutes = (since / 60_000) % (24 * 60)
        let clock = String(minutes / 60 + 100).dropFirst() + ":" + String(minutes % 60 + 100).dropFirst()
        return "This room is being recorded, since \(clock) UTC (\(lifetime(max(0, state.now - since))))\(started)."
    }
}

extension RoomState {
    /// Everyone people are shown as being in the room: the stage, the raised hands and the audience. A recorder is
    /// in none of them (the REC mark shows it), so it is not counted.
    var peopleCount: Int { stage.count + raisedHands.count + audience.count }
}

/// `R` on the screen: starts recording, or, while the room is being recorded, asks before stopping it.
func toggleRecording(_ state: inout AppState) -> [AppEffect] {
    recordCommand(&state, start: state.room.recording == nil)
}

/// `/record` (start) and `/record stop`, and `R`: starting goes at once (everyone is told at once, and it is easy
/// to stop); stopping asks first, since what the room says after it is no longer kept. A refusal reads as a sentence.
func recordCommand(_ state: inout AppState, start: Bool) -> [AppEffect] {
    let asked: ClientRequest = start ? .startRecording : .stopRecording
    guard let me = state.room.me, !state.isOver else { return request(&state, .request(asked)) }
    if let refusal = state.room.roles.check(asked, by: me, target: nil) {
        return show(&state, refusal.notice)
    }
    if start || state.room.recording == nil { return request(&state, .request(asked)) }
    state.overlay = .confirm(.stopRecording, confirmSelected: false)
    return askInLineMode(&state)
}
