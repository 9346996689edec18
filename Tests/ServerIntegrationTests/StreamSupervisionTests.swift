import Foundation
import RoomClient
import RoomCore
import RoomProtocol
import RoomTesting
import RoomTransport
import Testing
import WebSocket

/// The server runs one recorder per room and destination when a host asks (`serve --stream NAME=URL`), the real
/// `clubroom record` with `--destination-file`: everyone is told, the hosts hear how the stream goes, the address
/// is in no child's arguments and in no message, and stopping it ends the child and removes its files. An HLS
/// destination needs no server of its own: the recorder writes the playlist into a folder.
@Suite(.ownThread, .serialized) struct StreamSupervisionTests {
    func streamingEvent(_ seen: SessionRecorder, live: Bool) -> WireEvent? {
        let event = seen.wait(timeout: 20) {
            if case .message(let message) = $0, case .streaming(let state, _, _) = message.event {
                return (state != nil) == live
            }
            return false
        }
        guard case .message(let message)? = event else { return nil }
        return message.event
    }

    /// The command lines of the processes whose arguments hold `word` (other tests' servers run recorders too).
    func commandLines(containing word: String) -> [String] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return pids.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            return line.contains(word) ? line : nil
        }
    }

    @Test(.timeLimit(.minutes(1))) func aHostStreamsTheRoomToADestinationOfTheServersAndStopsIt() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let hls = folder.path + "/tv"
        try FileManager.default.createDirectory(atPath: hls, withIntermediateDirectories: true)
        let server = try ServerProcess(extraArguments: ["--stream", "tv=hls:" + hls])
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        let (listener, listenerSeen) = try session(
            server, room: "jazz", token: try server.token("eli", role: "audience", room: "jazz"))
        defer { listener.shutdown() }
        _ = host.send(.startStream("tv"), id: .integer(1))
        for seen in [hostSeen, listenerSeen] {
            guard case .streaming(let state?, let by, _)? = streamingEvent(seen, live: true) else {
                Issue.record("no stream started; server log: \(server.log.all)")
                return
            }
            #expect(state.to == ["tv"])
            #expect(by == "ana")
        }
        // The child reads its link and destination from files: neither is in its arguments.
        #expect(
            waitUntil(limit: 20, every: 0.05) {
                !commandLines(containing: server.dataDirectory + "/streams/jazz-tv.destination").isEmpty
            })
        for line in commandLines(containing: server.dataDirectory + "/streams/jazz-tv.destination") {
            #expect(!line.contains(hls), "\(line)")
            #expect(!line.contains("#invite="), "\(line)")
            #expect(line.contains("record --link-file"), "\(line)")
        }
        // The recorder's report of its stream reaches the host as a notice, by the destination's name.
        let told = hostSeen.wait(timeout: 20) {
            if case .message(let message) = $0, case .error(.stream, let text, nil) = message.event {
                return text == "Streaming to tv started."
            }
            return false
        }
        #expect(told != nil, "the host was not told; server log: \(server.log.all)")
        #expect(
            waitUntil(limit: 20, every: 0.05) { FileManager.default.fileExists(atPath: hls + "/live.m3u8") },
            "no playlist in \(hls)")
        // The listener is told nothing but the event: no notice, and never the address.
        #expect(!listenerSeen.all.contains { "\($0)".contains(hls) })
        #expect(!hostSeen.all.contains { "\($0)".contains(hls) })
        _ = host.send(.stopStream("tv"), id: .integer(2))
        #expect(streamingEvent(listenerSeen, live: false) == .streaming(nil, by: "ana", reason: nil))
        #expect(
            waitUntil(limit: 20, every: 0.05) {
                commandLines(containing: server.dataDirectory + "/streams/jazz-tv.destination").isEmpty
            },
            "the child goes on")
        let streams = server.dataDirectory + "/streams"
        #expect(
            waitUntil(limit: 20, every: 0.05) {
                ((try? FileManager.default.contentsOfDirectory(atPath: streams)) ?? []).allSatisfy {
                    !$0.hasSuffix(".link") && !$0.hasSuffix(".destination")
                }
            })
    }

    @Test(.timeLimit(.minutes(1))) func aServerWithoutThatDestinationSaysWhichItHas() throws {
        let server = try ServerProcess(extraArguments: ["--stream", "tv=hls:/tmp/nowhere-tv"])
        defer { server.stopAndClean() }
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        _ = host.send(.startStream("radio"), id: .integer(1))
        let refused = hostSeen.wait(timeout: 10) {
            if case .message(let message) = $0, case .error = message.event { return true }
            return false
        }
        guard case .message(let message)? = refused else {
            Issue.record("no answer")
            return
        }
        #expect(
            message.event
                == .error(
                    code: .notFound, message: "this server has no stream named radio; it has: tv", id: .integer(1)))
    }

    /// A recorder's stream header that is not a destination's name closes its connection (4026); a recorder that
    /// names a stream the room does not stream to joins as a recording, shown to everyone.
    @Test(.timeLimit(.minutes(1))) func aRecordersStreamHeaderIsCheckedAndNeverHidesIt() throws {
        let server = try ServerProcess(extraArguments: ["--stream", "tv=hls:/tmp/nowhere-tv"])
        defer { server.stopAndClean() }
        var bad = HTTPHeaders()
        bad.add(ControlCodec.streamHeader, "../tv")
        let (refused, refusedSeen) = try session(
            server, room: "jazz", token: try server.token("rec", role: "recorder", room: "jazz"), headers: bad)
        defer { refused.shutdown() }
        #expect(refusal(refusedSeen) == 4026)
        let (host, hostSeen) = try session(
            server, room: "jazz", token: try server.token("ana", role: "host", room: "jazz"))
        defer { host.shutdown() }
        #expect(snapshot(hostSeen) != nil)
        var named = HTTPHeaders()
        named.add(ControlCodec.streamHeader, "tv")
        let (recorder, recorderSeen) = try session(
            server, room: "jazz", token: try server.token("stream-tv", role: "recorder", room: "jazz"), headers: named)
        defer { recorder.shutdown() }
        #expect(snapshot(recorderSeen) != nil)
        let event = hostSeen.wait(timeout: 10) {
            if case .message(let message) = $0, case .recording = message.event { return true }
            return false
        }
        guard case .message(let message)? = event, case .recording(let state?, nil, nil) = message.event else {
            Issue.record("the recorder was not shown as a recording: \(String(describing: event))")
            return
        }
        #expect(state.by == "stream-tv")
    }
}
