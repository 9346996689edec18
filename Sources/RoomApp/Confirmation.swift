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

/// A key while a confirmation is up: switch between the buttons, go ahead, or cancel (the default).
func confirmKey(
    _ state: inout AppState, _ key: Key, _ what: Confirmable, _ confirmSelected: Bool
) -> [AppEffect] {
    switch key {
    case .left, .right, .char("h"), .char("l"), .tab, .backTab:
        state.overlay = .confirm(what, confirmSelected: !confirmSelected)
    case .escape, .char("n"), .ctrl("c"):
        state.overlay = nil
    case .char("y"):
        state.overlay = nil
        return carryOut(&state, what)
    case .enter:
        state.overlay = nil
        return confirmSelected ? carryOut(&state, what) : []
    case .char("q") where what == .leave:
        state.overlay = nil
        return carryOut(&state, what)
    default:
        break
    }
    return []
}

private func carryOut(_ state: inout AppState, _ what: Confirmable) -> [AppEffect] {
    switch what {
    case .remove(let id, let reason): return request(&state, .command(.remove(id, reason: reason)))
    case .endRoom(let reason): return request(&state, .command(.end(reason: reason)))
    case .leave: return request(&state, .request(.leave))
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
    case .leave:
        return RoomScreenModel.Confirmation(
            title: "Leave the room?",
            message: "You are a host. The room goes on without you; to close it for everyone, use /end instead.",
            confirmLabel: "Leave")
    }
}
