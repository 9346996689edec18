import Foundation
import RoomCore
import Testing

@testable import RoomProtocol

/// The recording on the wire: its event, the snapshot's field, the requests about it, and a recorder's
/// `started_by`.
@Suite struct RecordingCodecTests {
    func text(_ message: ServerMessage) -> String { String(decoding: ControlCodec.encode(message), as: UTF8.self) }

    @Test func aRecordingThatStartsIsWrittenWithWhoAndSince() throws {
        let message = ServerMessage(.recording(RecordingState(by: "ana", since: 1_000), by: nil, reason: nil), seq: 7)
        #expect(text(message) == #"{"type":"recording","seq":7,"active":true,"by":"ana","since":1000}"#)
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(message)) == message)
    }

    @Test func aRecordingThatStopsIsWrittenWithWhoAndWhyWhenKnown() throws {
        let stopped = ServerMessage(.recording(nil, by: "bo", reason: "the recorder could not write"), seq: 8)
        #expect(
            text(stopped)
                == #"{"type":"recording","seq":8,"active":false,"by":"bo","reason":"the recorder could not write"}"#)
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(stopped)) == stopped)
        let ended = ServerMessage(.recording(nil, by: nil, reason: nil), seq: 9)
        #expect(text(ended) == #"{"type":"recording","seq":9,"active":false}"#)
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(ended)) == ended)
    }

    @Test func anEmptyStopperIsNobody() throws {
        let message = try ControlCodec.decodeServer(#"{"type":"recording","seq":8,"active":false,"by":""}"#)
        #expect(message == ServerMessage(.recording(nil, by: nil, reason: nil), seq: 8))
    }

    @Test func badRecordingEventsAreRefused() {
        let cases: [(String, String)] = [
            (#"{"type":"recording","seq":1}"#, #"the field "active" is missing"#),
            (#"{"type":"recording","seq":1,"active":"yes"}"#, #"the field "active" must be true or false"#),
            (#"{"type":"recording","seq":1,"active":true,"by":"ana"}"#, #"the field "since" is missing"#),
            (#"{"type":"recording","seq":1,"active":true,"by":"","since":1}"#, #"the field "by" is empty"#),
            (#"{"type":"recording","seq":1,"active":true,"by":7,"since":1}"#, #"the field "by" must be a string"#),
            (#"{"type":"recording","seq":1,"active":false,"reason":3}"#, #"the field "reason" must be a string"#),
            (
                #"{"type":"recording","seq":1,"active":true,"by":"\#(String(repeating: "a", count: 129))","since":1}"#,
                #"the field "by" is longer than 128 bytes"#
            ),
        ]
        for (input, message) in cases {
            #expect(throws: ControlDecodeError(.badRequest, message)) { try ControlCodec.decodeServer(input) }
        }
    }

    func snapshot(recording: RecordingState?) -> ServerMessage {
        let ana = Peer(id: "ana", name: "Ana", role: .host, muted: false, joinedAt: 1)
        let recorder = Peer(id: "rec", name: "Recorder", role: .recorder, joinedAt: 2)
        return ServerMessage(
            .joined(
                JoinedSnapshot(
                    room: "jazz", selfID: "ana", peers: [AnnouncedPeer(ana), AnnouncedPeer(recorder)], topic: "",
                    chat: [], roles: protocolRoles, resumed: false, recording: recording)), seq: 4)
    }

    @Test func theSnapshotCarriesTheRecordingOnlyWhileItGoesOn() throws {
        let recorded = snapshot(recording: RecordingState(by: "ana", since: 2))
        let bytes = ControlCodec.encode(recorded)
        #expect(bytes == ControlCodec.json(recorded).encoded)
        #expect(text(recorded).contains(#""listed":true,"recording":{"active":true,"by":"ana","since":2},"peers":["#))
        #expect(try ControlCodec.decodeServer(bytes) == recorded)
        let plain = snapshot(recording: nil)
        #expect(ControlCodec.encode(plain) == ControlCodec.json(plain).encoded)
        #expect(!text(plain).contains("recording"))
        #expect(try ControlCodec.decodeServer(ControlCodec.encode(plain)) == plain)
    }

    @Test func aSnapshotThatSaysNoRecordingHasNone() throws {
        let text = self.text(snapshot(recording: nil)).replacingOccurrences(
            of: #""listed":true,"#, with: #""listed":true,"recording":{"active":false},"#)
        #expect(try ControlCodec.decodeServer(text) == snapshot(recording: nil))
        let broken = self.text(snapshot(recording: nil)).replacingOccurrences(
            of: #""listed":true,"#, with: #""listed":true,"recording":{"active":true},"#)
        #expect(throws: ControlDecodeError(.badRequest, #"the field "since" is missing"#)) {
            try ControlCodec.decodeServer(broken)
        }
        let notAnObject = self.text(snapshot(recording: nil)).replacingOccurrences(
            of: #""listed":true,"#, with: #""listed":true,"recording":true,"#)
        #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(notAnObject) }
    }

    @Test func theRecordingRequestsAreReadAndWritten() throws {
        #expect(try ControlCodec.decodeClient(#"{"type":"start_recording","id":3}"#).request == .startRecording)
        #expect(try ControlCodec.decodeClient(#"{"type":"stop_recording"}"#).request == .stopRecording)
        #expect(
            try ControlCodec.decodeClient(#"{"type":"recorder_error","reason":"disk full"}"#).request
                == .recorderError("disk full"))
        #expect(
            String(decoding: ControlCodec.encode(ClientMessage(.recorderError("disk full"))), as: UTF8.self)
                == #"{"type":"recorder_error","reason":"disk full"}"#)
        #expect(
            String(decoding: ControlCodec.encode(ClientMessage(.startRecording, id: .integer(3))), as: UTF8.self)
                == #"{"type":"start_recording","id":3}"#)
    }

    @Test func aRecorderErrorWithoutAReadableReasonIsRefused() {
        let long = String(repeating: "é", count: ClientRequest.maxRecorderErrorLength + 1)
        let cases: [(String, String)] = [
            (#"{"type":"recorder_error"}"#, #"the field "reason" is missing"#),
            (#"{"type":"recorder_error","reason":5}"#, #"the field "reason" must be a string"#),
            (
                #"{"type":"recorder_error","id":4,"reason":"\#(long)"}"#,
                #"the field "reason" is longer than 200 characters"#
            ),
        ]
        for (input, message) in cases {
            #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeClient(input) }
            do {
                _ = try ControlCodec.decodeClient(input)
            } catch {
                #expect(error.code == .badRequest)
                #expect(error.message == message)
            }
        }
    }

    @Test func startedByTravelsPercentEncoded() throws {
        #expect(ControlCodec.encodeStartedBy("ana") == "ana")
        #expect(ControlCodec.encodeStartedBy("ana lee@x") == "ana%20lee%40x")
        #expect(try ControlCodec.decodeStartedBy("ana%20lee%40x") == "ana lee@x")
        #expect(try ControlCodec.decodeStartedBy(ControlCodec.encodeStartedBy("Zoë 🎷")) == "Zoë 🎷")
        #expect(try ControlCodec.decodeStartedBy(nil) == nil)
    }

    @Test func aStartedByThatIsNoIdentityIsRefused() {
        let cases: [(String, String)] = [
            ("", "\"started_by\" must name an identity of 1 to 128 bytes"),
            (String(repeating: "a", count: 129), "\"started_by\" must name an identity of 1 to 128 bytes"),
            ("%zz", "\"started_by\" is not a percent-encoded identity"),
            ("%C3", "\"started_by\" is not a percent-encoded identity"),
            ("ana%0Abo", "\"started_by\" holds control characters"),
            ("ana%E2%80%AEbo", "\"started_by\" holds control characters"),
            (String(repeating: "%41", count: 200), "\"started_by\" is not a percent-encoded identity"),
        ]
        for (input, message) in cases {
            #expect(throws: ControlDecodeError(.badRequest, message)) { try ControlCodec.decodeStartedBy(input) }
        }
    }

    /// Every cut of a recording event is a clean error or the event itself, never a crash.
    @Test func everyCutOfTheEventIsCleanlyRefused() {
        let bytes = ControlCodec.encode(
            ServerMessage(.recording(nil, by: "bo", reason: "the recorder could not write"), seq: 8))
        for end in 0..<bytes.count {
            #expect(throws: ControlDecodeError.self) { try ControlCodec.decodeServer(bytes[0..<end]) }
        }
    }
}
