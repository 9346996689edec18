import RoomCore
import TermUI

/// The prompt of the line that `c` opens: what is typed there is said to everyone (a line starting with `/` is
/// a command, as everywhere).
public let chatPrompt = "say: "

/// A key while the command line is open: the editor takes it; a submitted line runs. On the command line (`/` or
/// `:`) every line is a command; on the chat line (`c`) a line is chat unless it starts with `/`.
func editCommandLine(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    guard var editor = state.commandLine else { return [] }
    let outcome = editor.handle(key)
    switch outcome {
    case .editing, .ignored:
        state.commandLine = editor
        return []
    case .cancelled:
        state.commandHistory = editor.history
        state.commandLine = nil
        return []
    case .submitted(let text):
        state.commandHistory = editor.history
        state.commandLine = nil
        let trimmed = text.trimmingCharacters()
        if trimmed.isEmpty { return [] }
        let isCommandLine = editor.prompt != chatPrompt
        return runLine(&state, isCommandLine && !trimmed.hasPrefix("/") ? "/" + trimmed : trimmed, plain: false)
    }
}

/// Runs a typed line: a `/command`, or chat. `plain` is line mode, where a question is asked in a sentence and
/// the next line answers it. Commands the client answers itself (`/who`, `/topic` alone, `/volume`, `/notify`,
/// `/retry`, `/help`) never reach the server; `/end`, a host's `/leave` and `/move me audience` ask first, on the
/// screen and in line mode alike.
func runLine(_ state: inout AppState, _ text: String, plain: Bool) -> [AppEffect] {
    let trimmed = text.trimmingCharacters()
    if plain, case .confirm(let what, _) = state.overlay {
        state.overlay = nil
        return answerInLineMode(&state, what, trimmed)
    }
    if trimmed.isEmpty { return [] }
    let parsed = Command.parse(
        trimmed, peers: state.room.peers.values, roles: state.room.roles, selfID: state.room.selfID)
    switch parsed {
    case .failure(let error):
        return show(&state, Notice(.refusal, error.description))
    case .success(.end(let reason)):
        if let me = state.room.me, !state.isOver,
            let refusal = state.room.roles.check(
                .endRoom(reason: reason), by: me, target: nil)
        {
            return show(&state, refusal.notice)
        }
        if state.room.me == nil || state.isOver { return request(&state, .command(.end(reason: reason))) }
        state.overlay = .confirm(.endRoom(reason: reason), confirmSelected: false)
        return askInLineMode(&state)
    case .success(.leave):
        return requestLeave(&state) + askInLineMode(&state)
    case .success(.move(let id, let role)) where id == state.room.selfID && role == .audience:
        return askToStepDown(&state) + askInLineMode(&state)
    case .success(.muteAll):
        return askToMuteAll(&state) + askInLineMode(&state)
    case .success(.clearHands):
        return askToClearHands(&state) + askInLineMode(&state)
    case .success(.record(let start)):
        return recordCommand(&state, start: start)
    case .success(.who):
        return show(&state, Notice(.info, Narration.who(state)))
    case .success(.stream(.list)):
        return show(&state, Notice(.info, Narration.streamList(state)))
    case .success(.stream(let command)):
        return request(&state, .command(.stream(command)))
    case .success(.showTopic):
        return show(&state, Notice(.info, Narration.topic(state.room)))
    case .success(.volume(let id, let percent)):
        return volumeCommand(&state, id, percent: percent)
    case .success(.notify(let topic, let on)):
        return notifyCommand(&state, topic, on: on)
    case .success(.retry):
        return retryNow(&state)
    case .success(.stats):
        return showStats(&state)
    case .success(.play(let command)):
        return playCommand(&state, command)
    case .success(.help):
        if plain { return [.say(Narration.plainHelp)] }
        state.overlay = .help(scroll: 0)
        return []
    case .success(let command):
        return request(&state, .command(command))
    }
}

/// `/notify [messages|hands|bell] [on|off]`: switches what rings the bell and marks the status line, or says
/// what does.
func notifyCommand(_ state: inout AppState, _ topic: NotifyTopic?, on: Bool?) -> [AppEffect] {
    if let on {
        let topics = topic.map { [$0] } ?? NotifyTopic.allCases
        for topic in topics {
            switch topic {
            case .messages: state.notify.messages = on
            case .hands: state.notify.hands = on
            case .bell: state.notify.bell = on
            }
        }
    }
    let settings = state.notify
    func word(_ on: Bool) -> String { on ? "on" : "off" }
    return show(
        &state,
        Notice(
            .info,
            "Alerts: direct messages \(word(settings.messages)), new raised hands \(word(settings.hands)), "
                + "bell \(word(settings.bell))."))
}

/// Tries the connection again now, while it is down; says why not otherwise.
func retryNow(_ state: inout AppState) -> [AppEffect] {
    guard case .reconnecting = state.room.connection, !state.sessionOver else {
        return show(&state, Notice(.info, "the connection is up; there is nothing to retry"))
    }
    return [.retryNow] + show(&state, Notice(.info, "Trying to reconnect now."))
}

extension String {
    /// The text without the white space at either end.
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
