import ClubroomResources
import Foundation
import RoomApp
import RoomCore
import RoomTesting
import TermUI
import Testing

/// The default role table.
let roles: RoleTable = {
    do { return try RoleTable.load(contentsOf: ClubroomResources.rolesURL) } catch {
        fatalError("roles.json: \(error)")
    }
}()

/// A start time for tests, a round number of seconds since the epoch.
let t0: Timestamp = 1_800_000_000_000

func peer(
    _ id: String, _ name: String, _ role: RoleName = .audience, muted: Bool = true, hand: Timestamp? = nil,
    joined: Timestamp = 0
) -> Peer {
    Peer(id: PeerID(id), name: name, role: role, muted: muted, handRaisedAt: hand, joinedAt: joined)
}

/// The room of UX.md: Ana hosts, Bo moderates, Chen and Dara speak, Eli, Fay and Gus have hands up, Hana, Ivo
/// and Jun listen.
func sketchPeers() -> [Peer] {
    [
        peer("ana", "Ana", .host, muted: false, joined: 1),
        peer("bo", "Bo", .moderator, joined: 2),
        peer("chen", "Chen", .speaker, muted: false, joined: 3),
        peer("dara", "Dara", .speaker, muted: false, joined: 4),
        peer("eli", "Eli", hand: t0 - 252_000),
        peer("fay", "Fay", hand: t0 - 63_000),
        peer("gus", "Gus", hand: t0 - 9_000),
        peer("hana", "Hana"), peer("ivo", "Ivo"), peer("jun", "Jun"),
    ]
}

/// An app state joined as `me` into a room of `peers`, at `t0`, on an 80x24 screen.
func joined(
    as me: String, peers: [Peer] = sketchPeers(), topic: String = "Friday terminal hour", ascii: Bool = false,
    width: Int = 80, height: Int = 24, lineMode: Bool = false
) -> AppState {
    var state = AppState(roles: roles, ascii: ascii, lineMode: lineMode)
    _ = reduceApp(&state, .resize(width: width, height: height))
    // The token gives the role the person joins with, as a server that did not restore another would say.
    let role = peers.first { $0.id == PeerID(me) }?.role
    let snapshot = RoomSnapshot(
        roomID: "lobby", topic: topic, selfID: PeerID(me), peers: peers, seq: 10, tokenRole: role)
    _ = reduceApp(&state, .server(.joined(snapshot), seq: 10, at: t0))
    return state
}

/// Feeds actions in order; returns the effects of each.
@discardableResult
func send(_ state: inout AppState, _ actions: AppAction...) -> [[AppEffect]] {
    actions.map { reduceApp(&state, $0) }
}

/// A key press at `t0 + offset` milliseconds.
func key(_ key: Key, _ offset: Timestamp = 0) -> AppAction { .key(key, at: t0 + offset) }
func char(_ c: Character, _ offset: Timestamp = 0) -> AppAction { .key(.char(c), at: t0 + offset) }

/// The requests among effects.
func sent(_ effects: [AppEffect]) -> [ClientRequest] {
    effects.compactMap { if case .send(let r) = $0 { r } else { nil } }
}

func render(_ state: AppState, width: Int = 80, height: Int = 24) -> CellBuffer {
    var buffer = CellBuffer(width: width, height: height)
    RoomScreen.render(
        RoomScreenMapper.model(state), into: &buffer, theme: Theme(level: .none, ascii: state.ascii))
    return buffer
}
