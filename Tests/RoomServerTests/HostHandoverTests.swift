import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// When the last host leaves, the moderator who has been in the room longest becomes host: at once when the host
/// left on purpose, after the reconnect grace when their connection dropped. The server makes the change (an
/// empty `by`), and only the room's authority decides it, with the time it is given.
@Suite struct HostHandoverTests {
    static let server = PeerID("")

    /// The populated room (ana host, bo moderator, …) with a second moderator, dee, who came in after bo.
    func roomWithTwoModerators() -> RoomAuthority {
        var room = populatedRoom()
        _ = room.join(id: "dee", name: "Dee", role: .moderator, now: 6)
        return room
    }

    @Test func aHostWhoLeavesOnPurposeHandsOverAtOnceToTheLongestServingModerator() {
        var room = roomWithTwoModerators()
        let outcome = room.handle(.leave, from: "ana", id: nil, now: 100)
        #expect(
            events(outcome) == [
                .peerLeft(peer: "ana", reason: .left),
                .roleChanged(peer: "bo", role: .host, by: Self.server, stepUp: nil),
            ])
        #expect(room.peers["bo"]?.role == .host)
        #expect(room.peers["dee"]?.role == .moderator)
        #expect(outcome.changes.contains(.roleHeld("bo", role: .host, at: 100)))
        #expect(room.handoverDue == nil)
    }

    @Test func aDroppedHostIsWaitedForDuringTheGraceAndThenReplaced() {
        var room = roomWithTwoModerators()
        let dropped = room.leave("ana", reason: .disconnected, now: 100)
        #expect(events(dropped) == [.peerLeft(peer: "ana", reason: .disconnected)])
        #expect(room.handoverDue == 100 + RoomAuthority.reconnectGrace)
        #expect(room.nextInvitationExpiry == 100 + RoomAuthority.reconnectGrace)
        let early = room.expireInvitations(now: 100 + RoomAuthority.reconnectGrace - 1)
        #expect(events(early).isEmpty)
        #expect(room.peers["bo"]?.role == .moderator)
        let due = room.expireInvitations(now: 100 + RoomAuthority.reconnectGrace)
        #expect(events(due) == [.roleChanged(peer: "bo", role: .host, by: Self.server, stepUp: nil)])
        #expect(room.peers["bo"]?.role == .host)
        #expect(room.handoverDue == nil)
        #expect(room.nextInvitationExpiry == nil)
    }

    @Test func aHostBackWithinTheGraceCancelsTheHandover() {
        var room = roomWithTwoModerators()
        _ = room.leave("ana", reason: .disconnected, now: 100)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 150)
        #expect(room.peers["ana"]?.role == .host)
        #expect(room.handoverDue == nil)
        let later = room.expireInvitations(now: 100 + RoomAuthority.reconnectGrace)
        #expect(events(later).isEmpty)
        #expect(room.peers["bo"]?.role == .moderator)
    }

    @Test func anotherHostStillPresentMeansNoHandover() {
        var room = roomWithTwoModerators()
        _ = room.handle(.setRole("chen", .host), from: "ana", id: nil, now: 50)
        let outcome = room.handle(.leave, from: "ana", id: nil, now: 100)
        #expect(events(outcome) == [.peerLeft(peer: "ana", reason: .left)])
        #expect(room.peers["bo"]?.role == .moderator)
        #expect(room.handoverDue == nil)
    }

    /// The populated room without a moderator: bo is a speaker.
    func roomWithoutModerators() -> RoomAuthority {
        var room = populatedRoom()
        _ = room.handle(.setRole("bo", .speaker), from: "ana", id: nil, now: 50)
        return room
    }

    @Test func withoutAModeratorTheRoomEndsAfterAGraceEveryoneIsToldOf() {
        var room = roomWithoutModerators()
        let outcome = room.handle(.leave, from: "ana", id: nil, now: 100)
        let deadline = 100 + RoomAuthority.hostlessGrace
        #expect(
            events(outcome) == [
                .peerLeft(peer: "ana", reason: .left), .roomEnding(peer: "ana", name: "Ana", at: deadline),
            ])
        #expect(!room.peers.values.contains { $0.role == .host })
        #expect(room.endsAt == deadline)
        #expect(room.nextInvitationExpiry == deadline)
        #expect(events(room.expireInvitations(now: deadline - 1)).isEmpty)
        #expect(!room.ended)
        let ended = room.expireInvitations(now: deadline)
        #expect(events(ended) == [.roomEnded(by: Self.server, reason: "the last host left and none came back")])
        #expect(room.ended)
        #expect(room.peers.isEmpty)
        #expect(Set(ended.closes.map(\.peer)) == ["bo", "chen", "eli", "fay"])
        #expect(ended.closes.allSatisfy { $0.reason == .roomEnded })
        #expect(ended.changes.contains(.ended(reason: "the last host left and none came back")))
        #expect(room.nextInvitationExpiry == nil)
    }

    @Test func aDroppedLastHostIsWaitedForBeforeTheEndingStarts() {
        var room = roomWithoutModerators()
        _ = room.leave("ana", reason: .disconnected, now: 100)
        #expect(room.endsAt == nil)
        let graceOver = 100 + RoomAuthority.reconnectGrace
        let outcome = room.expireInvitations(now: graceOver)
        #expect(events(outcome) == [.roomEnding(peer: "ana", name: "Ana", at: graceOver + RoomAuthority.hostlessGrace)])
    }

    @Test func aHostWhoComesBackCancelsTheEnding() {
        var room = roomWithoutModerators()
        _ = room.handle(.leave, from: "ana", id: nil, now: 100)
        guard case .joined(_, let back, _) = room.join(id: "ana", name: "Ana", role: .host, now: 200) else {
            Issue.record("not joined")
            return
        }
        #expect(events(back).last == .roomEnding(peer: "ana", name: "Ana", at: nil))
        #expect(room.endsAt == nil)
        #expect(events(room.expireInvitations(now: 100 + RoomAuthority.hostlessGrace)).isEmpty)
        #expect(!room.ended)
    }

    @Test func aModeratorWhoArrivesDuringTheEndingBecomesHostAndTheRoomGoesOn() {
        var room = roomWithoutModerators()
        _ = room.handle(.leave, from: "ana", id: nil, now: 100)
        guard case .joined(_, let arrival, _) = room.join(id: "mo", name: "Mo", role: .moderator, now: 200) else {
            Issue.record("not joined")
            return
        }
        #expect(
            Array(events(arrival).dropFirst()) == [
                .roleChanged(peer: "mo", role: .host, by: Self.server, stepUp: nil),
                .roomEnding(peer: "mo", name: "Mo", at: nil),
            ])
        #expect(room.peers["mo"]?.role == .host)
        #expect(room.endsAt == nil)
    }

    @Test func aCheckpointCarriesTheEnding() throws {
        var room = roomWithoutModerators()
        _ = room.handle(.leave, from: "ana", id: nil, now: 100)
        let copy = RoomAuthority(
            name: "lobby", roles: defaultRoles,
            restoring: try ClusterFormat.checkpoint(decoding: ClusterFormat.encode(room.checkpoint)),
            maxPeers: 100)
        #expect(copy.endsAt == 100 + RoomAuthority.hostlessGrace)
        #expect(copy.lastHost?.id == "ana" && copy.lastHost?.name == "Ana")
        #expect(copy.checkpoint == room.checkpoint)
    }
}
