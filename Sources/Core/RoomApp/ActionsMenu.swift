import RoomCore
import TermUI

/// One entry of the actions menu for a peer; each has a key that also works without the menu.
public enum PeerAction: Sendable, Equatable, CaseIterable {
    case invite
    case withdraw
    case makeSpeaker
    case makeModerator
    case moveToAudience
    case stepDown
    case stepUp
    case lowerHand
    case lowerTheirHand
    case mute
    case remove
    case message

    /// The key shown next to the entry.
    public var key: String {
        switch self {
        case .invite: "i"
        case .withdraw: "w"
        case .makeSpeaker: "s"
        case .makeModerator: "o"
        case .moveToAudience, .stepDown: "a"
        case .stepUp: "u"
        case .lowerHand: "r"
        case .lowerTheirHand: "L"
        case .mute: "M"
        case .remove: "x"
        case .message: "d"
        }
    }

    /// What the entry does, as the menu shows it.
    public func title(_ roles: RoleTable, stepUp: RoleName?) -> String {
        switch self {
        case .invite: "Invite to speak"
        case .withdraw: "Withdraw the invitation"
        case .makeSpeaker: "Make speaker now"
        case .makeModerator: "Make moderator"
        case .moveToAudience: "Move to audience"
        case .stepDown: "Step down to the audience…"
        case .stepUp: "Step back up to \(stepUp.map { roles.label(of: $0) } ?? "your role")"
        case .lowerHand: "Lower your hand"
        case .lowerTheirHand: "Lower their hand"
        case .mute: "Mute"
        case .remove: "Remove from room…"
        case .message: "Message privately"
        }
    }

    /// What the entry does, for the help.
    public var help: String {
        switch self {
        case .invite: "invite them to speak"
        case .withdraw: "withdraw their invitation"
        case .makeSpeaker: "make them a speaker now, without asking"
        case .makeModerator: "make them a moderator"
        case .moveToAudience: "move them to the audience"
        case .stepDown: "yourself: step down to the audience (asks first)"
        case .stepUp: "yourself: step back up to the role you stepped down from"
        case .lowerHand: "yourself: lower your hand"
        case .lowerTheirHand: "lower their raised hand"
        case .mute: "mute them (yourself: mute)"
        case .remove: "remove them from the room (asks first)"
        case .message: "message them privately"
        }
    }
}

/// The actions the person may take on `peer`, in menu order. On yourself, only what you do to yourself: mute,
/// step down (asked first), step back up, lower your hand.
public func availableActions(_ state: AppState, on peer: Peer) -> [PeerAction] {
    guard let me = state.room.me, !state.isOver else { return [] }
    let roles = state.room.roles
    var items: [PeerAction] = []
    if peer.id == me.id {
        if roles.isOnStage(peer.role), !peer.muted { items.append(.mute) }
        if state.room.stepUpRole != nil { items.append(.stepUp) }
        if roles.isOnStage(peer.role) { items.append(.stepDown) }
        if peer.handRaisedAt != nil { items.append(.lowerHand) }
        return items
    }
    func allowed(_ request: ClientRequest) -> Bool { roles.check(request, by: me, target: peer) == nil }
    let invited = state.room.invitations[peer.id] != nil
    if !roles.isOnStage(peer.role), !invited, allowed(.invite(peer.id)) { items.append(.invite) }
    if invited, allowed(.withdrawInvite(peer.id)) { items.append(.withdraw) }
    if peer.role != .speaker, roles.contains(.speaker), allowed(.setRole(peer.id, .speaker)) {
        items.append(.makeSpeaker)
    }
    if peer.role != .moderator, roles.contains(.moderator), allowed(.setRole(peer.id, .moderator)) {
        items.append(.makeModerator)
    }
    if roles.isOnStage(peer.role) && allowed(.setRole(peer.id, .audience)) { items.append(.moveToAudience) }
    if roles.isOnStage(peer.role), !peer.muted, allowed(.mutePeer(peer.id)) { items.append(.mute) }
    if peer.handRaisedAt != nil, allowed(.lowerHandOf(peer.id)) { items.append(.lowerTheirHand) }
    if allowed(.remove(peer.id, reason: nil)) { items.append(.remove) }
    if roles.can(me.role, .chat) { items.append(.message) }
    return items
}

/// Opens the actions menu for the selected peer, or says there is nothing to do for them.
func openActions(_ state: inout AppState) -> [AppEffect] {
    withSelection(&state) { state, peer in
        let items = availableActions(state, on: peer)
        guard !items.isEmpty else {
            let whom = peer.id == state.room.selfID ? "yourself" : peer.name
            return show(&state, Notice(.info, "there is nothing you can do for \(whom) here"))
        }
        state.overlay = .actions(peer: peer.id, items: items, selected: 0)
        return []
    }
}

/// A key while the actions menu is open: move, choose with Enter or an entry's own key, or close.
func menuKey(
    _ state: inout AppState, _ key: Key, peer: PeerID, items: [PeerAction], _ selected: Int
) -> [AppEffect] {
    if let action = DialogKeys.action(for: key, in: DialogKeys.menu) {
        switch action {
        case .close:
            state.overlay = nil
        case .leave:
            state.overlay = nil
            return requestLeave(&state)
        case .next:
            state.overlay = .actions(peer: peer, items: items, selected: (selected + 1) % max(1, items.count))
        case .previous:
            state.overlay = .actions(
                peer: peer, items: items, selected: (selected + items.count - 1) % max(1, items.count))
        case .choose:
            state.overlay = nil
            guard items.indices.contains(selected) else { return [] }
            return perform(&state, items[selected], on: peer)
        }
        return []
    }
    if case .char(let c) = key, let item = items.first(where: { $0.key == String(c) }) {
        state.overlay = nil
        return perform(&state, item, on: peer)
    }
    return []
}

private func perform(_ state: inout AppState, _ action: PeerAction, on id: PeerID) -> [AppEffect] {
    guard let peer = state.room.peers[id] else {
        return show(&state, Notice(.refusal, "that person has left the room"))
    }
    switch action {
    case .invite: return request(&state, .request(.invite(id)))
    case .withdraw: return request(&state, .request(.withdrawInvite(id)))
    case .makeSpeaker: return request(&state, .command(.move(id, .speaker)))
    case .makeModerator: return request(&state, .command(.move(id, .moderator)))
    case .moveToAudience: return request(&state, .command(.move(id, .audience)))
    case .stepDown: return askToStepDown(&state)
    case .stepUp: return stepUp(&state)
    case .lowerHand: return request(&state, .request(.lowerHand))
    case .lowerTheirHand: return request(&state, .request(.lowerHandOf(id)))
    case .mute: return request(&state, .command(.mute(id)))
    case .remove: return askToRemove(&state, peer, reason: nil)
    case .message:
        let quoted = commandName(for: peer, in: state)
        state.commandLine = LineEditor(prompt: "/", text: "dm \(quoted) ", history: state.commandHistory)
        return []
    }
}

/// Steps back up to the role the person stepped down from, or says why they cannot.
func stepUp(_ state: inout AppState) -> [AppEffect] {
    guard let me = state.room.me else { return [] }
    guard let role = state.room.stepUpRole else {
        return show(&state, Notice(.refusal, "you cannot raise your own role; a host or moderator can move you"))
    }
    return request(&state, .request(.setRole(me.id, role)))
}
