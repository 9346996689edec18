import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// A cluster's copy of a room started from a checkpoint hands a room over exactly as the copy that saw everything.
@Suite struct HostHandoverAcrossCopiesTests {
    static let server = PeerID("")

    /// In a cluster the owner decides and the copies follow: a copy restored from a checkpoint taken while the
    /// handover waits hands over at the same moment as the copy that saw everything.
    @Test func aCheckpointCarriesTheHandoverDeadline() throws {
        let drop: [(Departure, connection: UInt64)] = [(Departure(PeerID("hana"), .disconnected), 1)]
        let early: [ClusterInput] = [
            .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
            .join(node: "b/7", connection: 1, peer: "mo", name: "Mo", role: .moderator, now: 1_010),
            .leave(node: "a/1", drop, now: 1_020),
        ]
        let due = 1_020 + RoomAuthority.reconnectGrace
        let later: [ClusterInput] = [
            .expireInvitations(node: "b/7", now: due - 1), .expireInvitations(node: "b/7", now: due),
        ]
        var full = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles))
        for input in early { _ = full.apply(try ClusterInput(decoding: input.encoded())) }
        var restored = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: full.encoded())
        #expect(restored.authority.handoverDue == due)
        #expect(restored.encoded() == full.encoded())
        var fromFull: [WireEvent] = []
        var fromCheckpoint: [WireEvent] = []
        for input in later {
            if case .outcome(let outcome) = full.apply(input) { fromFull += events(outcome) }
            if case .outcome(let outcome) = restored.apply(input) { fromCheckpoint += events(outcome) }
        }
        #expect(fromFull == [.roleChanged(peer: "mo", role: .host, by: Self.server, stepUp: nil)])
        #expect(fromCheckpoint == fromFull)
        #expect(restored.encoded() == full.encoded())
    }
}
