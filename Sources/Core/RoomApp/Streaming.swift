import RoomCore
import TermUI

// Streaming, as people see it and ask for it: the sentences of the `streaming` event, the join line's clause,
// `/who`'s, and `/stream` (alone it lists the server's destinations, for those told of them).

extension Narration {
    /// The sentence for a change of where the room streams: who started or stopped which destinations, or why one
    /// stopped on a fault. News for everyone, so it also goes up as a notice.
    static func streamingSentence(
        before: [String], after: StreamingState?, by: PeerID?, reason: String?, state: AppState
    ) -> Sentence? {
        let now = after?.to ?? []
        let started = now.filter { !before.contains($0) }
        let stopped = before.filter { !now.contains($0) }
        var parts: [String] = []
        if !started.isEmpty {
            parts.append("\(actorName(by, state)) started streaming this room to \(list(started)).")
        }
        if !stopped.isEmpty {
            if let reason, !reason.isEmpty {
                let why = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
                parts.append("Streaming to \(list(stopped)) stopped: \(why).")
            } else if let who = name(by, state) {
                parts.append("\(capitalized(who)) stopped streaming to \(list(stopped)).")
            } else {
                parts.append("Streaming to \(list(stopped)) stopped.")
            }
        }
        guard !parts.isEmpty else { return nil }
        return Sentence(parts.joined(separator: " "), notice: true)
    }

    /// The join line's clause for a room that streams live ("" when it does not).
    static func streamedClause(_ room: RoomState) -> String {
        guard let streaming = room.streaming else { return "" }
        return " " + streamedSentence(streaming)
    }

    /// "This room is streamed live to radio, since 10:02 UTC."
    static func streamedSentence(_ streaming: StreamingState) -> String {
        guard streaming.since > 0 else { return "This room is streamed live to \(list(streaming.to))." }
        let minutes = (streaming.since / 60_000) % (24 * 60)
        let clock = String(minutes / 60 + 100).dropFirst() + ":" + String(minutes % 60 + 100).dropFirst()
        return "This room is streamed live to \(list(streaming.to)), since \(clock) UTC."
    }

    /// `/who`'s sentence for a room that streams: where to and since when; nil when it does not.
    static func streamingWho(_ state: AppState) -> String? {
        state.room.streaming.map(streamedSentence)
    }

    /// `/stream` alone: the server's destinations and which are live.
    static func streamList(_ state: AppState) -> String {
        let live = state.room.streaming?.to ?? []
        let known = state.room.streamDestinations
        guard !known.isEmpty else {
            if !live.isEmpty { return "This room is streamed live to \(list(live))." }
            return "The room streams nowhere. The server tells hosts its streams when they join."
        }
        let each = known.map { live.contains($0) ? "\($0) (live)" : $0 }
        return "This server's streams: \(each.joined(separator: ", ")). /stream NAME starts one; /stream stop NAME "
            + "stops it."
    }

    /// "radio", "radio and hls", "a, b and c".
    static func list(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    }
}
