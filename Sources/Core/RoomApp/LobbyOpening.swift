import Platform
import RoomCore
import TermUI

/// Opening a room from the lobby: `n` (or `/open NAME TOPIC` in line mode) asks for a name and a topic, the server
/// checks and opens it, and the lobby enters it with the host's link it was given (docs/ui.md, "The lobby").
enum LobbyOpening {
    /// The rule for a room's name, as a person reads it (the server says the same when it refuses one).
    static let nameRule =
        "A room's name is 1 to 64 letters, digits, dashes (-), underscores (_) or dots (.), with no spaces."

    /// Why this lobby may not open a room, in words that say who may and what to do; nil when it may.
    static func refusal(_ state: LobbyState) -> String? {
        if state.mayOpen {
            return state.connection == .connected
                ? nil : "The lobby is not connected; wait until it is, then try again."
        }
        switch state.openRooms {
        case .hosts?:
            return "Only people with a host's lobby link open rooms here; ask a host for one."
        case .anyone?:
            return "Your lobby link does not open rooms here; ask the host for a new one."
        case .nobody?, nil:
            return "Rooms are not opened from this lobby; ask the operator for a host's link."
        }
    }

    /// `n`: the dialog opens, or a notice says why it cannot.
    static func begin(_ state: inout LobbyState) -> [LobbyEffect] {
        if let why = refusal(state) { return lobbyNotice(&state, Notice(.refusal, why)) }
        state.form = OpenRoomForm()
        state.notice = nil
        state.noticeExpires = nil
        return []
    }

    /// A key while the dialog is open: typing, Tab between the fields, Enter to go on or open, Esc to cancel.
    static func key(_ state: inout LobbyState, _ key: Key) -> [LobbyEffect] {
        guard var form = state.form else { return [] }
        switch key {
        case .escape, .ctrl("c"):
            // An answer that comes after this is not acted on.
            state.form = nil
            return []
        case .tab, .backTab, .up, .down:
            form.onTopic.toggle()
        case .enter:
            if form.sent != nil { return [] }
            let name = form.name.text.trimmingCharacters()
            guard PlainName.isValid(name) else {
                form.problem = name.isEmpty ? "Type the room's name first." : nameRule
                form.onTopic = false
                state.form = form
                return []
            }
            guard form.onTopic else {
                form.problem = nil
                form.onTopic = true
                state.form = form
                return []
            }
            state.form = form
            return send(&state, name: name, topic: form.topic.text)
        default:
            if form.sent != nil { return [] }
            // Backspace on an empty field closes nothing here: the dialog closes with Esc.
            if form.onTopic { _ = form.topic.handle(key) } else { _ = form.name.handle(key) }
            form.problem = nil
        }
        state.form = form
        return []
    }

    /// `/open NAME TOPIC...` in line mode.
    static func line(_ state: inout LobbyState, _ arguments: Substring) -> [LobbyEffect] {
        if let why = refusal(state) { return [.say(why)] }
        let words = arguments.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard let first = words.first else {
            return [.say("Say the new room's name and topic: /open NAME TOPIC, e.g. /open jazz Late night jazz.")]
        }
        let name = String(first)
        guard PlainName.isValid(name) else { return [.say(nameRule)] }
        state.form = OpenRoomForm()
        return [.say("Asking the server to open \(name).")]
            + send(&state, name: name, topic: words.count > 1 ? String(words[1]) : "")
    }

    private static func send(_ state: inout LobbyState, name: String, topic: String) -> [LobbyEffect] {
        state.openRequests += 1
        let id = "open-\(state.openRequests)"
        state.form?.sent = id
        state.form?.problem = nil
        return [.openRoom(name: name, topic: topic.trimmingCharacters(), id: id)]
    }

    /// The server's answer to the request the lobby is waiting for; answers to anything else are not acted on.
    static func answered(_ state: inout LobbyState, _ event: LobbyEvent) -> [LobbyEffect] {
        switch event {
        case .opened(let room, let invite, let id):
            guard state.form?.sent == id, state.joining == nil, !state.quitting else { return [] }
            state.form = nil
            state.joining = room
            state.notice = nil
            state.noticeExpires = nil
            return (state.lineMode ? [.say("Opened \(room); entering it as its host.")] : [])
                + [.enter(room: room, invite: invite)]
        case .openRefused(let why, let id):
            guard state.form?.sent == id else { return [] }
            return notOpened(&state, why)
        default:
            return []
        }
    }

    /// The connection dropped while a request waited: its answer will not come.
    static func connectionLost(_ state: inout LobbyState) -> [LobbyEffect] {
        guard state.form?.sent != nil else { return [] }
        return notOpened(
            &state,
            "The lobby's connection dropped before the server answered; once it is back, try again (if the room "
                + "was opened, you are given its link again).")
    }

    /// The request sent did not open a room: line mode says why and is done with it; the dialog stays open with
    /// why under its fields, for another try.
    private static func notOpened(_ state: inout LobbyState, _ why: String) -> [LobbyEffect] {
        if state.lineMode {
            state.form = nil
            return [.say(why)]
        }
        state.form?.sent = nil
        state.form?.problem = why
        return []
    }
}
