import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// A room's deadlines (a handover due, or its end) are told to newcomers, given to the store with each decision
/// that sets, moves or clears them, and taken back by a room loaded after a restart, which acts on them when due.
@Suite struct RoomDeadlineTests {
    static let server = PeerID("")
    static let reason = "the last host left and none came back"

    /// The populated room without a moderator: bo is a speaker.
    func roomWithoutModerators() -> RoomAuthority {
        var room = populatedRoom()
        _ = room.handle(.setRole("bo", .speaker), from: "ana", id: nil, now: 50)
        return room
    }

    func snapshot(_ result: JoinResult) -> JoinedSnapshot? {
        guard case .joined(let message, _, _) = result, case .joined(let snapshot) = message.event else { return nil }
        return snapshot
    }

    @Test func aNewcomerToARoomThatIsEndingIsToldWhenAndByWhom() {
        var room = roomWithoutModerators()
        #expect(snapshot(room.join(id: "gus", name: "Gus", role: .audience, now: 60))?.ending == nil)
        _ = room.handle(.leave, from: "ana", id: nil, now: 100)
        let joined = snapshot(room.join(id: "hana", name: "Hana", role: .audience, now: 200))
        #expect(joined?.ending == HostlessEnding(host: "ana", name: "Ana", at: 100 + RoomAuthority.hostlessGrace))
        #expect(joined?.handsAllowed == true)
    }

    @Test func aNewcomerToARoomWithHandsOffIsToldSo() {
        var room = populatedRoom()
        _ = room.handle(.setHandsAllowed(false), from: "bo", id: nil, now: 60)
        let joined = snapshot(room.join(id: "hana", name: "Hana", role: .audience, now: 200))
        #expect(joined?.handsAllowed == false)
        #expect(joined?.ending == nil)
    }

    @Test func theStoreLearnsTheEndingWhenItIsSetAndWhenAHostIsBack() {
        var room = roomWithoutModerators()
        let left = room.handle(.leave, from: "ana", id: nil, now: 100)
        let ending = RoomDeadline(
            handoverDue: nil, endsAt: 100 + RoomAuthority.hostlessGrace, lastHost: "ana", lastHostName: "Ana")
        #expect(left.changes.last == .deadline(ending))
        #expect(room.deadline == ending)
        // Nothing about the deadline changes: nothing about it is said.
        let chat = room.handle(.chat("still here", to: .everyone), from: "eli", id: nil, now: 110)
        #expect(!chat.changes.contains { if case .deadline = $0 { true } else { false } })
        guard case .joined(_, let back, _) = room.join(id: "ana", name: "Ana", role: .host, now: 200) else {
            Issue.record("not joined")
            return
        }
        #expect(back.changes.last == .deadline(nil))
        #expect(room.deadline == nil)
    }

    @Test func theStoreLearnsAHandoverThatWaitsAndTheEndThatClearsIt() {
        var room = roomWithoutModerators()
        let dropped = room.leave("ana", reason: .disconnected, now: 100)
        let due = 100 + RoomAuthority.reconnectGrace
        #expect(
            dropped.changes.last
                == .deadline(RoomDeadline(handoverDue: due, endsAt: nil, lastHost: "ana", lastHostName: "Ana")))
        let ending = room.expireInvitations(now: due)
        let endsAt = due + RoomAuthority.hostlessGrace
        #expect(
            ending.changes.last
                == .deadline(RoomDeadline(handoverDue: nil, endsAt: endsAt, lastHost: "ana", lastHostName: "Ana")))
        let ended = room.expireInvitations(now: endsAt)
        #expect(ended.changes.contains(.ended(reason: Self.reason)))
        #expect(ended.changes.last == .deadline(nil))
    }

    /// A room loaded after a restart, with nobody back yet, ends at the time everyone was told.
    @Test func aRestoredEndingEndsTheRoomWhenDue() {
        var room = RoomAuthority(name: "lobby", roles: defaultRoles, seq: 5_000)
        let endsAt: Timestamp = 200_000
        room.restore(RoomDeadline(handoverDue: nil, endsAt: endsAt, lastHost: "ana", lastHostName: "Ana"), now: 150_000)
        #expect(room.nextTimedWork == endsAt)
        #expect(events(room.expireInvitations(now: endsAt - 1)).isEmpty)
        // Someone back meanwhile hears when it ends.
        #expect(
            snapshot(room.join(id: "eli", name: "Eli", role: .audience, now: 160_000))?.ending
                == HostlessEnding(host: "ana", name: "Ana", at: endsAt))
        let ended = room.expireInvitations(now: endsAt)
        #expect(events(ended) == [.roomEnded(by: Self.server, reason: Self.reason)])
        #expect(room.ended)
        #expect(ended.changes.contains(.ended(reason: Self.reason)))
    }

    /// A room whose end passed while the server was down ends as soon as it is loaded and the tick comes.
    @Test func anEndingThatPassedWhileTheServerWasDownEndsAtOnce() {
        var room = RoomAuthority(name: "lobby", roles: defaultRoles, seq: 5_000)
        room.restore(RoomDeadline(handoverDue: nil, endsAt: 1_000, lastHost: "ana", lastHostName: "Ana"), now: 90_000)
        #expect(room.nextTimedWork == 1_000)
        let ended = room.expireInvitations(now: 90_000)
        #expect(room.ended)
        #expect(ended.changes.contains(.ended(reason: Self.reason)))
    }

    /// A restored handover waits the reconnect grace from the load (everyone's connection dropped with the
    /// server), then the longest-serving moderator back becomes host; a host back first keeps it.
    @Test func aRestoredHandoverWaitsForPeopleToComeBack() {
        var room = RoomAuthority(
            name: "lobby", roles: defaultRoles, seq: 5_000,
            departed: ["ana": (.host, 10_000), "bo": (.moderator, 40_000)])
        room.restore(
            RoomDeadline(handoverDue: 70_000, endsAt: nil, lastHost: "ana", lastHostName: "Ana"), now: 50_000)
        let due = 50_000 + RoomAuthority.reconnectGrace
        #expect(room.handoverDue == due)
        _ = room.join(id: "bo", name: "Bo", role: .audience, now: 55_000)
        #expect(room.peers["bo"]?.role == .moderator)
        #expect(events(room.expireInvitations(now: due - 1)).isEmpty)
        let handedOver = room.expireInvitations(now: due)
        #expect(events(handedOver) == [.roleChanged(peer: "bo", role: .host, by: Self.server, stepUp: nil)])
        #expect(handedOver.changes.last == .deadline(nil))
        // A handover due long after the start keeps its own time.
        var later = RoomAuthority(name: "lobby", roles: defaultRoles, seq: 5_000)
        later.restore(
            RoomDeadline(handoverDue: 500_000, endsAt: nil, lastHost: "ana", lastHostName: "Ana"), now: 50_000)
        #expect(later.handoverDue == 500_000)
    }

    /// The server's own grace for a room without host or moderator (`serve --hostless-grace`).
    @Test func theEndingGraceIsTheServers() {
        var room = roomWithoutModerators()
        room.endingGrace = 5_000
        let left = room.handle(.leave, from: "ana", id: nil, now: 100)
        #expect(events(left).last == .roomEnding(peer: "ana", name: "Ana", at: 5_100))
    }
}
