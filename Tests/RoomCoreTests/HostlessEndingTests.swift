import Testing

@testable import RoomCore

/// A room's end while it waits for a host, and whether hands may be raised, as a client's state follows them:
/// from the events those present hear, and from the snapshot of someone who joins meanwhile, action by action.
@Suite struct HostlessEndingTests {
    let ending = HostlessEnding(host: "ana", name: "Ana", at: 120_000)

    @Test func aSnapshotOfARoomThatIsEndingCarriesItsEnd() {
        var state = RoomState(roles: roles)
        let snapshot = RoomSnapshot(
            roomID: "lobby", selfID: "dara", peers: roomPeers, seq: 10, hostlessEnding: ending)
        #expect(reduce(&state, .server(.joined(snapshot), seq: 10)) == [])
        #expect(state.hostlessEnding == ending)
        #expect(state.endsAt == 120_000)
        #expect(state.handsAllowed)
    }

    @Test func aSnapshotOfARoomWithHandsOffSaysSo() {
        var state = RoomState(roles: roles)
        let snapshot = RoomSnapshot(roomID: "lobby", selfID: "dara", peers: roomPeers, seq: 10, handsAllowed: false)
        #expect(reduce(&state, .server(.joined(snapshot), seq: 10)) == [])
        #expect(!state.handsAllowed)
        #expect(state.hostlessEnding == nil)
    }

    /// A later snapshot (a reconnect) replaces what the last one or the events said, both ways.
    @Test func aNewSnapshotReplacesTheEndAndTheHandsSetting() {
        var state = joinedRoom(as: "dara")
        state.apply(.roomEnding("ana", name: "Ana", at: 120_000), seq: 11)
        state.apply(.handsAllowed(false, by: "bo"), seq: 12)
        #expect(state.hostlessEnding == ending)
        #expect(!state.handsAllowed)
        let fresh = RoomSnapshot(roomID: "lobby", selfID: "dara", peers: roomPeers, seq: 20)
        _ = reduce(&state, .server(.joined(fresh), seq: 20))
        #expect(state.hostlessEnding == nil)
        #expect(state.handsAllowed)
        let ending2 = HostlessEnding(host: "bo", name: "Bo", at: 300_000)
        let again = RoomSnapshot(
            roomID: "lobby", selfID: "dara", peers: roomPeers, seq: 30, hostlessEnding: ending2, handsAllowed: false)
        _ = reduce(&state, .server(.joined(again), seq: 30))
        #expect(state.hostlessEnding == ending2)
        #expect(!state.handsAllowed)
    }

    /// An ended room has nothing left to end.
    @Test func anEndedSnapshotHasNoEndToWaitFor() {
        var state = RoomState(roles: roles)
        let snapshot = RoomSnapshot(
            roomID: "lobby", selfID: "dara", peers: roomPeers, ended: true, seq: 10, hostlessEnding: ending)
        _ = reduce(&state, .server(.joined(snapshot), seq: 10))
        #expect(state.hostlessEnding == nil)
    }

    @Test func theEndingEventSetsTheEndAndAHostsReturnClearsIt() {
        var state = joinedRoom(as: "dara")
        let before = state
        #expect(state.apply(.roomEnding("ana", name: "Ana", at: 120_000), seq: 11) == [])
        #expect(
            state
                == before.with {
                    $0.hostlessEnding = ending; $0.lastSeq = 11
                })
        #expect(state.apply(.roomEnding("bo", name: "Bo", at: nil), seq: 12) == [])
        #expect(state == before.with { $0.lastSeq = 12 })
    }
}
