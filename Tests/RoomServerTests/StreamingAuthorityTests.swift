import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// Streaming on the server: a host starts and stops the server's destinations by name, everyone is told of each
/// change, a stream's recorder is in no list and no count, and its reports reach the hosts alone.
@Suite struct StreamingAuthorityTests {
    func streamingRoom() -> RoomAuthority {
        var room = populatedRoom()
        room.streamDestinations = ["radio", "hls"]
        return room
    }

    @Test func aHostStartsAStreamAndEveryoneIsTold() {
        var room = streamingRoom()
        let outcome = room.handle(.startStream("radio"), from: "ana", now: 100)
        let live = StreamingState(to: ["radio"], since: 100)
        #expect(outcome.error == nil)
        #expect(events(outcome) == [.streaming(live, by: "ana", reason: nil)])
        #expect(outcome.deliveries.first?.to == .everyone)
        #expect(outcome.streamOrders == [.start("radio", by: "ana")])
        #expect(room.streaming == live)
        let second = room.handle(.startStream("hls"), from: "ana", now: 200)
        #expect(
            events(second) == [.streaming(StreamingState(to: ["radio", "hls"], since: 100), by: "ana", reason: nil)])
        let stopped = room.handle(.stopStream("radio"), from: "ana", now: 300)
        #expect(events(stopped) == [.streaming(StreamingState(to: ["hls"], since: 100), by: "ana", reason: nil)])
        #expect(stopped.streamOrders == [.stop("radio", by: "ana")])
        let none = room.handle(.stopStream("hls"), from: "ana", now: 400)
        #expect(events(none) == [.streaming(nil, by: "ana", reason: nil)])
        #expect(room.streaming == nil)
    }

    @Test func refusals() {
        var room = streamingRoom()
        #expect(
            refusal(room.handle(.startStream("radio"), from: "bo", now: 1))?.message
                == "only hosts can start and stop streaming the room")
        #expect(
            refusal(room.handle(.startStream("tv"), from: "ana", now: 1))?.message
                == "this server has no stream named tv; it has: radio, hls")
        #expect(
            refusal(room.handle(.stopStream("radio"), from: "ana", now: 1))?.message
                == "the room does not stream to radio")
        _ = room.handle(.startStream("radio"), from: "ana", now: 2)
        #expect(
            refusal(room.handle(.startStream("radio"), from: "ana", now: 3))?.message
                == "the room already streams to radio; /stream stop radio stops it")
        var bare = populatedRoom()
        #expect(
            refusal(bare.handle(.startStream("radio"), from: "ana", now: 1))?.message
                == "this server has no streams configured")
    }

    @Test func aStreamsRecorderIsNoRecordingAndInNoCount() {
        var room = streamingRoom()
        _ = room.handle(.startStream("radio"), from: "ana", now: 100)
        let before = room.listing
        guard
            case .joined(let snapshot, let outcome, _) = room.join(
                id: "stream-radio", name: "Stream radio", role: .recorder, now: 110, startedBy: "ana", stream: "radio")
        else {
            Issue.record("the stream's recorder was refused")
            return
        }
        #expect(events(outcome).map(\.typeName) == ["peer_joined"])
        #expect(room.recording == nil)
        #expect(room.streamPeers == ["stream-radio": "radio"])
        #expect(room.listing?.listeners == before?.listeners)
        guard case .joined(let joined) = snapshot.event else { return }
        #expect(joined.streaming == StreamingState(to: ["radio"], since: 100))
        #expect(joined.streamDestinations == [])
        // Leaving (a crash, a restart) keeps the room streaming: only stop_stream or a give-up ends it.
        let left = room.leave("stream-radio", reason: .disconnected, now: 120)
        #expect(events(left).map(\.typeName) == ["peer_left"])
        #expect(room.streaming == StreamingState(to: ["radio"], since: 100))
    }

    @Test func aRecorderNamingAStreamTheRoomDoesNotHaveIsARecording() {
        var room = streamingRoom()
        _ = room.join(id: "stream-radio", name: "Recorder", role: .recorder, now: 110, stream: "radio")
        #expect(room.streamPeers == [:])
        #expect(room.recording == RecordingState(by: "stream-radio", since: 110))
    }

    /// A recorder run by hand (with a recorder's link, so another identity) that names a live stream is still a
    /// recording: only the server's own recorder of that stream is hidden.
    @Test func aRecorderThatIsNotTheServersOwnIsARecordingEvenNamingALiveStream() {
        var room = streamingRoom()
        _ = room.handle(.startStream("radio"), from: "ana", now: 100)
        _ = room.join(id: "rec", name: "Recorder", role: .recorder, now: 110, stream: "radio")
        #expect(room.streamPeers == [:])
        #expect(room.recording == RecordingState(by: "rec", since: 110))
        #expect(RoomAuthority.streamIdentity("radio") == "stream-radio")
    }

    @Test func onlyThoseWhoMayStreamAreToldTheDestinations() {
        let room = streamingRoom()
        guard case .joined(let host) = room.snapshot(for: "ana", resumed: false).event,
            case .joined(let listener) = room.snapshot(for: "eli", resumed: false).event
        else { return }
        #expect(host.streamDestinations == ["radio", "hls"])
        #expect(listener.streamDestinations == [])
    }

    @Test func aStreamsReportGoesToTheHostsAsANotice() {
        var room = streamingRoom()
        _ = room.handle(.startStream("radio"), from: "ana", now: 100)
        _ = room.join(id: "stream-radio", name: "S", role: .recorder, now: 110, stream: "radio")
        let sentence = "Streaming to radio stopped: the server refused the password."
        let outcome = room.handle(.streamStatus(sentence), from: "stream-radio", now: 120)
        #expect(outcome.error == nil)
        #expect(outcome.deliveries.map(\.to) == [.peers(["ana"])])
        #expect(events(outcome) == [.error(code: .stream, message: sentence, id: nil)])
        // A recorder that carries no stream has nothing to report.
        _ = room.join(id: "rec", name: "Recorder", role: .recorder, now: 130)
        #expect(refusal(room.handle(.streamStatus(sentence), from: "rec", now: 140))?.code == .forbidden)
    }

    @Test func aGivenUpStreamStopsWithItsReasonAndTheRoomsEndStopsAll() {
        var room = streamingRoom()
        _ = room.handle(.startStream("radio"), from: "ana", now: 100)
        _ = room.handle(.startStream("hls"), from: "ana", now: 110)
        let gaveUp = room.streamGaveUp("radio", reason: "its recorder keeps failing at once", now: 200)
        #expect(
            events(gaveUp) == [
                .streaming(
                    StreamingState(to: ["hls"], since: 100), by: nil, reason: "its recorder keeps failing at once")
            ])
        #expect(gaveUp.listing != nil)
        let ended = room.handle(.endRoom(reason: "done"), from: "ana", now: 300)
        #expect(ended.streamOrders == [.stopAll])
        #expect(room.streaming == nil)
    }

    @Test func removingAStreamsRecorderStopsThatStreamAndKeepsNobodyOut() {
        var room = streamingRoom()
        _ = room.handle(.startStream("radio"), from: "ana", now: 100)
        _ = room.handle(.startStream("hls"), from: "ana", now: 101)
        _ = room.join(id: "stream-radio", name: "Stream radio", role: .recorder, now: 110, stream: "radio")
        let outcome = room.handle(.remove("stream-radio", reason: nil), from: "ana", now: 120)
        #expect(outcome.error == nil)
        #expect(
            events(outcome) == [
                .removed(peer: "stream-radio", by: "ana", reason: "the stream was stopped"),
                .streaming(StreamingState(to: ["hls"], since: 100), by: "ana", reason: nil),
            ])
        #expect(outcome.streamOrders == [.stop("radio", by: "ana")])
        #expect(outcome.linkRequests == [])
        #expect(room.peers["stream-radio"] == nil)
        #expect(!room.removedIdentities.contains("stream-radio"))
    }

    @Test func theListingSaysWhereTheRoomStreams() {
        var room = streamingRoom()
        _ = room.handle(.startStream("radio"), from: "ana", now: 100)
        #expect(room.listing?.streaming == ["radio"])
    }
}
