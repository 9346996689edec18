import RoomCore
import TermUI

/// A key, by mode: the command line when it is open, then the invitation to speak (which wins over everything but
/// help), then the open dialog, else the room view.
func handleKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    if key == .resize { return [] }
    if state.commandLine != nil { return editCommandLine(&state, key) }
    if state.showsInvitation, state.overlay == nil || isHelp(state.overlay) {
        return answerInvitation(&state, key)
    }
    switch state.overlay {
    case .help(let scroll): return helpKey(&state, key, scroll: scroll)
    case .actions(let peer, let items, let selected): return menuKey(&state, key, peer: peer, items: items, selected)
    case .confirm(let what, let confirmSelected): return confirmKey(&state, key, what, confirmSelected)
    case nil: return roomKey(&state, key)
    }
}

/// A key in the room view.
private func roomKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    if state.isOver, actsOnRoom(key) {
        return show(&state, Notice(.refusal, endingReason(state.room)))
    }
    switch key {
    case .char("?"), .function(1):
        state.overlay = .help(scroll: 0)
    case .tab:
        state.chatVisible.toggle()
        if state.chatVisible { state.unreadChat = 0 }
    case .char("/"), .char(":"):
        guard case .char(let prompt) = key else { return [] }
        state.commandLine = LineEditor(prompt: prompt, history: state.commandHistory)
    case .char("q"), .ctrl("c"), .ctrl("d"):
        return requestLeave(&state)
    case .escape:
        state.notice = nil
        state.noticeExpires = nil
    case .char("m"):
        return toggleMute(&state)
    case .char(" "):
        return pushToTalk(&state)
    case .char("r"):
        return request(&state, .command(.hand))
    case .up, .down, .left, .right, .char("h"), .char("j"), .char("k"), .char("l"), .home, .end, .pageUp,
        .pageDown:
        moveSelection(&state, key)
    case .enter:
        return openActions(&state)
    case .char("i"):
        return withSelection(&state) { state, peer in request(&state, .request(.invite(peer.id))) }
    case .char("n"):
        return inviteNext(&state)
    case .char("a"):
        return withSelection(&state) { state, peer in request(&state, .command(.move(peer.id, .audience))) }
    case .char("M"):
        return withSelection(&state) { state, peer in request(&state, .command(.mute(peer.id))) }
    case .char("x"):
        return withSelection(&state) { state, peer in askToRemove(&state, peer, reason: nil) }
    case .char("+"), .char("="):
        return withSelection(&state) { state, peer in stepVolume(&state, peer, up: true) }
    case .char("-"):
        return withSelection(&state) { state, peer in stepVolume(&state, peer, up: false) }
    case .char(let c):
        return show(&state, Notice(.refusal, "\(c) does nothing here; press ? for the keys"))
    default:
        break
    }
    return []
}

/// Whether a key in the room view asks something of the room (or opens a way to), rather than only moving
/// around the screen, showing help or leaving.
private func actsOnRoom(_ key: Key) -> Bool {
    switch key {
    case .char("/"), .char(":"), .char("m"), .char(" "), .char("r"), .enter, .char("i"), .char("n"), .char("a"),
        .char("M"), .char("x"):
        return true
    default:
        return false
    }
}

/// Why nothing can be asked of the room any more, in a few words.
private func endingReason(_ room: RoomState) -> String {
    switch room.ending {
    case .removed: "you were removed from this room"
    case .ended: "the room has ended"
    case .left, nil: "you have left this room"
    }
}

/// Runs `body` on the selected peer, or says to select someone first.
func withSelection(
    _ state: inout AppState, _ body: (inout AppState, Peer) -> [AppEffect]
) -> [AppEffect] {
    guard let id = state.selection, let peer = state.room.peers[id] else {
        return show(&state, Notice(.refusal, "select someone first with the arrow keys"))
    }
    return body(&state, peer)
}

/// Leaves; those who may end the room (hosts) are asked first, since the room goes on without them.
func requestLeave(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me, !state.isOver else {
        return request(&state, .request(.leave))
    }
    if me.role == .host || state.room.roles.can(me.role, .endRoom) {
        state.overlay = .confirm(.leave, confirmSelected: false)
        return []
    }
    return request(&state, .request(.leave))
}

private func toggleMute(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .request(.setMute(true))) }
    state.lastSpaceAt = nil
    return request(&state, .request(.setMute(!me.muted)))
}

/// How close together two space presses must be to count as one held key (the terminal repeats a held key;
/// it never says when it is let go).
public let pushToTalkRepeatWindow: Timestamp = 600

private func pushToTalk(_ state: inout AppState) -> [AppEffect] {
    if let last = state.lastSpaceAt, state.now - last < pushToTalkRepeatWindow {
        state.lastSpaceAt = state.now
        return []
    }
    guard let me = state.room.me else { return request(&state, .request(.setMute(false))) }
    if !state.room.roles.can(me.role, .publishAudio) {
        return show(&state, state.room.roles.refusal(lacking: .publishAudio).notice)
    }
    state.lastSpaceAt = state.now
    return request(&state, .request(.setMute(!me.muted)))
}

private func inviteNext(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .command(.hand)) }
    guard state.room.roles.can(me.role, .invite) else {
        return show(&state, state.room.roles.refusal(lacking: .invite).notice)
    }
    guard let head = state.room.raisedHands.first else {
        return show(&state, Notice(.info, "no raised hands to invite"))
    }
    return request(&state, .request(.invite(head.id)))
}
