import AudioCore
import Foundation
import RoomTesting
import StreamOutputs
import Testing

/// The three live outputs against the real servers from Debian (icecast2, nginx with its RTMP module, nginx
/// serving the HLS folder), each on a free loopback port, read back by ffmpeg.
@Suite(.serialized) struct LiveStreamTests {
    /// A 440 Hz tone fed to Icecast, HLS and RTMP at once is heard at 440 Hz from each, as a listener reads it.
    @Test(.timeLimit(.minutes(3))) func aToneIsHeardAt440HzOnEveryOutput() throws {
        // libshout waits with select(2): no test holding a thousand descriptors may run meanwhile.
        try DescriptorTurns.alone { try toneOnEveryOutput() }
    }

    func toneOnEveryOutput() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (icecast, icecastPort) = try icecastServer(in: folder.file("icecast"), password: "sourcepw")
        defer { icecast.stop() }
        let (rtmp, rtmpPort) = try rtmpServer(in: folder.file("rtmp"))
        defer { rtmp.stop() }
        let hlsFolder = folder.file("hls")
        let (web, webPort) = try hlsWebServer(in: folder.file("web"), root: hlsFolder)
        defer { web.stop() }

        let log = ReportLog()
        let icecastDestination = try StreamDestination.icecast(
            "icecast://source:sourcepw@127.0.0.1:\(icecastPort)/live.opus")
        let rtmpDestination = try StreamDestination.rtmp("rtmp://127.0.0.1:\(rtmpPort)/live/secretkey")
        let hlsDestination = try StreamDestination.hls(hlsFolder)
        let outputs = [icecastDestination, hlsDestination, rtmpDestination].map {
            StreamOutputs.start($0, report: log.record)
        }
        let feeder = ToneFeeder(outputs)
        defer {
            feeder.stop()
            for output in outputs { try? output.close() }
        }
        #expect(waitUntil(limit: 20) { outputs.allSatisfy { log.last($0.name) == .live } }, "\(log.all)")
        #expect(rtmpDestination.name == "rtmp://127.0.0.1:\(rtmpPort)/live")
        #expect(log.of(icecastDestination.name).map(\.sentence) == ["Streaming to \(icecastDestination.name) started."])

        let icecastHeard = readBack("http://127.0.0.1:\(icecastPort)/live.opus", seconds: 3) ?? []
        #expect(heardFrequency(icecastHeard) == 440, "Icecast: \(icecastHeard.count) samples")
        let rtmpHeard = readBack("rtmp://127.0.0.1:\(rtmpPort)/live/secretkey", seconds: 3) ?? []
        #expect(heardFrequency(rtmpHeard) == 440, "RTMP: \(rtmpHeard.count) samples")

        // Two segments of about 2 s, listed in a sliding playlist nginx serves.
        #expect(waitUntil(limit: 20) { segments(in: hlsFolder).count >= 3 })
        let playlist = (try? String(contentsOfFile: hlsFolder + "/live.m3u8", encoding: .utf8)) ?? ""
        #expect(playlist.contains("#EXT-X-TARGETDURATION:2"), "\(playlist)")
        let hlsHeard = readBack("http://127.0.0.1:\(webPort)/live.m3u8", seconds: 3) ?? []
        #expect(heardFrequency(hlsHeard) == 440, "HLS: \(hlsHeard.count) samples")

        feeder.stop()
        for output in outputs { try output.close() }
        // A clean end: the playlist says the stream ended, and every output said it once.
        let ended = (try? String(contentsOfFile: hlsFolder + "/live.m3u8", encoding: .utf8)) ?? ""
        #expect(ended.contains("#EXT-X-ENDLIST"))
        for output in outputs {
            #expect(log.of(output.name).map(\.state) == [.live, .closed], "\(log.of(output.name))")
        }
    }

    /// Icecast killed mid-stream is reported once, tried again, and streamed to again within 10 s of its return;
    /// then the RTMP server the same; meanwhile the other outputs stay live and audible.
    @Test(.timeLimit(.minutes(4))) func aDestinationKilledAndRestartedComesBackWithoutTouchingTheOthers() throws {
        // libshout waits with select(2): no test holding a thousand descriptors may run meanwhile.
        try DescriptorTurns.alone { try killedAndRestarted() }
    }

    func killedAndRestarted() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (icecast, icecastPort) = try icecastServer(in: folder.file("icecast"), password: "sourcepw")
        defer { icecast.stop() }
        let (rtmp, rtmpPort) = try rtmpServer(in: folder.file("rtmp"))
        defer { rtmp.stop() }
        let hlsFolder = folder.file("hls")

        let log = ReportLog()
        let icecastOutput = StreamOutputs.start(
            try .icecast("icecast://source:sourcepw@127.0.0.1:\(icecastPort)/live.opus"), report: log.record)
        let rtmpOutput = StreamOutputs.start(
            try .rtmp("rtmp://127.0.0.1:\(rtmpPort)/live/key"), report: log.record)
        let hlsOutput = StreamOutputs.start(try .hls(hlsFolder), report: log.record)
        let outputs = [icecastOutput, rtmpOutput, hlsOutput]
        let feeder = ToneFeeder(outputs)
        defer {
            feeder.stop()
            for output in outputs { try? output.close() }
        }
        #expect(
            waitUntil(limit: 20) { outputs.allSatisfy { log.last($0.name) == .live } },
            "\(log.all); icecast2 running: \(icecast.isRunning), RTMP's nginx running: \(rtmp.isRunning)")

        icecast.kill()
        #expect(waitUntil(limit: 10) { isRetrying(log.last(icecastOutput.name)) }, "\(log.all)")
        // While Icecast is down, RTMP is heard and HLS keeps adding segments.
        let segmentsBefore = segments(in: hlsFolder)
        #expect(heardFrequency(readBack("rtmp://127.0.0.1:\(rtmpPort)/live/key", seconds: 2) ?? []) == 440)
        #expect(waitUntil(limit: 10) { segments(in: hlsFolder).last != segmentsBefore.last })
        try icecast.start()
        #expect(waitUntil(limit: 10) { log.last(icecastOutput.name) == .live }, "\(log.of(icecastOutput.name))")
        #expect(log.of(icecastOutput.name).last?.sentence == "Streaming to \(icecastOutput.name) is back.")
        #expect(heardFrequency(readBack("http://127.0.0.1:\(icecastPort)/live.opus", seconds: 2) ?? []) == 440)

        rtmp.kill()
        #expect(waitUntil(limit: 15) { isRetrying(log.last(rtmpOutput.name)) }, "\(log.all)")
        try rtmp.start()
        #expect(waitUntil(limit: 10) { log.last(rtmpOutput.name) == .live }, "\(log.of(rtmpOutput.name))")
        #expect(heardFrequency(readBack("rtmp://127.0.0.1:\(rtmpPort)/live/key", seconds: 2) ?? []) == 440)

        // Each fault was said once when it happened and once when it healed; HLS never changed state.
        #expect(log.of(icecastOutput.name).map(\.state.kind) == ["live", "retrying", "live"])
        #expect(log.of(rtmpOutput.name).map(\.state.kind) == ["live", "retrying", "live"])
        #expect(log.of(hlsOutput.name).map(\.state.kind) == ["live"])
    }

    /// A wrong Icecast password is said once, in words, however often it is tried.
    @Test(.timeLimit(.minutes(2))) func aRefusedPasswordIsReportedOnceInWords() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let (icecast, port) = try icecastServer(in: folder.file("icecast"), password: "rightpw")
        defer { icecast.stop() }
        let log = ReportLog()
        let output = StreamOutputs.start(
            try .icecast("icecast://source:wrongpw@127.0.0.1:\(port)/live.opus"),
            backoff: StreamBackoff(first: .milliseconds(50), longest: .milliseconds(100)), report: log.record)
        let feeder = ToneFeeder([output])
        // Several attempts, each refused (Icecast logs every one).
        #expect(waitUntil(limit: 20) { refusedSources(in: folder.file("icecast")) >= 3 })
        feeder.stop()
        try output.close()
        #expect(
            log.of(output.name).map(\.sentence) == [
                "Streaming to 127.0.0.1:\(port)/live.opus stopped: the server refused the password.",
                "Streaming to 127.0.0.1:\(port)/live.opus ended.",
            ])
    }

    /// Nothing listens: the output says the server could not be reached, and closing it does not wait for it.
    @Test func anUnreachableRTMPServerIsReportedAndClosingDoesNotWait() throws {
        let port = try freeLoopbackPort()
        let log = ReportLog()
        let output = StreamOutputs.start(try .rtmp("rtmp://127.0.0.1:\(port)/live/key"), report: log.record)
        #expect(waitUntil(limit: 10) { isRetrying(log.last(output.name)) })
        try output.close()
        guard case .retrying(.unreachable) = log.of(output.name).first?.state else {
            Issue.record("\(log.all)")
            return
        }
        #expect(log.of(output.name).last?.state == .closed)
    }
}

private func isRetrying(_ state: StreamState?) -> Bool {
    if case .retrying = state { return true }
    return false
}

extension StreamState {
    /// The state without its reason, for comparing sequences.
    var kind: String {
        switch self {
        case .live: "live"
        case .retrying: "retrying"
        case .closed: "closed"
        }
    }
}

/// The finished segments in an HLS folder, in order.
func segments(in folder: String) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.filter { $0.hasSuffix(".ts") }.sorted {
        (Int($0.dropFirst(5).dropLast(3)) ?? 0) < (Int($1.dropFirst(5).dropLast(3)) ?? 0)
    }
}

/// How many source logins Icecast refused, from its access log.
func refusedSources(in folder: String) -> Int {
    let log = (try? String(contentsOfFile: folder + "/log/access.log", encoding: .utf8)) ?? ""
    return log.split(separator: "\n").filter { $0.contains("/live.opus") && $0.contains(" 401 ") }.count
}
