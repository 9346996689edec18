import AudioCore
import Foundation
import RoomTesting
import Testing

/// A real recording (`clubroom record` in a room of tone bots) replayed with `clubroom replay --plain`: the
/// replay says who spoke when, as the record has it, and plays the whole file.
@Suite(.ownThread, .serialized) struct ReplayRecordingTests {
    @Test func aRecordingReplaysWhoSpokeWhenAndAllItsAudio() throws {
        let room = try TestServer(name: "replay")
        let ana = try room.bot("ana", role: "host", ["--tone", "440"])
        #expect(ana.waitFor("\"event\":\"joined\""))
        let bea = try room.bot("bea", role: "audience", ["--tone", "1320"])
        #expect(bea.waitFor("\"event\":\"joined\""))
        let out = room.path("stage.opus")
        let recorder = try RecordingEndToEndTests.recorder(room, out: out)
        #expect(recorder.waitFor("Recording stage to", inErrors: true), "\(recorder.standardError)")
        usleep(1_000_000)
        bea.send(#"{"cmd":"chat","text":"hello"}"#)
        usleep(500_000)
        ana.send(#"{"cmd":"set_role","peer":"bea","role":"speaker"}"#)
        #expect(bea.waitFor("\"event\":\"role_changed\""))
        usleep(1_500_000)
        bea.send(#"{"cmd":"mute","on":true}"#)
        usleep(1_000_000)
        recorder.terminate(seconds: 20)
        RunningProcess.finish([ana, bea])
        _ = room.stop()
        #expect(recorder.process.terminationStatus == 0, "\(recorder.standardError)")

        let heard = room.path("heard.wav")
        let replay = try runClubroom(["replay", out, "--plain", "--output", "record:" + heard], seconds: 60)
        #expect(replay.status == 0, "\(replay.standardError)")
        #expect(replay.standardError == "")
        let lines = replay.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Replaying stage (recorded ") == true, "\(lines)")
        #expect(lines.contains("On the stage: ana (host)."), "\(lines)")
        #expect(lines.contains("1 listening."), "\(lines)")
        // Each said once, in the order it happened; times as the record has them.
        let told = lines.filter { $0.hasPrefix("[") }
        func place(_ sentence: String) -> Int? { told.firstIndex { $0.hasSuffix("] " + sentence) } }
        let anaTalks = try #require(place("ana started talking."), "\(told)")
        let chat = try #require(place("bea said: hello"), "\(told)")
        let promoted = try #require(place("ana made bea a speaker."), "\(told)")
        let beaTalks = try #require(place("bea started talking."), "\(told)")
        #expect(anaTalks < chat && chat < promoted && promoted < beaTalks, "\(told)")
        #expect(told.last?.hasSuffix("] The recording ends.") == true, "\(told)")

        // The whole file was played: as many samples as opusdec decodes.
        let decoded = try RecordingEndToEndTests.decoded(out)
        let written = try WAVAudio.decode(Array(try Data(contentsOf: URL(fileURLWithPath: heard)))).samples
        #expect(!decoded.isEmpty)
        #expect(written.count == decoded.count)
    }
}
