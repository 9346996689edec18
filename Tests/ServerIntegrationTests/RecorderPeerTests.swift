import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTransport
import Testing
import WebSocket

/// A recorder joins a real server with a token of role `recorder`: everyone is told the room is recorded, by whom
/// the recorder says asked for it; the recorder may only report an error and leave, and its leaving stops the
/// recording with its reason.
@Suite(.serialized) struct RecorderPeerTests {
    func recorderHeaders(startedBy: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(ControlCodec.startedByHeader, startedBy)
        return headers
    }

    func recording(_ recorder: SessionRecorder) -> SessionEvent? {
        recorder.wait {
            if case .message(let message) = $0, case .recording = message.event { return true }
            return false
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRecorderIsTheRecording() throws {
        try withServer { server, _ in
            let (host, hostSeen) = try session(
                server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
            defer { host.shutdown() }
            let (listener, listenerSeen) = try session(
                server, room: "jazz", token: try server.token("eli", role: "audience", room: "jazz"))
            defer { listener.shutdown() }
            let (recorder, recorderSeen) = try session(
                server, room: "jazz", token: try server.token("rec", role: "recorder", room: "jazz", name: "Recorder"),
                headers: recorderHeaders(startedBy: ControlCodec.encodeStartedBy("ana")))
            defer { recorder.shutdown() }
            #expect(snapshot(recorderSeen)?.recording?.by == "ana")
            for seen in [hostSeen, listenerSeen] {
                guard case .message(let message)? = recording(seen), case .recording(let state, _, _) = message.event
                else {
                    Issue.record("no recording event")
                    continue
                }
                #expect(state?.by == "ana")
            }
            // A latecomer learns it from the snapshot.
            let (late, lateSeen) = try session(
                server, room: "jazz", token: try server.token("fay", role: "audience", room: "jazz"))
            defer { late.shutdown() }
            #expect(snapshot(lateSeen)?.recording?.by == "ana")
            // The recorder may not raise a hand; it may say why it stops, and leave.
            _ = recorder.send(.raiseHand, id: .integer(1))
            let refused = recorderSeen.wait {
                if case .message(let message) = $0, case .error(.forbidden, _, .integer(1)) = message.event {
                    return true
                }
                return false
            }
            #expect(refused != nil)
            _ = recorder.send(.recorderError("the recorder could not write: No space left on device"))
            _ = recorder.send(.leave)
            let stopped = listenerSeen.wait {
                if case .message(let message) = $0, case .recording(nil, _, _) = message.event { return true }
                return false
            }
            guard case .message(let message)? = stopped else {
                Issue.record("the recording did not stop")
                return
            }
            #expect(
                message.event
                    == .recording(nil, by: nil, reason: "the recorder could not write: No space left on device"))
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRecorderWhoseStarterIsUnreadableIsRefused() throws {
        try withServer { server, _ in
            let (recorder, seen) = try session(
                server, room: "jazz", token: try server.token("rec", role: "recorder", room: "jazz"),
                headers: recorderHeaders(startedBy: "%zz"))
            defer { recorder.shutdown() }
            #expect(refusal(seen) == 4026)
            // From anyone else, the header is not read.
            let (host, hostSeen) = try session(
                server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"),
                headers: recorderHeaders(startedBy: "%zz"))
            defer { host.shutdown() }
            #expect(snapshot(hostSeen) != nil)
        }
    }
}
