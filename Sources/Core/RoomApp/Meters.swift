import AudioCore
import RoomCore

/// How long a talker stays highlighted after their level last said they talk, for people whose talking comes
/// from the server's level reports (the sound applies a hold of its own to the people it hears): a breath or the
/// gap between two words never turns the highlight off.
public let talkHold: Timestamp = 700
/// Line mode says "X started speaking." for a talk spurt only when X's previous spurt ended at least this long
/// before, so a steady talker with pauses is announced once.
public let startedSpeakingGap: Timestamp = 5000

/// Feeds a `speakers` update (the server's levels, which come at most every 250 ms and only when a level
/// changed) to the level meters, and to the talkers for the people the sound does not hear itself: a level above
/// zero from an unmuted person is talk, and it lasts until a later update says zero (plus the hold).
func updateMeters(_ state: inout AppState, _ levels: [SpeakerLevel]) -> [AppEffect] {
    let now = state.now
    var heard: Set<PeerID> = []
    var effects: [AppEffect] = []
    for entry in levels {
        guard let peer = state.room.peers[entry.peer] else { continue }
        heard.insert(entry.peer)
        if state.heardPeers.contains(entry.peer) { continue }
        var meter = state.meters[entry.peer] ?? LevelBallistics()
        // The bar stood at the talker's level until now; it falls from there.
        if let spurt = state.talking[entry.peer], spurt.level > 0 {
            meter.update(dBov: Meters.dBov(uiLevel: spurt.level), at: now)
        }
        meter.update(dBov: Meters.dBov(uiLevel: peer.level), at: now)
        state.meters[entry.peer] = meter
        if peer.level > 0 && !peer.muted {
            effects += talk(&state, entry.peer, level: peer.level)
        } else if var spurt = state.talking[entry.peer] {
            // Quiet now: the hold runs from here.
            spurt.lastHeard = now
            spurt.level = 0
            state.talking[entry.peer] = spurt
        }
    }
    // Peers left out of an update keep their level (the server sends only changes): their meters stay up, fed
    // again below, while they talk.
    for (id, var meter) in state.meters where !heard.contains(id) && !state.heardPeers.contains(id) {
        let level = state.room.peers[id]?.level ?? 0
        meter.update(dBov: Meters.dBov(uiLevel: level), at: now)
        state.meters[id] = meter
    }
    return effects
}

/// Takes what the sound hears (every packet's level, reported at once when someone starts or stops): those it
/// hears talking are highlighted from their first packet, the others stop at once (the sound held them already).
func hearTalkers(_ state: inout AppState, _ heard: [HeardPeer]) -> [AppEffect] {
    let now = state.now
    var effects: [AppEffect] = []
    for entry in heard {
        guard let peer = state.room.peers[entry.peer] else { continue }
        state.heardPeers.insert(entry.peer)
        var meter = state.meters[entry.peer] ?? LevelBallistics()
        if let spurt = state.talking[entry.peer], spurt.level > 0 {
            meter.update(dBov: Meters.dBov(uiLevel: spurt.level), at: now)
        }
        meter.update(dBov: Meters.dBov(uiLevel: entry.talking ? max(1, entry.level) : 0), at: now)
        state.meters[entry.peer] = meter
        if entry.talking && !peer.muted {
            effects += talk(&state, entry.peer, level: entry.level)
        } else {
            endSpurt(&state, entry.peer)
        }
    }
    return effects
}

/// Someone talks now: a new spurt starts (said in line mode when it follows the last by the gap), or the one
/// going on lasts.
private func talk(_ state: inout AppState, _ id: PeerID, level: Int) -> [AppEffect] {
    let now = state.now
    if var spurt = state.talking[id] {
        spurt.lastHeard = now
        spurt.level = level
        state.talking[id] = spurt
        return []
    }
    state.talking[id] = TalkSpurt(since: now, lastHeard: now, level: level)
    let previous = state.lastSpurtEnded[id]
    guard state.lineMode, id != state.room.selfID,
        previous.map({ now - $0 >= startedSpeakingGap }) ?? true,
        let sentence = Narration.startedSpeaking(id, state)
    else { return [] }
    // A spurt after the gap is news even when the last line said the same ("Bo started speaking." when Bo spoke
    // last, with nothing said since): the rule against saying a line twice in a row is not for it.
    state.lastSaid = nil
    return [.say(sentence)]
}

/// Ends `id`'s spurt, as of `at` (now unless said otherwise).
private func endSpurt(_ state: inout AppState, _ id: PeerID, at: Timestamp? = nil) {
    guard state.talking.removeValue(forKey: id) != nil else { return }
    state.lastSpurtEnded[id] = at ?? state.now
}

/// Ends the spurts whose hold ran out (for talkers the server reports), those of people who were muted or left
/// the stage, and forgets the gaps of people who left.
func endHeldSpurts(_ state: inout AppState) {
    guard !state.talking.isEmpty else { return }
    let now = state.now
    for (id, spurt) in state.talking {
        let peer = state.room.peers[id]
        let onStage = peer.map { state.room.roles.isOnStage($0.role) && !$0.muted } ?? false
        let quiet = (peer?.level ?? 0) == 0 && !state.heardPeers.contains(id)
        if !onStage {
            endSpurt(&state, id)
        } else if quiet && now - spurt.lastHeard >= talkHold {
            // It ended when the hold ran out, however late this look comes (line mode looks only as something
            // happens, which may be the next spurt's start).
            endSpurt(&state, id, at: spurt.lastHeard + talkHold)
        }
    }
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
