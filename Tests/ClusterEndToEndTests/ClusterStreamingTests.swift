import Foundation
import RoomTesting
import StrictJSON
import Testing

/// Streaming in a cluster: every node names the same destinations; a host on either node starts one, the room's
/// owner alone runs its recorder, and everyone on every node is told.
@Suite(.ownThread, .serialized) struct ClusterStreamingTests {
    /// The command lines of the recorders running now for room stage's stream to tv.
    func streamChildren() -> [String] {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return pids.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
            return line.contains("--destination-file") && line.contains("/stage-tv.destination") ? line : nil
        }
    }

    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"), .timeLimit(.minutes(2)))
    func aHostOnEitherNodeStreamsAndTheOwnerAloneRunsTheRecorder() throws {
        let hls = TemporaryDirectory()
        defer { hls.remove() }
        let cluster = try TestCluster(nodes: 2, nodeArguments: ["--stream", "tv=hls:" + hls.path])
        let host = try cluster.bot("hana", role: "host", node: 0)
        let joined = try host.wait(for: "joined")
        #expect(joined["stream_destinations"] == .array([.string("tv")]), "\(joined)")
        let other = try cluster.bot("mo", role: "host", node: 1)
        try other.wait(for: "joined")
        let listener = try cluster.bot("ana", role: "audience", node: 1)
        try listener.wait(for: "joined")

        other.send(#"{"cmd":"start_stream","to":"tv","id":"s"}"#)
        for bot in [host, other, listener] {
            let event = try bot.wait(for: "streaming", timeout: 15)
            #expect(event["to"] == .array([.string("tv")]), "\(event)")
            #expect(event["by"] == .string("mo"), "\(event)")
        }
        #expect(
            waitUntil(limit: 20) { FileManager.default.fileExists(atPath: hls.path + "/live.m3u8") },
            "no playlist in \(hls.path)")
        // One recorder for the stream, on one node.
        #expect(streamChildren().count == 1, "\(streamChildren())")

        host.send(#"{"cmd":"stop_stream","to":"tv"}"#)
        for bot in [host, other, listener] {
            let event = try bot.wait(for: "streaming", timeout: 15) { $0["to"] == .array([]) }
            #expect(event["by"] == .string("hana"), "\(event)")
            #expect(bot.sequence(of: ["streaming"]).count == 2, "\(bot.identity): \(bot.sequence(of: ["streaming"]))")
        }
        #expect(waitUntil(limit: 20) { streamChildren().isEmpty }, "\(streamChildren())")
    }

    /// A recorder the owner gives up (it keeps failing at once) is told to the hosts on every node, not only to
    /// those on the owner: the sentence goes through the room, as a stream given up does.
    @Test(.enabled(if: clusterTestsEnabled, "needs redis-server and 127.0.0.2-4"), .timeLimit(.minutes(2)))
    func aRecorderGivenUpIsToldToTheHostsOnEveryNode() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let failer = folder.file("failer.sh")
        try writeScript("#!/bin/sh\nexit 1\n", to: failer)
        let cluster = try TestCluster(nodes: 2, nodeArguments: ["--recorder", failer])
        let host = try cluster.bot("hana", role: "host", node: 0)
        try host.wait(for: "joined")
        let other = try cluster.bot("mo", role: "host", node: 1)
        try other.wait(for: "joined")
        let listener = try cluster.bot("ana", role: "audience", node: 1)
        try listener.wait(for: "joined")

        other.send(#"{"cmd":"start_recording"}"#)
        let sentence = "The recorder keeps failing at once (it exited with status 1); the recording stopped."
        for bot in [host, other] {
            let told = try bot.wait(for: "error", timeout: 20) { $0["code"] == .string("recording") }
            #expect(told["message"] == .string(sentence), "\(bot.identity): \(told)")
        }
        #expect(!listener.events.contains { $0["code"] == .string("recording") }, "\(listener.events)")
    }
}
