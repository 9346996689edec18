import RoomCore
import TermUI

/// A key while the command line is open: the editor takes it; a submitted line runs.
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
        if text.allSatisfy(\.isWhitespace) { return [] }
        let words = text.split(separator: " ", maxSplits: 1)
        let first = words.first.map { $0.lowercased() } ?? ""
        // A line that starts with a command's name is that command; anything else is chat.
        let isCommand = text.hasPrefix("/") || commandNames.contains(first)
        return runLine(&state, isCommand ? (text.hasPrefix("/") ? text : "/" + text) : text, plain: false)
    }
}

/// Commands the command line knows: RoomCore's grammar plus the client's own.
let commandNames: Set<String> = Set(Command.usages.map(\.name)).union(clientCommands.map(\.name))

/// Commands handled by the client itself, not by RoomCore's grammar.
public let clientCommands: [(name: String, usage: String, summary: String)] = [
    ("accept", "/accept", "accept an invitation to speak"),
    ("decline", "/decline", "decline an invitation to speak"),
    ("mute", "/mute", "mute yourself (with a NAME: mute someone)"),
    ("unmute", "/unmute", "unmute yourself"),
    ("leave", "/leave", "leave the room"),
    ("who", "/who", "say who is on stage and how many listen"),
]

/// Runs a typed line: a `/command`, or chat. `plain` is line mode, where there are no dialogs to confirm in.
func runLine(_ state: inout AppState, _ text: String, plain: Bool) -> [AppEffect] {
    let trimmed = text.trimmingCharacters()
    if trimmed.isEmpty { return [] }
    if trimmed.hasPrefix("/") && !trimmed.hasPrefix("//") {
        let body = trimmed.dropFirst()
        let parts = body.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        let name = parts.first.map { $0.lowercased() } ?? ""
        let hasArgument = parts.count > 1
        switch (name, hasArgument) {
        case ("accept", false): return request(&state, .request(.acceptInvite))
        case ("decline", false): return request(&state, .request(.declineInvite))
        case ("mute", false): return request(&state, .request(.setMute(true)))
        case ("unmute", false): return request(&state, .request(.setMute(false)))
        case ("leave", false), ("quit", false):
            return plain ? request(&state, .request(.leave)) : requestLeave(&state)
        case ("who", false): return show(&state, Notice(.info, Narration.who(state)))
        default: break
        }
    }
    switch Command.parse(trimmed, peers: state.room.peers.values, roles: state.room.roles) {
    case .failure(let error):
        return show(&state, Notice(.refusal, error.description))
    case .success(.end(let reason)) where !plain:
        if let me = state.room.me, !state.isOver,
            let refusal = state.room.roles.check(
                .endRoom(reason: reason), by: me, target: nil)
        {
            return show(&state, refusal.notice)
        }
        if state.room.me == nil || state.isOver { return request(&state, .command(.end(reason: reason))) }
        state.overlay = .confirm(.endRoom(reason: reason), confirmSelected: false)
        return []
    case .success(.volume(let id, let percent)):
        return volumeCommand(&state, id, percent: percent)
    case .success(.help):
        if plain { return [.say(Narration.plainHelp)] }
        state.overlay = .help(scroll: 0)
        return []
    case .success(let command):
        return request(&state, .command(command))
    }
}

extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
