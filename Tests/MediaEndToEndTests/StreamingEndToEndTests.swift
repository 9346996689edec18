import Foundation
import RoomTesting
import Testing

/// `clubroom record` streaming a room of a tone bot to icecast2, nginx-rtmp and an HLS folder nginx serves, all
/// at once beside the file; each stream read back by ffmpeg.
@Suite(.ownThread, .serialized) struct StreamingEndToEndTests {
    @Test(.timeLimit(.minutes(3))) func aBotsToneIsHeardAt440HzOnEveryStreamAndInTheFile() throws {
        let rig = try StreamRig(name: "stream")
        defer { rig.close() }
        let (room, ana, out, recorder) = (rig.room, rig.ana, rig.out, rig.recorder)
        #expect(rig.anaJoined)
        #expect(recorder.waitFor("Recording stage to", inErrors: true), "\(recorder.standardError)")
        let started = [rig.icecastName, rig.hlsName, rig.rtmpName].map { "Streaming to \($0) started." }
        for sentence in started {
            #expect(recorder.waitFor(sentence, inErrors: true, seconds: 20), "\(recorder.standardError)")
        }
        #expect(!recorder.standardError.contains("sourcepw") && !recorder.standardError.contains("stagekey"))

        let icecastHeard = readBack(rig.icecastURL, seconds: 3) ?? []
        #expect(heardFrequency(icecastHeard) == 440, "Icecast: \(icecastHeard.count) samples")
        let rtmpHeard = readBack(rig.rtmpURL, seconds: 3) ?? []
        #expect(heardFrequency(rtmpHeard) == 440, "RTMP: \(rtmpHeard.count) samples")
        #expect(StreamRig.segmentsWritten(in: rig.hls))
        let hlsHeard = readBack(rig.hlsURL, seconds: 3) ?? []
        #expect(heardFrequency(hlsHeard) == 440, "HLS: \(hlsHeard.count) samples")

        recorder.terminate(seconds: 20)
        ana.finish()
        _ = room.stop()
        #expect(recorder.process.terminationStatus == 0, "\(recorder.standardError)")
        for sentence in started {
            #expect(recorder.standardError.contains(sentence.replacingOccurrences(of: "started.", with: "ended.")))
        }
        let file = try RecordingEndToEndTests.decoded(out)
        #expect(heardFrequency(file) == 440, "the file: \(file.count) samples")
    }

    /// Without `--out` the room goes out live alone: the HLS stream carries the tone, and the recorder writes no
    /// Ogg Opus file and no record, neither in its working folder nor beside the stream.
    @Test(.timeLimit(.minutes(3))) func aStreamWithoutOutWritesNoFileAndNoRecord() throws {
        let room = try TestServer(name: "stream-only")
        let hls = room.path("hls")
        let (web, webPort) = try hlsWebServer(in: room.path("web"), root: hls)
        defer { web.stop() }
        func kept() -> [String] {
            let folders = [room.directory.path, hls]
            return folders.flatMap { folder in
                ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
                    $0.hasSuffix(".opus") || $0.hasSuffix(".json") || $0.hasSuffix(".json.tmp")
                }.map { "\(folder)/\($0)" }
            }
        }

        let ana = try room.bot("ana", role: "host", ["--tone", "440"])
        #expect(ana.waitFor("\"event\":\"joined\""))
        let recorder = try RecordingEndToEndTests.recorder(room, out: nil, ["--hls", hls])
        defer { recorder.terminate(seconds: 20) }
        #expect(
            recorder.waitFor("Recording stage to its streams alone (no file, no record).", inErrors: true),
            "\(recorder.standardError)")
        #expect(
            recorder.waitFor("Streaming to HLS in \(hls) started.", inErrors: true, seconds: 20),
            "\(recorder.standardError)")
        #expect(StreamRig.segmentsWritten(in: hls))
        let hlsHeard = readBack("http://127.0.0.1:\(webPort)/live.m3u8", seconds: 3) ?? []
        #expect(heardFrequency(hlsHeard) == 440, "HLS: \(hlsHeard.count) samples")

        recorder.terminate(seconds: 20)
        ana.finish()
        _ = room.stop()
        #expect(recorder.process.terminationStatus == 0, "\(recorder.standardError)")
        #expect(recorder.standardError.contains("Streaming to HLS in \(hls) ended."), "\(recorder.standardError)")
        #expect(recorder.standardError.contains("of stage (no file, no record); the recording ended because"))
        #expect(kept() == [])
    }

    @Test func aBadStreamIsRefusedBeforeJoiningWithoutItsPassword() throws {
        let room = try TestServer(name: "stream-bad")
        let recorder = try RecordingEndToEndTests.recorder(
            room, out: room.path("stage.opus"), ["--icecast", "icecast://source:secretpw@127.0.0.1/"])
        RecordingEndToEndTests.waitForExit(recorder)
        _ = room.stop()
        #expect(recorder.process.terminationStatus == 1)
        #expect(
            recorder.standardError
                == "clubroom record: --icecast: 127.0.0.1/ cannot be used: the mount is empty\n")
    }
}
