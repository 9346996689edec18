import RoomCore
import TermUI

/// How often the open speaking-time panel asks the server again, in milliseconds.
public let statsRefreshInterval: Timestamp = 2000

/// `s` and `/stats`: asks the server for each person's speaking time and turns (RoomCore says at once why not to
/// those who may not see them, as a sentence). The screen opens its panel, which `s` closes again; line mode says the answer as a
/// table when it comes.
func showStats(_ state: inout AppState) -> [AppEffect] {
    if case .stats = state.overlay {
        state.overlay = nil
        return []
    }
    let effects = request(&state, .command(.stats))
    if !state.lineMode, effects.contains(.send(.stats)) {
        state.overlay = .stats(people: nil, askedAt: state.now)
    }
    return effects
}

/// A key while the speaking-time panel is open: `s` or Esc closes it; `?` shows the keys; nothing else is done
/// behind it.
func statsKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    switch key {
    case .char("s"), .escape: state.overlay = nil
    case .char("?"), .function(1): state.overlay = .help(scroll: 0)
    default: break
    }
    return []
}

/// While the panel is open, asks again every `statsRefreshInterval`; it closes once the person may no longer see
/// the tally (moved off the stage's running, or out of the room). Nothing is asked while the connection is down.
func refreshStats(_ state: inout AppState) -> [AppEffect] {
    guard case .stats(let people, let askedAt) = state.overlay else { return [] }
    guard let me = state.room.me, state.room.roles.can(me.role, .move), !state.isOver else {
        state.overlay = nil
        return []
    }
    guard state.room.connection == .connected, state.now - askedAt >= statsRefreshInterval else { return [] }
    state.overlay = .stats(people: people, askedAt: state.now)
    return [.send(.stats)]
}

/// The server's answer: the panel shows it while open; line mode says it as a table.
func receiveStats(_ state: inout AppState, _ people: [SpeakingStat]) -> [AppEffect] {
    if state.lineMode { return Narration.statsLines(people).map { .say($0) } }
    if case .stats(_, let askedAt) = state.overlay { state.overlay = .stats(people: people, askedAt: askedAt) }
    return []
}

extension Narration {
    /// Line mode's answer to `/stats`: a heading, then a line per person, aligned as the screen's panel is.
    static func statsLines(_ people: [SpeakingStat]) -> [String] {
        guard !people.isEmpty else { return ["No one has spoken since the room went live."] }
        return ["Speaking time since the room went live, most first:"]
            + SpeakingTable.columns(people.map(SpeakingTable.Row.init)).map { "  " + $0 }
    }
}

extension SpeakingTable.Row {
    /// A row for one person of the server's answer.
    init(_ stat: SpeakingStat) {
        self.init(name: stat.name, milliseconds: stat.milliseconds, turns: stat.turns, talking: stat.talking)
    }
}
