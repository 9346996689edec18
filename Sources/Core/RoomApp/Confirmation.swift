import RoomCore
import TermUI

/// Something that asks first.
public enum Confirmable: Sendable, Equatable {
    /// Remove a peer from the room.
    case remove(PeerID, reason: String?)
    /// End the room for everyone.
    case endRoom(reason: String?)
    /// Leave the room (asked of hosts, since the room goes on without them).
    case leave
    /// Step down from the stage to the audience yourself.
    case stepDown
    /// Mute everyone on the stage below you.
    case muteAll
    /// Lower every raised hand you may lower.
    case clearHands
    /// Stop recording the room.
    case stopRecording
}

/// Asks before lowering every raised hand (the queue's order is lost), once the role table allows it and a hand
/// is up; says why not otherwise.
func askToClearHands(_ state: inout AppState) -> [AppEffect] {
    askBeforeAll(&state, .clearHands, .clearHands, none: RoleTable.noHandsToLower) { roles, me, room in
        roles.loweredByClearHands(me, among: room.raisedHands).isEmpty
    }
}

/// Asks before muting every speaker below the person, once the role table allows it and someone is unmuted; says
/// why not otherwise.
func askToMuteAll(_ state: inout AppState) -> [AppEffect] {
    askBeforeAll(&state, .muteAll, .muteAll, none: RoleTable.nobodyToMute) { roles, me, room in
        roles.mutedByMuteAll(me, among: room.stage).isEmpty
    }
}

/// Asks before `asked`, which acts on many people at once, once the role table allows it and `touchesNobody`
/// is false; says why not otherwise (`none` when there is nobody to act on). Before the room is joined the
/// request goes as it is, for the server to answer.
private func askBeforeAll(
    _ state: inout AppState, _ asked: ClientRequest, _ confirmable: Confirmable, none: String,
    touchesNobody: (RoleTable, Peer, RoomState) -> Bool
) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .request(asked)) }
    if let refusal = state.room.roles.check(asked, by: me, target: nil) { return show(&state, refusal.notice) }
    if touchesNobody(state.room.roles, me, state.room) { return show(&state, Notice(.refusal, none)) }
    state.overlay = .confirm(confirmable, confirmSelected: false)
    return []
}

/// Asks before removing `peer`, once the role table allows it; says why not otherwise.
func askToRemove(_ state: inout AppState, _ peer: Peer, reason: String?) -> [AppEffect] {
    guard let me = state.room.me else { return request(&state, .request(.remove(peer.id, reason: reason))) }
    if let refusal = state.room.roles.check(.remove(peer.id, reason: reason), by: me, target: peer) {
        return show(&state, refusal.notice)
    }
    state.overlay = .confirm(.remove(peer.id, reason: reason), confirmSelected: false)
    return []
}

/// Asks before stepping down from the stage (it is easy to hit by accident, and not always undone as easily).
func askToStepDown(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me, state.room.roles.isOnStage(me.role) else {
        return request(&state, .request(.stepDown))
    }
    state.overlay = .confirm(.stepDown, confirmSelected: false)
    return []
}

/// A key while a confirmation is up: switch between the buttons, go ahead, or cancel (the default). Ctrl-C at
/// the leave question leaves (a second Ctrl-C, as in a shell); at any other it cancels and asks to leave.
func confirmKey(
    _ state: inout AppState, _ key: Key, _ what: Confirmable, _ confirmSelected: Bool
) -> [AppEffect] {
    if key == .char("q"), what == .leave {
        state.overlay = nil
        return carryOut(&state, what)
    }
    guard let action = DialogKeys.action(for: key, in: DialogKeys.confirmation) else { return [] }
    switch action {
    case .toggle:
        state.overlay = .confirm(what, confirmSelected: !confirmSelected)
    case .cancel:
        state.overlay = nil
    case .confirm:
        state.overlay = nil
        return carryOut(&state, what)
    case .choose:
        state.overlay = nil
        return confirmSelected ? carryOut(&state, what) : []
    case .leave:
        state.overlay = nil
        return what == .leave ? carryOut(&state, what) : requestLeave(&state)
    }
    return []
}

private func carryOut(_ state: inout AppState, _ what: Confirmable) -> [AppEffect] {
    switch what {
    case .remove(let id, let reason): return request(&state, .command(.remove(id, reason: reason)))
    case .endRoom(let reason): return request(&state, .command(.end(reason: reason)))
    case .leave: return request(&state, .request(.leave))
    case .stepDown: return request(&state, .request(.stepDown))
    case .muteAll: return request(&state, .request(.muteAll))
    case .clearHands: return request(&state, .request(.clearHands))
    case .stopRecording: return request(&state, .request(.stopRecording))
    }
}

/// In line mode, says the question a confirmation just put up (there is no dialog to draw) and how to answer it:
/// the next line answers. Nothing on the screen, where the dialog asks.
func askInLineMode(_ state: inout AppState) -> [AppEffect] {
    guard state.lineMode, case .confirm(let what, _) = state.overlay else { return [] }
    let question = confirmationText(what, in: state)
    let deed = lineModeWords(what, in: state).deed
    return show(
        &state, Notice(.info, "\(question.title) \(question.message) Type yes to \(deed), or anything else to cancel."))
}

/// The line that answers a question asked in line mode: `yes` (or `y`) goes ahead; anything else cancels, and
/// says so.
func answerInLineMode(_ state: inout AppState, _ what: Confirmable, _ line: String) -> [AppEffect] {
    if ["yes", "y"].contains(line.lowercased()) { return carryOut(&state, what) }
    return show(&state, Notice(.info, "Cancelled. " + lineModeWords(what, in: state).cancelled))
}

/// What line mode says of a confirmation beside its question: the deed `yes` does, and what stays as it was when
/// the answer is anything else.
private func lineModeWords(_ what: Confirmable, in state: AppState) -> (deed: String, cancelled: String) {
    switch what {
    case .remove(let id, _):
        let name = state.room.peers[id]?.name ?? id.rawValue
        return ("remove \(name)", "\(name) stays in the room.")
    case .endRoom: return ("end the room", "The room goes on.")
    case .leave: return ("leave", "You stay in the room.")
    case .stepDown: return ("step down", "You stay on the stage.")
    case .muteAll: return ("mute them", "Nobody was muted.")
    case .clearHands: return ("lower them", "The raised hands stay in order.")
    case .stopRecording: return ("stop recording", "The recording goes on.")
    }
}

/// The question a confirmation asks, in plain words.
public func confirmationText(_ what: Confirmable, in state: AppState) -> RoomScreenModel.Confirmation {
    switch what {
    case .remove(let id, _):
        let name = state.room.peers[id]?.name ?? id.rawValue
        return RoomScreenModel.Confirmation(
            title: "Remove \(name)?",
            message: "\(name) is disconnected now and cannot come back while the room stays open.",
            confirmLabel: "Remove")
    case .endRoom:
        return RoomScreenModel.Confirmation(
            title: "End the room?",
            message: "Everyone is disconnected and the room closes for good. This cannot be undone.",
            confirmLabel: "End room")
    case .leave where state.inDemo:
        return RoomScreenModel.Confirmation(
            title: "Leave the demo?",
            message: "The room runs inside this program: leaving ends it for everyone, and the demo with it.",
            confirmLabel: "Leave")
    case .leave:
        return RoomScreenModel.Confirmation(
            title: "Leave the room?",
            message: "You are a host. The room goes on without you; to close it for everyone, use /end instead.",
            confirmLabel: "Leave")
    case .muteAll:
        let names = state.room.me.map { state.room.roles.mutedByMuteAll($0, among: state.room.stage).map(\.name) } ?? []
        let who = names.count == 1 ? names[0] : "\(names.count) people (\(names.joined(separator: ", ")))"
        return RoomScreenModel.Confirmation(
            title: "Mute every speaker?",
            message: "\(who) will be muted; each can unmute again. You stay as you are.", confirmLabel: "Mute all")
    case .clearHands:
        let count =
            state.room.me.map { state.room.roles.loweredByClearHands($0, among: state.room.raisedHands).count } ?? 0
        return RoomScreenModel.Confirmation(
            title: "Lower every raised hand?",
            message: "\(count) raised \(count == 1 ? "hand goes" : "hands go") down and the queue starts again; "
                + "anyone can raise their hand again.",
            confirmLabel: "Lower all")
    case .stopRecording:
        // The demo's recordings are in its throwaway folder, which goes when the demo ends.
        let kept =
            state.inDemo
            ? "what was recorded until now is kept until the demo ends, which deletes it."
            : "what was recorded until now is."
        return RoomScreenModel.Confirmation(
            title: "Stop recording?",
            message: "What the room says from now on is not kept; \(kept) Recording again starts a new file.",
            confirmLabel: "Stop recording")
    case .stepDown:
        let back: String
        if let role = stepUpAfterSteppingDown(state) {
            back = "You can step back up to \(state.room.roles.label(of: role)) with u or /move me \(role.rawValue)."
        } else {
            back = "To come back on stage, someone who runs the stage has to invite or move you."
        }
        return RoomScreenModel.Confirmation(
            title: "Step down to the audience?",
            message: "You leave the stage and your microphone closes. " + back, confirmLabel: "Step down")
    }
}

/// The role the person could take back after stepping down: their token's, unless someone else lowered them below
/// it (then only what they may step up to now).
func stepUpAfterSteppingDown(_ state: AppState) -> RoleName? {
    let roles = state.room.roles
    guard let me = state.room.me, let token = state.room.tokenRole, roles.contains(token),
        roles.isOnStage(token) || roles.rank(of: token) < roles.rank(of: .audience)
    else { return state.room.stepUpRole }
    return roles.rank(of: me.role) <= roles.rank(of: token) ? token : state.room.stepUpRole
}
