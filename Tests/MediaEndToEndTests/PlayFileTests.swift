import AudioCore
import Foundation
import Testing

/// Makes a sound file with a program (sox, opusenc) and fails the test when it could not.
func makeSoundFile(_ arguments: [String], in room: TestServer) throws {
    let maker = Process()
    maker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    maker.arguments = arguments
    maker.currentDirectoryURL = URL(fileURLWithPath: room.path("."))
    try maker.run()
    maker.waitUntilExit()
    guard maker.terminationStatus == 0 else { throw TestFailure("\(arguments.joined(separator: " ")) failed") }
}

/// The frequency with the most power in the listener's recording, from its first sound on, over 1.5 s: scanned
/// from 100 Hz to 2 kHz in 10 Hz steps, then around the best in 0.5 Hz steps.
func heardFrequency(_ path: String) throws -> Double? {
    let audio = try recording(path, from: 0, to: 60)
    guard let start = audio.firstIndex(where: { abs(Int($0)) > 1000 }) else { return nil }
    let window = Array(audio.dropFirst(start + 4800).prefix(72_000))
    let coarse = ToneAnalysis.dominantFrequency(of: window, in: 100...2_000, step: 10)
    return ToneAnalysis.dominantFrequency(
        of: window, in: (coarse.frequency - 10)...(coarse.frequency + 10), step: 0.5
    ).frequency
}

/// `/play` through bots: a speaker bot with no microphone plays a file into the room, a listener bot records what
/// it hears; everyone is told of the ♪ (`playing_changed`). In the media suite, which runs one test at a time.
extension MediaEndToEndTests {
    @Test func aPlayedWAVIsHeardAt440HzAndEveryoneIsToldItPlays() throws {
        let room = try TestServer(name: "play-wav")
        // 44.1 kHz stereo: the player resamples and mixes down to 48 kHz mono.
        try makeSoundFile(
            [
                "sox", "-n", "-r", "44100", "-c", "2", "-b", "16", "jingle.wav", "synth", "8", "sine", "440", "gain",
                "-3",
            ], in: room)
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.bot("ana", role: "speaker")
        #expect(speaker.waitFor("\"media_path\""))
        speaker.send("{\"cmd\":\"mute\",\"on\":false}")
        #expect(listener.waitFor("\"mute_changed\",\"peer\":\"ana\",\"muted\":false"))
        speaker.send("{\"cmd\":\"play\",\"file\":\"\(room.path("jingle.wav"))\"}")
        #expect(speaker.waitFor("{\"event\":\"playing\",\"title\":\"jingle\",\"format\":\"WAV\",\"length_s\":8}"))
        #expect(listener.waitFor("{\"event\":\"playing_changed\",\"peer\":\"ana\",\"playing\":true}"))
        #expect(listener.waitUntil(receivedAudio), "\(listener.standardOutput)")
        usleep(3_000_000)
        speaker.send("{\"cmd\":\"stop_play\"}")
        #expect(listener.waitFor("{\"event\":\"playing_changed\",\"peer\":\"ana\",\"playing\":false}"))
        speaker.finish()
        listener.finish()
        _ = room.stop()
        let frequency = try heardFrequency(room.path("heard.wav"))
        #expect(frequency.map { abs($0 - 440) <= 2 } == true, "heard at \(String(describing: frequency)) Hz")
        let heard = toneFromFirstSound(
            try recording(room.path("heard.wav"), from: 0, to: 60), hertz: 440, samples: 48_000)
        #expect((heard?.ratio ?? 0) > 1000, "440 Hz against its neighbours: \(String(describing: heard))")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/opusenc")))
    func anOggOpusFilePlaysToItsEndWithItsTitle() throws {
        let room = try TestServer(name: "play-opus")
        try makeSoundFile(
            ["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", "tone.wav", "synth", "3", "sine", "440", "gain", "-3"],
            in: room)
        try makeSoundFile(["opusenc", "--quiet", "--title", "Station jingle", "tone.wav", "jingle.opus"], in: room)
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.bot("ana", role: "host")
        #expect(speaker.waitFor("\"media_path\""))
        speaker.send("{\"cmd\":\"mute\",\"on\":false}")
        #expect(listener.waitFor("\"mute_changed\",\"peer\":\"ana\",\"muted\":false"))
        speaker.send("{\"cmd\":\"play\",\"file\":\"\(room.path("jingle.opus"))\"}")
        #expect(
            speaker.waitFor(
                "{\"event\":\"playing\",\"title\":\"Station jingle\",\"format\":\"Ogg Opus\",\"length_s\":3}"))
        // Played to its end: the player says so and the ♪ goes.
        #expect(speaker.waitFor("{\"event\":\"play_ended\",\"title\":\"Station jingle\"}"))
        #expect(listener.waitFor("{\"event\":\"playing_changed\",\"peer\":\"ana\",\"playing\":false}"))
        speaker.finish()
        listener.finish()
        _ = room.stop()
        let frequency = try heardFrequency(room.path("heard.wav"))
        #expect(frequency.map { abs($0 - 440) <= 2 } == true, "heard at \(String(describing: frequency)) Hz")
    }

    @Test func aFileThatCannotBePlayedIsRefusedInOneSentenceAndAListenerCannotPlay() throws {
        let room = try TestServer(name: "play-refused")
        try "not a sound\n".write(toFile: room.path("notes.txt"), atomically: true, encoding: .utf8)
        try makeSoundFile(
            ["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", "tone.wav", "synth", "1", "sine", "440", "gain", "-3"],
            in: room)
        let listener = try room.bot("eli", role: "audience")
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.bot("ana", role: "speaker")
        #expect(speaker.waitFor("\"media_path\""))
        speaker.send("{\"cmd\":\"play\",\"file\":\"\(room.path("notes.txt"))\"}")
        #expect(
            speaker.waitFor(
                "{\"event\":\"error\",\"code\":\"unplayable\",\"message\":\"\(room.path("notes.txt")) is neither a WAV "
                    + "nor an Ogg Opus file.\"}"))
        speaker.send("{\"cmd\":\"play\",\"file\":\"\(room.path("missing.wav"))\"}")
        #expect(
            speaker.waitFor(
                "{\"event\":\"error\",\"code\":\"unplayable\",\"message\":\"\(room.path("missing.wav")) cannot be read.\"}"
            ))
        listener.send("{\"cmd\":\"play\",\"file\":\"\(room.path("tone.wav"))\"}")
        #expect(
            listener.waitFor(
                "{\"event\":\"error\",\"code\":\"forbidden\",\"message\":\"only the stage can play a file into the "
                    + "room; raise your hand to be invited up\"}"))
        speaker.finish()
        listener.finish()
        _ = room.stop()
        #expect(!speaker.standardOutput.contains("\"event\":\"playing\""))
        #expect(!listener.standardOutput.contains("\"event\":\"playing\""))
        #expect(!listener.standardOutput.contains("playing_changed"))
    }
}

/// `/play` in `clubroom join --plain`, the screen's command line in line mode.
extension MediaEndToEndTests {
    @Test func aSpeakerInLineModePlaysAFileThatAListenerHearsAt440Hz() throws {
        let room = try TestServer(name: "join-play")
        try makeSoundFile(
            [
                "sox", "-n", "-r", "48000", "-c", "1", "-b", "16", "jingle.wav", "synth", "8", "sine", "440", "gain",
                "-3",
            ],
            in: room)
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.join("ana", role: "speaker", input: "silence", output: "null")
        #expect(speaker.waitFor("You joined stage as ana"))
        speaker.send("/unmute")
        #expect(speaker.waitFor("You are live"))
        speaker.send("/play \(room.path("jingle.wav"))")
        #expect(speaker.waitFor("Playing \u{201C}jingle\u{201D} (0:08) into the room; /play stop ends it."))
        #expect(listener.waitFor("{\"event\":\"playing_changed\",\"peer\":\"ana\",\"playing\":true}"))
        usleep(2_500_000)
        speaker.send("/play")
        #expect(speaker.waitFor("Playing \u{201C}jingle\u{201D} 0:0"))
        speaker.send("/play stop")
        #expect(speaker.waitFor("Stopped \u{201C}jingle\u{201D}."))
        #expect(listener.waitFor("{\"event\":\"playing_changed\",\"peer\":\"ana\",\"playing\":false}"))
        speaker.send("/play \(room.path("missing.wav"))")
        #expect(speaker.waitFor("\(room.path("missing.wav")) cannot be read."))
        speaker.finish()
        listener.finish()
        _ = room.stop()
        let frequency = try heardFrequency(room.path("heard.wav"))
        #expect(frequency.map { abs($0 - 440) <= 2 } == true, "heard at \(String(describing: frequency)) Hz")
        #expect(lines(listener.standardOutput, containing: "playing_changed").count == 2)
    }
}
