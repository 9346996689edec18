import RoomCore
import TermUI

/// A key while the invitation to speak is up: accept, decline, switch between the two, or leave; help may be
/// opened over it. Anything else says to answer first.
func answerInvitation(_ state: inout AppState, _ key: Key) -> [AppEffect] {
    switch DialogKeys.action(for: key, in: DialogKeys.invitation) {
    case .accept:
        state.overlay = nil
        return request(&state, .request(.acceptInvite))
    case .decline:
        state.overlay = nil
        return request(&state, .request(.declineInvite))
    case .toggle:
        state.invitationAcceptSelected.toggle()
    case .choose:
        state.overlay = nil
        return request(&state, .request(state.invitationAcceptSelected ? .acceptInvite : .declineInvite))
    case .leave:
        return requestLeave(&state)
    case .help:
        state.overlay = isHelp(state.overlay) ? nil : .help(scroll: 0)
    case nil:
        if key == .ctrl("z") { return [.suspend] }
        return show(&state, Notice(.info, "answer the invitation first: a accepts, d declines"))
    }
    return []
}
