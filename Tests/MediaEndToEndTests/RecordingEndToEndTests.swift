import AudioCore
import Foundation
import RoomTesting
import Testing

/// The recorder as a real process (`clubroom record`) in a room of tone bots on a real server.
@Suite(.ownThread, .serialized) struct RecordingEndToEndTests {
    /// The role a recorder's token carries.
    static let recorderRole = "recorder"

    /// Starts a recorder of `room` writing `out` (nil: no `--out`, for a recorder that only streams).
    static func recorder(_ room: TestServer, out: String?, _ options: [String] = []) throws -> RunningProcess {
        let tokenFile = room.path("recorder.token")
        try Data(try room.token("rec", role: recorderRole).utf8).write(to: URL(fileURLWithPath: tokenFile))
        return try RunningProcess(
            ["record", room.url, "--token-file", tokenFile] + (out.map { ["--out", $0] } ?? []) + options,
            directory: room.directory)
    }

    /// The file decoded by opusdec (48 kHz mono); empty when opusdec cannot read it.
    static func decoded(_ path: String) throws -> [Int16] {
        let wav = path + ".wav"
        defer { unlink(wav) }
        let result = spawnAndWait("opusdec", ["--quiet", "--rate", "48000", path, wav])
        guard result.status == 0, let data = FileManager.default.contents(atPath: wav) else { return [] }
        return try WAVAudio.decode(Array(data)).samples
    }

    static func record(_ path: String) throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw TestFailure("no readable record at \(path)") }
        return object
    }

    static func speaker(_ record: [String: Any], _ identity: String) -> (seconds: Double, turns: Int)? {
        let speakers = record["speakers"] as? [[String: Any]] ?? []
        guard let entry = speakers.first(where: { $0["identity"] as? String == identity }) else { return nil }
        return ((entry["seconds"] as? NSNumber)?.doubleValue ?? -1, (entry["turns"] as? NSNumber)?.intValue ?? -1)
    }

    /// Waits for the process to exit by itself, at most 20 s (then it is killed, and the test's checks fail).
    static func waitForExit(_ running: RunningProcess) {
        let deadline = Date().addingTimeInterval(20)
        while running.process.isRunning, Date() < deadline { usleep(20_000) }
        if running.process.isRunning { kill(running.process.processIdentifier, SIGKILL) }
        running.process.waitUntilExit()
        usleep(200_000)
    }

    static func window(_ audio: [Int16], from: Double, to: Double) -> [Int16] {
        let start = min(audio.count, Int(from * 48_000))
        let end = min(audio.count, Int(to * 48_000))
        return Array(audio[start..<end])
    }

    @Test func theFileHoldsBothTonesAndTheRecordWhoSpokeWhen() throws {
        let room = try TestServer(name: "record")
        let ana = try room.bot("ana", role: "host", ["--tone", "440"])
        #expect(ana.waitFor("\"event\":\"joined\""))
        let bea = try room.bot("bea", role: "audience", ["--tone", "1320"])
        #expect(bea.waitFor("\"event\":\"joined\""))
        let out = room.path("stage.opus")
        let recorder = try Self.recorder(room, out: out)
        #expect(recorder.waitFor("Recording stage to", inErrors: true), "\(recorder.standardError)")
        usleep(1_500_000)
        // Bea speaks for about three seconds: from her arrival on stage (she unmutes herself) to her mute.
        ana.send(#"{"cmd":"set_role","peer":"bea","role":"speaker"}"#)
        #expect(bea.waitFor("\"event\":\"role_changed\""))
        let talkStart = Date()
        usleep(3_000_000)
        bea.send(#"{"cmd":"mute","on":true}"#)
        let talk = Date().timeIntervalSince(talkStart)
        usleep(2_000_000)
        recorder.terminate(seconds: 20)
        RunningProcess.finish([ana, bea])
        _ = room.stop()
        #expect(recorder.process.terminationStatus == 0, "\(recorder.standardError)")
        #expect(recorder.standardError.contains("Recorded "), "\(recorder.standardError)")

        let info = spawnAndWait("opusinfo", [out])
        #expect(info.status == 0)
        #expect(info.output.contains("ROOM=stage"))
        let audio = try Self.decoded(out)
        let record = try Self.record(room.path("stage.json"))
        #expect(record["complete"] as? Bool == true)
        #expect(record["room"] as? String == "stage")
        let duration = Double((record["duration_ms"] as? NSNumber)?.int64Value ?? 0) / 1000
        #expect(abs(Double(audio.count) / 48_000 - duration) < 0.1, "decoded \(audio.count), record \(duration)")

        // Bea's turn, where the record puts it: both tones; after it, Ana's alone.
        let events = record["events"] as? [[String: Any]] ?? []
        let beaTalk = events.first { $0["kind"] as? String == "talk" && $0["peer"] as? String == "bea" }
        let beaStart = Double((beaTalk?["at_ms"] as? NSNumber)?.int64Value ?? 0) / 1000
        let beaEnd = Double((beaTalk?["end_ms"] as? NSNumber)?.int64Value ?? 0) / 1000
        #expect(beaEnd > beaStart + 2)
        let together = Self.window(audio, from: beaStart + 0.5, to: beaEnd - 0.5)
        #expect(toneStrength(together, hertz: 440).ratio > 100)
        #expect(toneStrength(together, hertz: 1320).ratio > 100)
        let alone = Self.window(audio, from: beaEnd + 0.5, to: duration - 0.3)
        #expect(toneStrength(alone, hertz: 440).ratio > 100)
        #expect(ToneAnalysis.power(of: alone, frequency: 1320) < ToneAnalysis.power(of: alone, frequency: 440) / 1000)

        // Speaking times within 10 % of the bots' talk: Bea's turn as the test timed it, Ana all along.
        let beaSpoke = try #require(Self.speaker(record, "bea"))
        #expect(beaSpoke.turns == 1)
        #expect(abs(beaSpoke.seconds - talk) <= talk * 0.1, "bea spoke \(beaSpoke.seconds) s, talked \(talk) s")
        let anaSpoke = try #require(Self.speaker(record, "ana"))
        let anaTalk = events.first { $0["kind"] as? String == "talk" && $0["peer"] as? String == "ana" }
        let anaStart = Double((anaTalk?["at_ms"] as? NSNumber)?.int64Value ?? 0) / 1000
        #expect(anaSpoke.turns == 1)
        #expect(abs(anaSpoke.seconds - (duration - anaStart)) <= (duration - anaStart) * 0.1)
        #expect(anaStart < 1, "Ana talked from the start; the record has her from \(anaStart) s")
        let stage = events.filter { $0["kind"] as? String == "stage" }.compactMap { $0["peer"] as? String }
        #expect(stage == ["ana"])
        let roleChange = events.first { $0["kind"] as? String == "role" }
        #expect(roleChange?["peer"] as? String == "bea")
        #expect(roleChange?["by"] as? String == "ana")
    }

    @Test func aRecorderKilledWithSIGKILLLeavesAPlayableFileAndARecord() throws {
        let room = try TestServer(name: "record-kill")
        let ana = try room.bot("ana", role: "host", ["--tone", "440"])
        #expect(ana.waitFor("\"event\":\"joined\""))
        let out = room.path("killed.opus")
        let recorder = try Self.recorder(room, out: out)
        #expect(recorder.waitFor("Recording stage to", inErrors: true), "\(recorder.standardError)")
        let seconds = 6.0
        usleep(UInt32(seconds * 1_000_000))
        kill(recorder.process.processIdentifier, SIGKILL)
        recorder.process.waitUntilExit()
        ana.finish()
        _ = room.stop()
        let audio = try Self.decoded(out)
        #expect(Double(audio.count) / 48_000 >= seconds - 2, "decoded \(Double(audio.count) / 48_000) s")
        let record = try Self.record(room.path("killed.json"))
        #expect(record["complete"] as? Bool == false)
        #expect(Self.speaker(record, "ana") != nil)
        let tail = Self.window(audio, from: 1, to: Double(audio.count) / 48_000)
        #expect(toneStrength(tail, hertz: 440).ratio > 100)
    }

    @Test func aPathThatCannotBeWrittenIsRefusedBeforeJoining() throws {
        let room = try TestServer(name: "record-path")
        let recorder = try Self.recorder(room, out: "/nonexistent-folder/stage.opus")
        Self.waitForExit(recorder)
        _ = room.stop()
        #expect(recorder.process.terminationStatus == 1)
        #expect(
            recorder.standardError
                == "clubroom record: --out /nonexistent-folder/stage.opus: the recording cannot be written, "
                + "because the folder /nonexistent-folder does not exist\n")
    }

    @Test func aWriteFailureMidwayStopsTheRecorderWithASentence() throws {
        let room = try TestServer(name: "record-fail")
        let ana = try room.bot("ana", role: "host")
        #expect(ana.waitFor("\"event\":\"joined\""))
        let folder = room.path("gone")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let recorder = try Self.recorder(room, out: folder + "/stage.opus")
        #expect(recorder.waitFor("Recording stage to", inErrors: true), "\(recorder.standardError)")
        try FileManager.default.removeItem(atPath: folder)
        Self.waitForExit(recorder)
        // Everyone is told the recording stopped, and why.
        #expect(ana.waitFor("\"event\":\"recording\",\"active\":false"), "\(ana.standardOutput)")
        ana.finish()
        _ = room.stop()
        #expect(
            ana.standardOutput.contains(
                "\"reason\":\"the recorder could not write \(folder)/stage.json: No such file or directory\""))
        #expect(recorder.process.terminationStatus == 1)
        let lines = recorder.standardError.split(separator: "\n").map(String.init)
        #expect(
            lines.last
                == "clubroom record: The recording stopped: the recorder could not write \(folder)/stage.json: "
                + "No such file or directory.")
    }
}
