import RoomCore
import TermUI

/// One entry of the actions menu for a peer; each has a key that also works without the menu.
public enum PeerAction: Sendable, Equatable, CaseIterable {
    case invite
    case makeSpeaker
    case makeModerator
    case moveToAudience
    case lowerHand
    case mute
    case remove
    case message

    /// The key shown next to the entry.
    public var key: String {
        switch self {
        case .invite: "i"
        case .makeSpeaker: "s"
        case .makeModerator: "o"
        case .moveToAudience: "a"
        case .lowerHand: "l"
        case .mute: "M"
        case .remove: "x"
        case .message: "d"
        }
    }

    /// What the entry does.
    public var title: String {
        switch self {
        case .invite: "Invite to speak"
        case .makeSpeaker: "Make speaker now"
        case .makeModerator: "Make moderator"
        case .moveToAudience: "Move to audience"
        case .lowerHand: "Lower their hand"
        case .mute: "Mute"
        case .remove: "Remove from room…"
        case .message: "Message privately"
        }
    }
}

/// The actions the person may take on `peer`, in menu order.
public func availableActions(_ state: AppState, on peer: Peer) -> [PeerAction] {
    guard let me = state.room.me, !state.isOver else { return [] }
    let roles = state.room.roles
    let isMe = peer.id == me.id
    var items: [PeerAction] = []
    func allowed(_ request: ClientRequest) -> Bool { roles.check(request, by: me, target: peer) == nil }
    if !roles.isOnStage(peer.role), allowed(.invite(peer.id)) { items.append(.invite) }
    if !isMe, peer.role != .speaker, roles.contains(.speaker), allowed(.setRole(peer.id, .speaker)) {
        items.append(.makeSpeaker)
    }
    if !isMe, peer.role != .moderator, roles.contains(.moderator), allowed(.setRole(peer.id, .moderator)) {
        items.append(.makeModerator)
    }
    if roles.isOnStage(peer.role) && (isMe || allowed(.setRole(peer.id, .audience))) { items.append(.moveToAudience) }
    if isMe, peer.handRaisedAt != nil { items.append(.lowerHand) }
    if roles.isOnStage(peer.role), !peer.muted, isMe || allowed(.mutePeer(peer.id)) { items.append(.mute) }
    if !isMe, allowed(.remove(peer.id, reason: nil)) { items.append(.remove) }
    if !isMe, roles.can(me.role, .chat) { items.append(.message) }
    return items
}

/// Opens the actions menu for the selected peer, or says there is nothing to do for them.
func openActions(_ state: inout AppState) -> [AppEffect] {
    withSelection(&state) { state, peer in
        let items = availableActions(state, on: peer)
        guard !items.isEmpty else {
            return show(&state, Notice(.info, "there is nothing you can do for \(peer.name) here"))
        }
        state.overlay = .actions(peer: peer.id, items: items, selected: 0)
        return []
    }
}

/// A key while the actions menu is open: move, choose with Enter or an entry's own key, or close.
func menuKey(
    _ state: inout AppState, _ key: Key, peer: PeerID, items: [PeerAction], _ selected: Int
) -> [AppEffect] {
    switch key {
    case .escape, .char("q"), .left, .char("h"):
        state.overlay = nil
    case .ctrl("c"):
        state.overlay = nil
        return requestLeave(&state)
    case .down, .char("j"), .tab:
        state.overlay = .actions(peer: peer, items: items, selected: (selected + 1) % max(1, items.count))
    case .up, .char("k"), .backTab:
        state.overlay = .actions(
            peer: peer, items: items, selected: (selected + items.count - 1) % max(1, items.count))
    case .enter, .right:
        state.overlay = nil
        guard items.indices.contains(selected) else { return [] }
        return perform(&state, items[selected], on: peer)
    case .char(let c):
        guard let item = items.first(where: { $0.key == String(c) }) else { return [] }
        state.overlay = nil
        return perform(&state, item, on: peer)
    default:
        break
    }
    return []
}

private func perform(_ state: inout AppState, _ action: PeerAction, on id: PeerID) -> [AppEffect] {
    guard let peer = state.room.peers[id] else {
        return show(&state, Notice(.refusal, "that person has left the room"))
    }
    switch action {
    case .invite: return request(&state, .request(.invite(id)))
    case .makeSpeaker: return request(&state, .command(.move(id, .speaker)))
    case .makeModerator: return request(&state, .command(.move(id, .moderator)))
    case .moveToAudience: return request(&state, .command(.move(id, .audience)))
    case .lowerHand: return request(&state, .request(.lowerHand))
    case .mute: return request(&state, .command(.mute(id)))
    case .remove: return askToRemove(&state, peer, reason: nil)
    case .message:
        let quoted = commandName(for: peer, in: state)
        state.commandLine = LineEditor(prompt: "/", text: "dm \(quoted) ", history: state.commandHistory)
        return []
    }
}
