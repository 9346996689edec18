import AudioCore
import RoomCore

/// Feeds a `speakers` update to the level meters and picks the current speaker: the loudest unmuted peer of the
/// update. Line mode says who it is when that changes.
func updateMeters(_ state: inout AppState, _ levels: [SpeakerLevel]) -> [AppEffect] {
    let now = state.now
    var loudest: (PeerID, Int)?
    var heard: Set<PeerID> = []
    for entry in levels {
        guard let peer = state.room.peers[entry.peer] else { continue }
        let level = peer.level
        heard.insert(entry.peer)
        var meter = state.meters[entry.peer] ?? LevelBallistics()
        meter.update(dBov: Meters.dBov(uiLevel: level), at: now)
        state.meters[entry.peer] = meter
        if level > 0, !peer.muted, level > (loudest?.1 ?? 0) { loudest = (entry.peer, level) }
    }
    // Peers left out of an update are silent now: their meters fall from where they are.
    for (id, var meter) in state.meters where !heard.contains(id) {
        meter.update(dBov: AudioLevel.silence, at: now)
        state.meters[id] = meter
    }
    let before = state.activeSpeaker
    state.activeSpeaker = loudest?.0
    guard state.lineMode, let speaker = state.activeSpeaker, speaker != before,
        let sentence = Narration.speaking(speaker, state)
    else { return [] }
    return [.say(sentence)]
}

/// Conversions between the UI's 0–100 levels and the -dBov the meters work in.
public enum Meters {
    /// The -dBov value a UI level stands for (the UI maps the top 60 dB onto 0–100).
    public static func dBov(uiLevel: Int) -> UInt8 {
        guard uiLevel > 0 else { return AudioLevel.silence }
        let decibels = Double(AudioLevel.uiRange) * Double(100 - min(100, uiLevel)) / 100
        return UInt8(max(0, min(Double(AudioLevel.silence), decibels.rounded())))
    }

    /// A level rounded to the steps a five-cell bar can show, so a falling meter changes the screen only when a
    /// cell goes out.
    public static func quantized(_ level: Int) -> Int {
        (min(100, max(0, level)) + 12) / 25 * 25
    }
}
