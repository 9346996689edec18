import RoomCore
import TermUI

/// A key, by mode: the command line when it is open, then the invitation to speak (which wins over everything but
/// help), then the open dialog, else the room view's key table.
func handleKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    if key == .resize { return [] }
    if state.commandLine != nil { return editCommandLine(&state, key) }
    if state.showsInvitation, state.overlay == nil { return answerInvitation(&state, key) }
    switch state.overlay {
    case .help(let scroll): return helpKey(&state, key, scroll: scroll)
    case .actions(let peer, let items, let selected): return menuKey(&state, key, peer: peer, items: items, selected)
    case .confirm(let what, let confirmSelected): return confirmKey(&state, key, what, confirmSelected)
    case .stats: return statsKey(&state, key)
    case nil: return roomKey(&state, key)
    }
}

/// A key in the room view: whatever `KeyBindings.room` says it does.
private func roomKey(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    guard let command = KeyBindings.command(for: key) else {
        if case .char(let c) = key {
            // The key leads with a word of its own, so making the refusal a sentence never changes the key.
            return show(&state, Notice(.refusal, "The key \(c) does nothing here; press ? for the keys."))
        }
        return []
    }
    if state.isOver, command.actsOnRoom {
        return show(&state, Notice(.refusal, endingReason(state.room)))
    }
    return perform(&state, command, key: key)
}

private func perform(_ state: inout AppState, _ command: KeyCommand, key: Key) -> [AppEffect] {
    switch command {
    case .showHelp:
        state.overlay = .help(scroll: 0)
    case .toggleChat:
        state.chatVisible.toggle()
        if state.chatVisible && state.chatScroll == 0 { state.unreadChat = 0 }
    case .openCommandLine:
        guard case .char(let prompt) = key else { return [] }
        state.commandLine = LineEditor(prompt: String(prompt), history: state.commandHistory)
    case .openChat:
        state.commandLine = LineEditor(prompt: chatPrompt, history: state.commandHistory)
    case .react:
        state.commandLine = LineEditor(prompt: "/", text: "react ", history: state.commandHistory)
    case .scrollChat:
        scrollChat(&state, key)
    case .retryNow:
        return retryNow(&state)
    case .suspend:
        return [.suspend]
    case .leave:
        return requestLeave(&state)
    case .clearNotice:
        state.notice = nil
        state.noticeExpires = nil
    case .toggleMute:
        return toggleMute(&state)
    case .pushToTalk:
        return pushToTalk(&state)
    case .toggleHand:
        return request(&state, .command(.hand))
    case .moveSelection:
        moveSelection(&state, key)
    case .openActions:
        return openActions(&state)
    case .inviteSelected:
        return withSelection(&state) { state, peer in request(&state, .request(.invite(peer.id))) }
    case .inviteNext:
        return inviteNext(&state)
    case .withdrawSelected:
        return withSelection(&state) { state, peer in request(&state, .request(.withdrawInvite(peer.id))) }
    case .moveToAudience:
        return withSelection(&state) { state, peer in
            peer.id == state.room.selfID
                ? askToStepDown(&state) : request(&state, .command(.move(peer.id, .audience)))
        }
    case .stepUp:
        return stepUp(&state)
    case .muteSelected:
        return withSelection(&state) { state, peer in request(&state, .command(.mute(peer.id))) }
    case .muteAll:
        return askToMuteAll(&state)
    case .lowerSelectedHand:
        return withSelection(&state) { state, peer in
            request(&state, .command(peer.id == state.room.selfID ? .lowerHand : .lowerHandOf(peer.id)))
        }
    case .clearHands:
        return askToClearHands(&state)
    case .removeSelected:
        return withSelection(&state) { state, peer in askToRemove(&state, peer, reason: nil) }
    case .toggleRecording:
        return toggleRecording(&state)
    case .changeVolume:
        let up = key != .char("-")
        return withSelection(&state) { state, peer in stepVolume(&state, peer, up: up) }
    case .showStats:
        return showStats(&state)
    }
    return []
}

/// Why nothing can be asked of the room any more, in a few words.
private func endingReason(_ room: RoomState) -> String {
    switch room.ending {
    case .removed: "you were removed from this room"
    case .ended: "the room has ended"
    case nil: "you have left this room"
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

/// Leaves; those who may end the room (hosts) are asked first, since the room goes on without them. While the
/// connection is down nobody is asked: leaving then is giving up.
func requestLeave(_ state: inout AppState) -> [AppEffect] {
    // A session that is over (another terminal took over, the server closed it) has no room to leave as a host.
    guard let me = state.room.me, !state.isOver, !state.sessionOver, state.room.connection == .connected else {
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
    let hands = state.room.raisedHands
    guard !hands.isEmpty else {
        return show(&state, Notice(.info, "no raised hands to invite"))
    }
    guard let next = state.room.nextHandToInvite else {
        return show(&state, Notice(.info, "every raised hand is invited already; w on one withdraws it"))
    }
    return request(&state, .request(.invite(next.id)))
}

/// How many log lines the mouse wheel scrolls.
let wheelLines = 3

/// PgUp/PgDn (a page) and the wheel (three lines) scroll the chat and event pane, showing it if hidden; at the
/// bottom it follows the newest again and the lines counted below are read.
func scrollChat(_ state: inout AppState, _ key: Key) {
    if !state.chatVisible {
        state.chatVisible = true
        state.unreadChat = 0
    }
    let page = max(
        1,
        RoomScreen.chatRows(
            RoomScreenMapper.model(state), width: state.screenWidth,
            height: state.screenHeight, glyphs: state.glyphs) - 1)
    let limit = max(0, state.log.count - 1)
    switch key {
    case .pageUp: state.chatScroll = min(limit, state.chatScroll + page)
    case .wheelUp: state.chatScroll = min(limit, state.chatScroll + wheelLines)
    case .pageDown: state.chatScroll = max(0, state.chatScroll - page)
    case .wheelDown: state.chatScroll = max(0, state.chatScroll - wheelLines)
    default: break
    }
    if state.chatScroll == 0 {
        state.linesBelow = 0
        state.unreadChat = 0
    }
}
