import RoomCore
import TermUI

/// A key while the invitation to speak is up: accept, decline, switch between the two, or leave; help may be
/// opened over it. Anything else says to answer first.
func answerInvitation(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    switch key {
    case .char("a"), .char("y"):
        state.overlay = nil
        return request(&state, .request(.acceptInvite))
    case .char("d"), .char("n"), .escape:
        state.overlay = nil
        return request(&state, .request(.declineInvite))
    case .left, .right, .char("h"), .char("l"), .tab, .backTab:
        state.invitationAcceptSelected.toggle()
    case .enter:
        state.overlay = nil
        return request(&state, .request(state.invitationAcceptSelected ? .acceptInvite : .declineInvite))
    case .ctrl("c"), .char("q"):
        return requestLeave(&state)
    case .char("?"):
        state.overlay = isHelp(state.overlay) ? nil : .help(scroll: 0)
    default:
        return show(&state, Notice(.info, "answer the invitation first: a accepts, d declines"))
    }
    return []
}
