import RoomCore
import TermUI

/// Applies one action to the lobby and returns what its runtime should do.
///
/// Pure and synchronous, like the room's reducer: time arrives in the actions. The list changes only as the
/// directory says; the selection follows its room by name while the order changes under it.
public func reduceLobby(_ state: inout LobbyState, _ action: LobbyAction) -> [LobbyEffect] {
    var effects: [LobbyEffect] = []
    if let at = action.at { advance(&state, to: at) }
    switch action {
    case .directory(let event, _):
        effects = applyDirectory(&state, event)
    case .key(let key, _):
        effects = lobbyKey(&state, key)
    case .line(let line, _):
        effects = lobbyLine(&state, line)
    case .tick, .resize:
        break
    case .returned(let room, let problem, _):
        state.joining = nil
        if let problem {
            effects = lobbyNotice(&state, Notice(.error, problem))
        } else if state.lineMode {
            effects = [.say("Back in the lobby, from \(room).")]
        }
        if state.lineMode { effects += [.say(LobbyNarration.listing(state, renumber: &state.numbered))] }
    case .interrupted:
        state.quitting = true
        effects = [.quit]
    }
    state.revision &+= 1
    return effects
}

extension LobbyAction {
    /// When it happened, for the actions that carry the time: the reducer moves its clock there before anything
    /// else.
    fileprivate var at: Timestamp? {
        switch self {
        case .directory(_, let at), .key(_, let at), .line(_, let at), .returned(_, _, let at): at
        case .tick(let at), .interrupted(let at): at
        case .resize: nil
        }
    }
}

private func advance(_ state: inout LobbyState, to now: Timestamp) {
    state.now = max(state.now, now)
    if let expires = state.noticeExpires, state.now >= expires {
        state.notice = nil
        state.noticeExpires = nil
    }
}

/// Shows `notice` for `LobbyState.noticeLifetime` and says it.
func lobbyNotice(_ state: inout LobbyState, _ notice: Notice) -> [LobbyEffect] {
    state.notice = notice
    state.noticeExpires = state.now + LobbyState.noticeLifetime
    return [.say(notice.text)]
}

// MARK: - The directory

private func applyDirectory(_ state: inout LobbyState, _ event: LobbyEvent) -> [LobbyEffect] {
    switch event {
    case .rooms(let rooms):
        let first = !state.listed
        let wasReconnecting: Bool
        if case .reconnecting = state.connection { wasReconnecting = true } else { wasReconnecting = false }
        state.rooms = Dictionary(rooms.map { ($0.room, $0) }, uniquingKeysWith: { _, last in last })
        state.listed = true
        state.connection = .connected
        reorder(&state)
        guard state.lineMode, first || wasReconnecting else { return [] }
        let opening = first ? "Lobby of \(state.server)." : "Reconnected to the lobby."
        var effects: [LobbyEffect] = [.say(opening + " " + LobbyNarration.listing(state, renumber: &state.numbered))]
        let early = state.earlyLines
        state.earlyLines = []
        for line in early where state.joining == nil && !state.quitting { effects += lobbyLine(&state, line) }
        return effects
    case .changed(let changes):
        var effects: [LobbyEffect] = []
        for change in changes {
            let before = state.rooms[change.room]
            switch change {
            case .added(let listing, _), .updated(let listing):
                state.rooms[listing.room] = listing
            case .removed(let room, _):
                state.rooms[room] = nil
            }
            if let sentence = LobbyNarration.happening(change, before: before) {
                state.happenings.append(sentence)
                if state.happenings.count > LobbyState.happeningCapacity {
                    state.happenings.removeFirst(state.happenings.count - LobbyState.happeningCapacity)
                }
                effects.append(.say(sentence))
            }
        }
        reorder(&state)
        return effects
    case .reconnecting(let attempt):
        state.connection = .reconnecting(attempt: attempt)
        let lost = LobbyOpening.connectionLost(&state)
        return lost + (state.lineMode ? [.say("Lost the lobby's connection; reconnecting (try \(attempt)).")] : [])
    case .welcome(let rule, let mayOpen):
        state.openRooms = rule
        state.mayOpen = mayOpen
        return []
    case .opened, .openRefused:
        return LobbyOpening.answered(&state, event)
    case .error(let code, let message):
        let text =
            code == "rate_limited"
            ? "Too many refreshes at once; the server dropped one. Wait a second." : "The lobby said: \(message)"
        return lobbyNotice(&state, Notice(.error, text))
    case .ended(let why):
        state.connection = .disconnected(why)
        _ = LobbyOpening.connectionLost(&state)
        if !state.listed {
            // Nothing was shown yet: the command ends with why, on stderr.
            state.failure = why
            state.quitting = true
            return [.quit]
        }
        state.notice = Notice(.error, why + " Press q to quit.")
        state.noticeExpires = nil
        return [.say(why)]
    }
}

/// Sorts the rooms and keeps the selection on its room, or, when it ended, on whatever took its place.
private func reorder(_ state: inout LobbyState) {
    let previousIndex = state.selectedIndex
    state.order = state.rooms.values.sorted(by: RoomListing.lobbyOrder).map(\.room)
    if let selected = state.selected, state.rooms[selected] != nil { return }
    if state.order.isEmpty {
        state.selected = nil
    } else {
        state.selected = state.order[min(previousIndex ?? 0, state.order.count - 1)]
    }
}

// MARK: - Keys

private func lobbyKey(_ state: inout LobbyState, _ key: Key) -> [LobbyEffect] {
    if state.joining != nil { return [] }
    if key == .resize { return [] }
    if state.form != nil { return LobbyOpening.key(&state, key) }
    guard let action = DialogKeys.action(for: key, in: DialogKeys.lobby) else {
        return lobbyNotice(
            &state, Notice(.refusal, "The key \(describe(key)) does nothing here; press ? for the keys."))
    }
    switch action {
    case .quit:
        state.quitting = true
        return [.quit]
    case .up: move(&state, by: -1)
    case .down: move(&state, by: 1)
    case .pageUp: move(&state, by: -5)
    case .pageDown: move(&state, by: 5)
    case .first: move(&state, by: -state.order.count)
    case .last: move(&state, by: state.order.count)
    case .join:
        guard let room = state.selected else {
            return lobbyNotice(&state, Notice(.refusal, "No live room to join yet."))
        }
        return join(&state, room)
    case .refresh:
        return [.refresh]
    case .open:
        return LobbyOpening.begin(&state)
    case .help:
        return lobbyNotice(
            &state,
            Notice(
                .info,
                "Up/Down or j/k choose a room, Enter joins it, n opens a new one, r refreshes, q quits; in a room, q "
                    + "comes back."))
    case .clearNotice:
        state.notice = nil
        state.noticeExpires = nil
    }
    return []
}

private func describe(_ key: Key) -> String {
    if case .char(let character) = key { return String(character) }
    return "That key"
}

private func move(_ state: inout LobbyState, by delta: Int) {
    guard !state.order.isEmpty else { return }
    let index = state.selectedIndex ?? 0
    state.selected = state.order[min(state.order.count - 1, max(0, index + delta))]
}

private func join(_ state: inout LobbyState, _ room: String) -> [LobbyEffect] {
    state.joining = room
    state.notice = nil
    state.noticeExpires = nil
    var effects: [LobbyEffect] = []
    if state.lineMode {
        let title = state.rooms[room].map { $0.topic.isEmpty ? room : "\($0.topic) (\(room))" } ?? room
        effects.append(.say("Joining \(title)."))
    }
    return effects + [.join(room)]
}

// MARK: - Lines (--plain)

private func lobbyLine(_ state: inout LobbyState, _ raw: String) -> [LobbyEffect] {
    let text = Substring(raw.trimmingCharacters())
    if text.isEmpty || state.joining != nil { return [] }
    let lowered = text.lowercased()
    // What was typed before the rooms are known is answered once they are (quitting needs no list).
    if !state.listed, !["q", "/q", "/quit", "/leave", "/exit", "quit"].contains(lowered) {
        state.earlyLines.append(String(text))
        return []
    }
    switch lowered {
    case "q", "/q", "/quit", "/leave", "/exit", "quit":
        state.quitting = true
        return [.say("Leaving the lobby."), .quit]
    case "/rooms", "/list", "rooms", "/refresh":
        return [.say(LobbyNarration.listing(state, renumber: &state.numbered))]
    case "/help", "help", "?":
        return [.say(LobbyNarration.help)]
    default:
        break
    }
    if lowered == "/open" || lowered.hasPrefix("/open ") { return LobbyOpening.line(&state, text.dropFirst(5)) }
    var wanted = lowered.hasPrefix("/join ") ? String(text.dropFirst(6)) : String(text)
    if wanted.hasPrefix("/") {
        return [.say("Unknown command \(wanted.split(separator: " ").first ?? ""). " + LobbyNarration.help)]
    }
    while let first = wanted.first, first.isWhitespace { wanted.removeFirst() }
    if let number = Int(wanted) {
        guard number >= 1, number <= state.numbered.count else {
            return [.say("There is no room \(number) in the list; /rooms lists them again.")]
        }
        let room = state.numbered[number - 1]
        guard state.rooms[room] != nil else { return [.say("\(room) has ended since it was listed.")] }
        return join(&state, room)
    }
    if state.rooms[wanted] != nil { return join(&state, wanted) }
    if let match = state.order.first(where: { $0.lowercased() == wanted.lowercased() }) { return join(&state, match) }
    let byTopic = state.order.filter { state.rooms[$0]?.topic.lowercased().contains(wanted.lowercased()) == true }
    if byTopic.count == 1 { return join(&state, byTopic[0]) }
    if byTopic.count > 1 {
        return [
            .say(
                "\"\(wanted)\" matches \(byTopic.count) rooms: \(byTopic.joined(separator: ", ")); type one's number or name."
            )
        ]
    }
    return [.say("No live room is called \"\(wanted)\"; /rooms lists them.")]
}
