import ClubroomResources
import Foundation

@testable import RoomCore

/// The shipped role table, loaded the way the app loads it.
let roles: RoleTable = {
    do {
        return try RoleTable.load(contentsOf: ClubroomResources.rolesURL)
    } catch {
        fatalError("the shipped roles.json does not load: \(error)")
    }
}()

func peer(
    _ id: String, _ name: String, _ role: RoleName = .audience, hand: Timestamp? = nil, joinedAt: Timestamp = 0,
    muted: Bool = true, level: Int = 0
) -> Peer {
    Peer(
        id: PeerID(id), name: name, role: role, muted: muted, handRaisedAt: hand, joinedAt: joinedAt, level: level)
}

/// A small room: a host, a moderator, a speaker, two listeners (one with a hand up since t=500).
let roomPeers: [Peer] = [
    peer("ana", "Ana", .host, joinedAt: 1, muted: false),
    peer("bo", "Bo", .moderator, joinedAt: 2),
    peer("chen", "Chen", .speaker, joinedAt: 3, muted: false),
    peer("dara", "Dara", joinedAt: 4),
    peer("eli", "Eli", hand: 500, joinedAt: 5),
]

/// The small room as `selfID` sees it right after joining at sequence 10.
func joinedRoom(as selfID: String, peers: [Peer] = roomPeers, seq: UInt64 = 10) -> RoomState {
    var state = RoomState(roles: roles)
    let snapshot = RoomSnapshot(
        roomID: "lobby", topic: "Friday", selfID: PeerID(selfID), peers: peers, seq: seq)
    _ = reduce(&state, .server(.joined(snapshot), seq: seq))
    return state
}

extension RoomState {
    /// Applies a server event and returns the effects, for terse tests.
    @discardableResult
    mutating func apply(_ event: ServerEvent, seq: UInt64) -> [Effect] {
        reduce(&self, .server(event, seq: seq))
    }
}

/// Writes text to a fresh temporary file and returns its URL.
func temporaryFile(_ text: String, name: String = "roles.json") throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "roomcore-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url
}
