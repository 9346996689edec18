import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// A host or moderator turns raising hands off for the room: everyone is told, every raised hand goes down, and
/// raising one is refused with a sentence until it is turned back on. The setting is stored and checkpointed.
@Suite struct HandsAllowedTests {
    @Test func turningHandsOffLowersThemAndRefusesNewOnes() throws {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", now: 10)
        _ = room.handle(.raiseHand, from: "fay", now: 11)
        _ = room.leave("fay", reason: .disconnected, now: 12)
        let off = room.handle(.setHandsAllowed(false), from: "bo", now: 20)
        #expect(events(off) == [.handsAllowed(allowed: false, by: "bo")])
        #expect(off.changes.contains(.handsAllowed(false)))
        #expect(off.changes.contains(.hand("eli", raisedAt: nil)))
        #expect(off.changes.contains(.hand("fay", raisedAt: nil)))
        #expect(room.peers["eli"]?.handRaisedAt == nil)
        #expect(room.heldHands.isEmpty)
        #expect(!room.handsAllowed)
        expectRefused(
            .raiseHand, by: "eli", code: .conflict,
            message: "raising hands is turned off in this room; a host or moderator can turn it back on", in: room)
        expectRefused(
            .setHandsAllowed(false), by: "ana", code: .conflict, message: "raising hands is already off", in: room)
        let copy = RoomAuthority(
            name: "lobby", roles: defaultRoles,
            restoring: try ClusterFormat.checkpoint(decoding: ClusterFormat.encode(room.checkpoint)),
            maxPeers: 100)
        #expect(!copy.handsAllowed)
        let on = room.handle(.setHandsAllowed(true), from: "ana", now: 30)
        #expect(events(on) == [.handsAllowed(allowed: true, by: "ana")])
        #expect(events(room.handle(.raiseHand, from: "eli", now: 31)) == [.handRaised(peer: "eli", at: 31)])
    }

    @Test func onlyHostsAndModeratorsTurnHandsOff() {
        expectRefused(
            .setHandsAllowed(false), by: "chen", code: .forbidden,
            message: "only hosts and moderators can turn raised hands off or on")
        expectRefused(
            .setHandsAllowed(true), by: "ana", code: .conflict, message: "raising hands is already on")
    }
}
