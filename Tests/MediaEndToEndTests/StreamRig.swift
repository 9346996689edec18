import Foundation
import RoomTesting
import Testing

/// A room of a tone bot (ana, 440 Hz) that a real `clubroom record` records to its file and streams at once to
/// icecast2, nginx-rtmp and an HLS folder nginx serves, each on a free loopback port: the rig the streaming tests
/// share. `close()` stops the recorder, then the servers.
final class StreamRig {
    let room: TestServer
    let icecast: ServerProcess
    let icecastPort: Int
    let rtmp: ServerProcess
    let rtmpPort: Int
    /// The HLS folder, and the web server that serves it.
    let hls: String
    let web: ServerProcess
    let webPort: Int
    let ana: RunningProcess
    /// Whether ana joined before the recorder started.
    let anaJoined: Bool
    /// The recorder's file.
    let out: String
    let recorder: RunningProcess

    /// What the recorder calls each destination in its sentences.
    var icecastName: String { "127.0.0.1:\(icecastPort)/stage.opus" }
    var rtmpName: String { "rtmp://127.0.0.1:\(rtmpPort)/live" }
    var hlsName: String { "HLS in \(hls)" }
    /// Where a listener reads each stream.
    var icecastURL: String { "http://127.0.0.1:\(icecastPort)/stage.opus" }
    var rtmpURL: String { "rtmp://127.0.0.1:\(rtmpPort)/live/stagekey" }
    var hlsURL: String { "http://127.0.0.1:\(webPort)/live.m3u8" }

    init(name: String) throws {
        room = try TestServer(name: name)
        var servers: [ServerProcess] = []
        var ready = false
        defer { if !ready { servers.forEach { $0.stop() } } }
        (icecast, icecastPort) = try icecastServer(in: room.path("icecast"), password: "sourcepw")
        servers.append(icecast)
        (rtmp, rtmpPort) = try rtmpServer(in: room.path("rtmp"))
        servers.append(rtmp)
        hls = room.path("hls")
        (web, webPort) = try hlsWebServer(in: room.path("web"), root: hls)
        servers.append(web)
        ana = try room.bot("ana", role: "host", ["--tone", "440"])
        anaJoined = ana.waitFor("\"event\":\"joined\"")
        out = room.path("stage.opus")
        recorder = try RecordingEndToEndTests.recorder(
            room, out: out,
            [
                "--icecast", "icecast://source:sourcepw@127.0.0.1:\(icecastPort)/stage.opus", "--hls", hls, "--rtmp",
                "rtmp://127.0.0.1:\(rtmpPort)/live/stagekey",
            ])
        ready = true
    }

    /// Stops the recorder (if it still runs) and the three servers.
    func close() {
        recorder.terminate(seconds: 20)
        web.stop()
        rtmp.stop()
        icecast.stop()
    }

    /// Whether the HLS folder `folder` holds at least three segments within 20 s.
    static func segmentsWritten(in folder: String) -> Bool {
        waitUntil(limit: 20) {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".ts") }.count
                >= 3
        }
    }
}
