import Foundation
import RoomTesting
import Testing

/// The record of a three-second room, written to the recording contract by hand.
private let recordText = """
    {"version":1,"room":"jazz","topic":"Encore","started":"2026-12-06T05:00:00Z","started_ms":1796000000000,
     "duration_ms":3000,"complete":true,
     "people":[{"peer":"p1","identity":"ana@example","name":"Ana","role":"host"},
               {"peer":"p2","identity":"bea@example","name":"Bea","role":"audience"},
               {"peer":"r1","identity":"recorder","name":"Recorder","role":"recorder"}],
     "events":[
      {"at_ms":0,"kind":"stage","peer":"p1","role":"host"},
      {"at_ms":500,"kind":"talk","peer":"p1","end_ms":1500},
      {"at_ms":1000,"kind":"chat","peer":"p2","name":"Bea","text":"hi"},
      {"at_ms":1500,"kind":"role","peer":"p2","role":"speaker","by":"p1"},
      {"at_ms":2000,"kind":"topic","topic":"Encore","by":"p1"},
      {"at_ms":2200,"kind":"join","peer":"p3","name":"Cy","role":"audience"},
      {"at_ms":2300,"kind":"talk","peer":"p2","end_ms":2800},
      {"at_ms":2600,"kind":"leave","peer":"p3"}],
     "speakers":[{"identity":"ana@example","name":"Ana","seconds":1.0,"turns":1}]}
    """

/// `clubroom replay`: the line mode's sentences, the audio it plays, and what it says of bad input.
@Suite(.serialized) struct ReplayCommandTests {
    /// A recording of `seconds` of tone in a fresh folder, with `record` beside it when given.
    private func recording(seconds: Double, record: String?) throws -> (folder: TemporaryDirectory, opus: String) {
        let folder = TemporaryDirectory()
        let opus = folder.file("jazz.opus")
        try RecordingFixture.toneOpus(at: opus, seconds: seconds)
        if let record { try RecordingFixture.writeRecord(record, besides: opus) }
        return (folder, opus)
    }

    @Test(.timeLimit(.minutes(1))) func plainSaysWhatHappenedAtItsTimes() throws {
        let (folder, opus) = try recording(seconds: 3, record: recordText)
        defer { folder.remove() }
        let result = try runClubroom(["replay", opus, "--plain", "--output", "null"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError == "")
        #expect(
            result.standardOutput == """
                Replaying jazz (recorded 2026-12-06T05:00:00Z), 00:03 long.
                On the stage: Ana (host).
                1 listening.
                [00:00] Ana started talking.
                [00:01] Bea said: hi
                [00:01] Ana made Bea a speaker.
                [00:02] Ana set the topic: "Encore".
                [00:02] Cy joined.
                [00:02] Bea started talking.
                [00:02] Cy left.
                [00:03] The recording ends.

                """)
    }

    /// `--output record:PATH` gets the whole recording: as many samples as the file holds.
    @Test(.timeLimit(.minutes(1))) func recordOutputGetsAudioOfTheFilesLength() throws {
        let (folder, opus) = try recording(seconds: 2, record: recordText)
        defer { folder.remove() }
        let wav = folder.file("heard.wav")
        let result = try runClubroom(["replay", opus, "--plain", "--output", "record:" + wav])
        #expect(result.status == 0, "\(result.standardError)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wav)))
        try #require(bytes.count >= 44)
        let dataSize = Int(bytes[40]) | Int(bytes[41]) << 8 | Int(bytes[42]) << 16 | Int(bytes[43]) << 24
        #expect(dataSize == 2 * 96_000)
        #expect(bytes.count == 44 + 2 * 96_000)
        // The tone is heard: the middle second is a 440 Hz sine.
        let samples = stride(from: 44 + 2 * 24_000, to: 44 + 2 * 72_000, by: 2).map {
            Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
        }
        let frequency = Signals.dominantFrequency(samples[...], sampleRate: 48_000)
        #expect(frequency == 440, "heard \(frequency) Hz")
    }

    @Test(.timeLimit(.minutes(1))) func aFileThatIsNotOggOpusIsRefusedInOneSentence() throws {
        let folder = TemporaryDirectory()
        defer { folder.remove() }
        let text = folder.file("notes.opus")
        try Data("not a recording\n".utf8).write(to: URL(fileURLWithPath: text))
        let result = try runClubroom(["replay", text, "--plain", "--output", "null"])
        #expect(result.status == 1)
        #expect(result.standardOutput == "")
        #expect(
            result.standardError == "clubroom replay: \(text) is not an Ogg Opus recording, so it cannot be replayed.\n"
        )
        let missing = try runClubroom(["replay", folder.file("gone.opus"), "--plain", "--output", "null"])
        #expect(missing.status == 1)
        #expect(missing.standardError == "clubroom replay: Cannot read \(folder.file("gone.opus")); check the path.\n")
    }

    @Test(.timeLimit(.minutes(1))) func withoutItsRecordTheAudioPlaysAlone() throws {
        let (folder, opus) = try recording(seconds: 1, record: nil)
        defer { folder.remove() }
        let result = try runClubroom(["replay", opus, "--plain", "--output", "null"])
        #expect(result.status == 0)
        #expect(
            result.standardError
                == "clubroom replay: There is no record beside the recording (\(folder.file("jazz.json"))), so the audio plays alone.\n"
        )
        #expect(result.standardOutput == "Replaying jazz, 00:01 long.\n[00:01] The recording ends.\n")
    }

    @Test(.timeLimit(.minutes(1))) func aDamagedRecordOrOneOfAnUnknownVersionIsSaidAndTheAudioPlaysAlone() throws {
        let (folder, opus) = try recording(seconds: 1, record: "{\"version\":1,\"room\":\"jazz\"")
        defer { folder.remove() }
        let json = folder.file("jazz.json")
        let damaged = try runClubroom(["replay", opus, "--plain", "--output", "null"])
        #expect(damaged.status == 0)
        #expect(
            damaged.standardError
                == "clubroom replay: The record \(json) is not JSON (JSON ends too early at byte 26), so the audio plays alone.\n"
        )
        #expect(damaged.standardOutput == "Replaying jazz, 00:01 long.\n[00:01] The recording ends.\n")
        try RecordingFixture.writeRecord(
            recordText.replacingOccurrences(of: "\"version\":1", with: "\"version\":2"), besides: opus)
        let newer = try runClubroom(["replay", opus, "--plain", "--output", "null"])
        #expect(newer.status == 0)
        #expect(
            newer.standardError
                == "clubroom replay: The record \(json) is of version 2, which this clubroom does not know (it reads version 1), so the audio plays alone.\n"
        )
        try RecordingFixture.writeRecord(
            recordText.replacingOccurrences(of: "\"at_ms\":500", with: "\"at_ms\":\"500\""), besides: opus)
        let broken = try runClubroom(["replay", opus, "--plain", "--output", "null"])
        #expect(
            broken.standardError
                == "clubroom replay: The record \(json) is damaged: events[1].at_ms should be a whole number, so the audio plays alone.\n"
        )
    }

    @Test(.timeLimit(.minutes(1))) func aRecordingCutShortPlaysAndSaysSo() throws {
        let cut = recordText.replacingOccurrences(of: "\"complete\":true", with: "\"complete\":false")
            .replacingOccurrences(of: "\"duration_ms\":3000", with: "\"duration_ms\":1000")
        let (folder, opus) = try recording(seconds: 1, record: cut)
        defer { folder.remove() }
        let result = try runClubroom(["replay", opus, "--plain", "--output", "null"])
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.prefix(2)) == [
                "Replaying jazz (recorded 2026-12-06T05:00:00Z), 00:01 long.",
                "The recording was cut short (the recorder stopped without closing it); it ends at 00:01.",
            ])
        #expect(lines.last == "[00:01] The recording ends.")
    }
}
