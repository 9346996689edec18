import RoomCore
import TermUI

/// Applies a server event: RoomCore changes the room, then the screen adds what it keeps beside it (the log,
/// the unread count, the meters, the standing notice of a room that is over) and the sentence line mode says.
func applyServer(_ state: inout AppState, _ event: ServerEvent, seq: UInt64) -> [AppEffect] {
    let before = EventContext(event, in: state)
    var effects = request(&state, .server(event, seq: seq))
    let applied = state.room.ignoredEvents.total == before.ignored
    guard applied else { return effects }
    switch event {
    case .speakers, .chat, .error, .invitedToSpeak, .inviteDeclined, .askedToMute, .reconnecting, .reconnected: break
    default: state.sectionsVersion &+= 1
    }
    switch event {
    case .speakers(let levels):
        return effects + updateMeters(&state, levels)
    case .chat(let message):
        if !state.chatVisible && message.from != state.room.selfID { state.unreadChat += 1 }
        state.log.append(.message(from: message.fromName, text: message.text, privately: message.to != .everyone))
    case .error(let code, let message):
        // RoomCore already put the server's words up; say them plainly with what to do next.
        effects = show(&state, Notice(.error, Narration.explainError(code: code, message: message)))
        return effects
    case .invitedToSpeak:
        state.invitationAcceptSelected = true
        if case .help = state.overlay { state.overlay = nil }
    case .inviteLink:
        // The link is too long for the notice row: it goes in the event pane, which opens to show it.
        if !state.lineMode {
            state.chatVisible = true
            effects += show(&state, Notice(.info, "Your invite link is in the event pane; Tab hides it."))
        }
    case .removed, .roomEnded, .peerLeft:
        if state.isOver {
            state.overlay = nil
            state.commandLine = nil
            // The sentence below says it; the notice stays on screen with the way out.
            state.notice = Notice(.error, Narration.endingNotice(state.room) + " Press q to close.")
            state.noticeExpires = nil
        }
    default:
        break
    }
    if let sentence = Narration.sentence(for: event, context: before, state: state) {
        if case .chat = event {
            effects.append(.say(sentence.text))
        } else {
            if sentence.logged { state.log.append(.event(sentence.text)) }
            effects.append(.say(sentence.text))
        }
    }
    return effects
}

/// What an event needs from the state before it is applied (names of people who are about to leave).
struct EventContext {
    var ignored: Int
    var subjectName: String?
    var subjectRole: RoleName?
    var hadSnapshot: Bool

    init(_ event: ServerEvent, in state: AppState) {
        ignored = state.room.ignoredEvents.total
        hadSnapshot = state.room.hasJoined
        let subject: PeerID?
        switch event {
        case .peerLeft(let id), .removed(let id, _, _), .roleChanged(let id, _, _): subject = id
        default: subject = nil
        }
        if let subject, let peer = state.room.peers[subject] {
            subjectName = peer.name
            subjectRole = peer.role
        }
    }
}
