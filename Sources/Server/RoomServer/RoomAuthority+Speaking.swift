import AudioCore
import RoomCore
import RoomProtocol

/// Each person's speaking time and turns since the room went live, counted from the server's own speaker
/// activity: the levels the media path reports (`SpeakerActivity`, docs/architecture.md), and nothing else. A
/// person speaks from the report that gives them a level above 0 to the one that gives them 0 (or to their
/// departure); a pause up to `hold` between two such spells belongs to the turn, as the screen's highlight holds
/// a talker (`TalkerActivity`). A speaker whose gate closes (muted, moved off the stage) stops talking at that
/// moment: the forwarder drops their audio from then on, and its report of their silence comes only once their
/// packets have been missing for its timeout. Keyed by identity, so a person who reconnects continues their
/// tally. Not saved; in a cluster it is part of the room's checkpoint (docs/protocol.md, "Speaking time").
package struct RoomSpeaking: Sendable {
    /// How long a pause may last and still belong to the turn it interrupts: the screen's hold.
    package static let hold = TalkerActivity<PeerID>.Configuration().hold

    package var tally = SpeakingTally<PeerID>(hold: RoomSpeaking.hold)
    /// Each speaker's name when last in the room.
    package var names: [PeerID: String] = [:]

    package init() {}
}

extension RoomAuthority {
    /// Takes a report of levels into the tally: a level above 0 starts (or continues) a peer's talk, 0 ends it,
    /// and so does any level of a peer whose gate is shut (a report made before the forwarder noticed). Peers not
    /// in the report are left as they are (a cluster node reports only its own speakers).
    mutating func tallySpeaking(_ levels: [PeerID: Int], now: Timestamp) {
        for id in order {
            guard let level = levels[id], let peer = peers[id] else { continue }
            if level > 0, mayPublish(id) {
                speaking.names[id] = peer.name
                speaking.tally.start(id, at: now)
            } else {
                speaking.tally.stop(id, at: now)
            }
        }
    }

    /// Ends the talk of everyone whose gate a decision shut: from now on nobody hears them.
    mutating func stopSpeaking(behind gates: [GateChange], now: Timestamp) {
        for gate in gates where !gate.open { speaking.tally.stop(gate.peer, at: now) }
    }

    /// Ends the talk of a peer who leaves (a report of their silence may never come once their media is gone).
    mutating func stopSpeaking(_ id: PeerID, now: Timestamp) {
        speaking.tally.stop(id, at: now)
    }

    /// Forgets every tally: the room is no longer live (empty or ended), and the next time it is counts afresh.
    mutating func resetSpeaking() {
        if !speaking.names.isEmpty { speaking = RoomSpeaking() }
    }

    /// Everyone who has spoken since the room went live with their tally at `now`, most speaking time first
    /// (then by identity), at most `ControlCodec.maxStatsPeople`.
    public func speakingStats(now: Timestamp) -> [SpeakingStat] {
        speaking.tally.ranked(at: now).prefix(ControlCodec.maxStatsPeople).map { id, entry in
            SpeakingStat(
                peer: id, name: peers[id]?.name ?? speaking.names[id] ?? id.rawValue,
                milliseconds: entry.milliseconds, turns: entry.turns, talking: entry.isTalking)
        }
    }
}
