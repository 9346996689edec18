import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// The room's recording on the server: a recorder's presence is the recording, everyone is told when it starts
/// and stops, and a recorder may do nothing but report an error and leave.
@Suite struct RecordingAuthorityTests {
    func recordedRoom(startedBy: PeerID? = "ana") -> RoomAuthority {
        var room = populatedRoom()
        _ = room.join(id: "rec", name: "Recorder", role: .recorder, now: 50, startedBy: startedBy)
        return room
    }

    @Test func theFirstRecorderStartsTheRecordingForWhoAskedForIt() {
        var room = populatedRoom()
        guard
            case .joined(let snapshot, let outcome, _) = room.join(
                id: "rec", name: "Recorder", role: .recorder, now: 50, startedBy: "ana")
        else {
            Issue.record("the recorder was refused")
            return
        }
        let started = RecordingState(by: "ana", since: 50)
        #expect(events(outcome).map(\.typeName) == ["peer_joined", "recording"])
        #expect(events(outcome).last == .recording(started, by: nil, reason: nil))
        #expect(room.recording == started)
        #expect(room.recorders == ["rec"])
        guard case .joined(let state) = snapshot.event else { return }
        #expect(state.recording == started)
        guard case .joined(let later) = room.snapshot(for: "eli", resumed: false).event else { return }
        #expect(later.recording == started)
        // A second recorder changes nothing anyone sees but its arrival.
        guard case .joined(_, let second, _) = room.join(id: "rec2", name: "R2", role: .recorder, now: 60) else {
            return
        }
        #expect(events(second).map(\.typeName) == ["peer_joined"])
    }

    @Test func aStarterWhoMayNotRecordOrIsNotHereIsNotBelieved() {
        #expect(recordedRoom(startedBy: "eli").recording == RecordingState(by: "rec", since: 50))
        #expect(recordedRoom(startedBy: "nobody").recording == RecordingState(by: "rec", since: 50))
        #expect(recordedRoom(startedBy: nil).recording == RecordingState(by: "rec", since: 50))
    }

    @Test func theLastRecorderToLeaveStopsItWithTheReasonItGave() {
        var room = recordedRoom()
        #expect(
            events(room.handle(.recorderError("the recorder could not write: disk full"), from: "rec", now: 70)) == [])
        let left = room.leave("rec", reason: .left, now: 71)
        #expect(
            events(left) == [
                .peerLeft(peer: "rec", reason: .left),
                .recording(nil, by: nil, reason: "the recorder could not write: disk full"),
            ])
        #expect(room.recording == nil)
        #expect(room.recorders.isEmpty)
    }

    @Test func stoppingRemovesEveryRecorderAndSaysWho() {
        var room = recordedRoom()
        _ = room.join(id: "rec2", name: "R2", role: .recorder, now: 60)
        let stop = room.handle(.stopRecording, from: "bo", now: 80)
        #expect(
            events(stop) == [
                .removed(peer: "rec", by: "bo", reason: RoomAuthority.recordingStopped),
                .removed(peer: "rec2", by: "bo", reason: RoomAuthority.recordingStopped),
                .recording(nil, by: "bo", reason: nil),
            ])
        #expect(stop.recorderOrders == [.stop(by: "bo")])
        #expect(stop.closes.map(\.peer) == ["rec", "rec2"])
        #expect(room.recording == nil)
        #expect(room.peers["rec"] == nil)
        // Not removed for good: a recorder may come back when someone records again.
        guard case .joined = room.join(id: "rec", name: "Recorder", role: .recorder, now: 90, startedBy: "bo") else {
            Issue.record("the recorder could not come back")
            return
        }
        #expect(room.recording == RecordingState(by: "bo", since: 90))
    }

    @Test func startingAsksTheServerForARecorder() {
        var room = populatedRoom()
        let start = room.handle(.startRecording, from: "ana", now: 40)
        #expect(start.error == nil)
        #expect(start.deliveries.isEmpty)
        #expect(start.recorderOrders == [.start(by: "ana")])
    }

    @Test func refusalsSayWhy() {
        expectRefused(
            .startRecording, by: "eli", code: .forbidden,
            message: "only hosts and moderators can start and stop recording")
        expectRefused(.stopRecording, by: "ana", code: .conflict, message: ClientRequest.notRecording)
        expectRefused(
            .startRecording, by: "ana", code: .conflict, message: ClientRequest.alreadyRecording, in: recordedRoom())
        expectRefused(
            .raiseHand, by: "rec", code: .forbidden, message: ClientRequest.recorderOnlyListens, in: recordedRoom())
        expectRefused(
            .chat("hi", to: .everyone), by: "rec", code: .forbidden, message: ClientRequest.recorderOnlyListens,
            in: recordedRoom())
        expectRefused(
            .invite("rec"), by: "ana", code: .forbidden, message: "Recorder is a recorder: it only listens",
            in: recordedRoom())
        expectRefused(
            .setRole("eli", .recorder), by: "ana", code: .forbidden, message: ClientRequest.recorderByLinkOnly)
        expectRefused(
            .recorderError("x"), by: "ana", code: .forbidden, message: "only a recorder reports why it stops")
    }

    @Test func aHostWhoRemovesTheRecorderStopsTheRecording() {
        var room = recordedRoom()
        let removed = room.handle(.remove("rec", reason: "no"), from: "ana", now: 80)
        #expect(events(removed).last == .recording(nil, by: "ana", reason: nil))
        #expect(room.recording == nil)
        // It is stopping the recording: the server's recorder is told to stop (not restarted into a refusal),
        // and a recorder is not kept out, even when banned, so the room may be recorded again.
        #expect(removed.recorderOrders == [.stop(by: "ana")])
        #expect(room.removedIdentities.isEmpty)
        var banned = recordedRoom()
        let ban = banned.handle(.remove("rec", reason: "no", withdrawLink: false, ban: true), from: "ana", now: 80)
        #expect(ban.recorderOrders == [.stop(by: "ana")])
        #expect(ban.linkRequests.isEmpty)
        guard case .joined = banned.join(id: "rec", name: "Recorder", role: .recorder, now: 90, startedBy: "ana")
        else {
            Issue.record("a removed recorder could not come back")
            return
        }
        #expect(banned.recording == RecordingState(by: "ana", since: 90))
    }

    @Test func theLobbyCountsNoRecorderAndSaysTheRoomIsRecorded() {
        let room = recordedRoom()
        #expect(room.listing?.recording == true)
        #expect(room.listing?.listeners == 2)
        #expect(room.listing?.onStage == 3)
        #expect(populatedRoom().listing?.recording == false)
        var alone = RoomAuthority(name: "empty", roles: defaultRoles)
        _ = alone.join(id: "rec", name: "Recorder", role: .recorder, now: 1)
        #expect(alone.listing == nil)
    }

    @Test func theEndOfTheRoomStopsTheRecorder() {
        var room = recordedRoom()
        let end = room.handle(.endRoom(reason: nil), from: "ana", now: 90)
        #expect(end.recorderOrders == [.stop(by: nil)])
        #expect(room.recording == nil)
        #expect(room.recorders.isEmpty)
        // A recorder the server started may not have joined yet: it is stopped all the same.
        var unrecorded = populatedRoom()
        #expect(unrecorded.handle(.endRoom(reason: nil), from: "ana", now: 90).recorderOrders == [.stop(by: nil)])
    }
}
