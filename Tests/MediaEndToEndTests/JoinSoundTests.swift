import Foundation
import Testing

extension TestServer {
    /// `clubroom join --plain` as `identity` in `role`, with these devices; `state` is its `XDG_STATE_HOME`
    /// (where the volumes are kept), one of the test's own directories by default.
    func join(
        _ identity: String, role: String, input: String, output: String, state: String? = nil
    ) throws -> RunningProcess {
        try RunningProcess(
            [
                "join", url, "--token", try token(identity, role: role), "--plain", "--input", input, "--output",
                output,
            ], directory: directory, environment: ["XDG_STATE_HOME": state ?? path("state-\(identity)")])
    }
}

/// The lines of `text` that contain `part`.
func lines(_ text: String, containing part: String) -> [Substring] {
    text.split(separator: "\n").filter { $0.contains(part) }
}

/// `clubroom join` with sound, against a real server and a speaking bot. In the media suite, which runs one test
/// at a time, so these real-time processes never compete with the bots' for the machine.
extension MediaEndToEndTests {
    @Test func aListenerInLineModeHearsTheSpeakersToneOnItsOutput() throws {
        let room = try TestServer(name: "join-tone")
        let listener = try room.join(
            "eli", role: "audience", input: "wav:\(room.path("no-microphone.wav"))",
            output: "record:\(room.path("heard.wav"))")
        #expect(listener.waitFor("You joined stage as eli"))
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440"])
        #expect(listener.waitFor("ana started speaking."))
        usleep(3_000_000)
        listener.finish()
        speaker.finish()
        _ = room.stop()
        let audio = try recording(room.path("heard.wav"), from: 0, to: 60)
        let heard = try #require(
            toneFromFirstSound(audio, hertz: 440, samples: 72_000),
            "nothing heard in \(audio.count) samples; the listener printed:\n\(listener.standardOutput)")
        #expect(heard.ratio > 1000, "440 Hz against its neighbours: \(heard.ratio)")
        #expect(lines(listener.standardOutput, containing: "No microphone").isEmpty)
    }

    @Test func anAudienceMemberNeverOpensTheMicrophoneButASpeakerDoes() throws {
        let room = try TestServer(name: "join-mic")
        // Opening this microphone fails loudly: a status line saying "No microphone".
        let missing = "wav:\(room.path("no-microphone.wav"))"
        let listener = try room.join("eli", role: "audience", input: missing, output: "null")
        let speaker = try room.join("ana", role: "speaker", input: missing, output: "null")
        #expect(listener.waitFor("You joined stage as eli"))
        #expect(speaker.waitFor("No microphone ("))
        usleep(1_000_000)
        listener.finish()
        speaker.finish()
        _ = room.stop()
        #expect(lines(listener.standardOutput, containing: "No microphone").isEmpty)
        #expect(lines(speaker.standardOutput, containing: "No microphone").count == 1)
        #expect(listener.process.terminationStatus == 0)
    }

    @Test func aMissingOutputDeviceIsSaidOnceAndTheSessionCarriesOn() throws {
        let room = try TestServer(name: "join-nopcm")
        let listener = try room.join("eli", role: "audience", input: "null", output: "clubroom_no_such_pcm")
        #expect(listener.waitFor("You joined stage as eli"))
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440"])
        #expect(listener.waitFor("ana started speaking."))
        usleep(500_000)
        listener.finish()
        speaker.finish()
        _ = room.stop()
        let said = lines(listener.standardOutput, containing: "No speaker")
        #expect(said.count == 1)
        #expect(
            said.first?.hasPrefix(
                "No speaker (“clubroom_no_such_pcm” not found); using “null”. Choose one with --output NAME") == true)
        #expect(listener.standardOutput.hasSuffix("You left the room.\n"))
        #expect(listener.process.terminationStatus == 0)
    }

    /// A promoted listener opens the microphone (which fails here, and says so); demoted and promoted again, it
    /// opens it again, and the same failure is not said a second time: device trouble is told once per change of
    /// the device's state, not on every role change.
    @Test func aPromotedListenerOpensTheMicrophoneAndItsFailureIsSaidOncePerChange() throws {
        let room = try TestServer(name: "join-promote")
        let host = try room.bot("hana", role: "host")
        #expect(host.waitFor("\"joined\""))
        let listener = try room.join(
            "eli", role: "audience", input: "wav:\(room.path("no-microphone.wav"))", output: "null")
        #expect(listener.waitFor("You joined stage as eli"))
        #expect(lines(listener.standardOutput, containing: "No microphone").isEmpty)
        host.send("{\"cmd\":\"set_role\",\"peer\":\"eli\",\"role\":\"speaker\"}")
        #expect(listener.waitFor("No microphone ("))
        host.send("{\"cmd\":\"set_role\",\"peer\":\"eli\",\"role\":\"audience\"}")
        #expect(host.waitFor("\"role_changed\",\"peer\":\"eli\",\"role\":\"audience\""))
        usleep(300_000)
        host.send("{\"cmd\":\"set_role\",\"peer\":\"eli\",\"role\":\"speaker\"}")
        #expect(
            eventually(seconds: 10) {
                lines(listener.standardOutput, containing: "You are on the stage now as speaker").count == 2
            },
            "\(listener.standardOutput)")
        usleep(1_000_000)
        listener.finish()
        host.finish()
        _ = room.stop()
        #expect(lines(listener.standardOutput, containing: "No microphone").count == 1)
    }

    @Test func aVolumeSetInOneSessionIsKeptAndPlaysTheSpeakerAtThatLevelInTheNext() throws {
        let room = try TestServer(name: "join-volume")
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440"])
        #expect(speaker.waitFor("\"media_path\""))
        let state = room.path("eli-state")
        let first = try room.join("eli", role: "audience", input: "null", output: "null", state: state)
        #expect(first.waitFor("You joined stage as eli"))
        first.send("/volume ana 50")
        #expect(first.waitFor("ana now sounds at 50 % to you."))
        first.finish()
        let kept = FileManager.default.contents(atPath: state + "/clubroom/volumes.json").flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        #expect(kept?["version"] as? Int == 1)
        #expect(kept?["volumes"] as? [String: Int] == ["ana": 50])

        // The next session at 50 %, beside a listener who never set a volume, hearing the same packets.
        let eli = try room.join(
            "eli", role: "audience", input: "null", output: "record:\(room.path("eli.wav"))", state: state)
        let ivo = try room.join("ivo", role: "audience", input: "null", output: "record:\(room.path("ivo.wav"))")
        #expect(eli.waitFor("You joined stage as eli"))
        #expect(ivo.waitFor("You joined stage as ivo"))
        eli.send("/volume ana")
        #expect(eli.waitFor("ana sounds at 50 % to you."))
        // Both play the tone for three seconds while still in the room. Measured from the first sound on, not
        // back from the end: the recording goes on, silent, while a listener leaves, and leaving can take a
        // while on a busy machine.
        let firstSound = { (samples: [Int16]) in samples.firstIndex { abs(Int($0)) > 1000 } }
        #expect(
            eventually(seconds: 30) {
                ["eli.wav", "ivo.wav"].allSatisfy { file in
                    let played = recordedSoFar(room.path(file))
                    return firstSound(played).map { played.count - $0 >= 3 * 48_000 } ?? false
                }
            })
        eli.finish()
        ivo.finish()
        speaker.finish()
        _ = room.stop()
        func steadyTone(_ file: String) throws -> (ratio: Double, rms: Double) {
            let audio = try recording(room.path(file), from: 0, to: 60)
            let start = try #require(firstSound(audio), "nothing heard in \(file)")
            // Half a second on, so the decoder and the jitter buffer have settled; two seconds of the tone.
            return toneStrength(Array(audio[(start + 24_000)...].prefix(96_000)), hertz: 440)
        }
        let quieter = try steadyTone("eli.wav")
        let full = try steadyTone("ivo.wav")
        #expect(full.ratio > 1000, "440 Hz against its neighbours: \(full.ratio)")
        #expect(quieter.ratio > 1000, "440 Hz against its neighbours: \(quieter.ratio)")
        // Same packets, same decoder: half the gain is half the amplitude, up to the jitter buffers' choices.
        #expect(abs(quieter.rms / full.rms - 0.5) < 0.01, "RMS \(quieter.rms) at 50 % against \(full.rms)")
    }

    @Test func anUnreadableVolumesFileIsOneLineAndIsLeftAsItWas() throws {
        let room = try TestServer(name: "join-badvolumes")
        let state = room.path("eli-state")
        try FileManager.default.createDirectory(atPath: state + "/clubroom", withIntermediateDirectories: true)
        let broken = Data("{\"version\": 1, \"volumes\": {\"ana\": 300}}".utf8)
        try broken.write(to: URL(fileURLWithPath: state + "/clubroom/volumes.json"))
        let host = try room.bot("ana", role: "host")
        #expect(host.waitFor("\"joined\""))
        let listener = try room.join("eli", role: "audience", input: "null", output: "null", state: state)
        #expect(listener.waitFor("You joined stage as eli"))
        listener.send("/volume ana 50")
        #expect(listener.waitFor("ana now sounds at 50 % to you."))
        listener.finish()
        host.finish()
        _ = room.stop()
        let said = lines(listener.standardOutput, containing: "Volumes start at 100 %")
        #expect(
            said == [
                "Volumes start at 100 % and are not saved this session: the volumes file \(state)/clubroom/volumes.json "
                    + "is not valid: the volume of \"ana\" is 300, outside 0 to 200; fix it, or delete it to start "
                    + "with every speaker at 100 %."
            ])
        #expect(FileManager.default.contents(atPath: state + "/clubroom/volumes.json") == broken)
        #expect(listener.process.terminationStatus == 0)
    }

    @Test func aSpeakersMicrophoneIsHeardOnceUnmuted() throws {
        let room = try TestServer(name: "join-speak")
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.join("ana", role: "speaker", input: "tone:440", output: "null")
        #expect(speaker.waitFor("You joined stage as ana"))
        speaker.send("/unmute")
        #expect(listener.waitFor("\"speakers\":[{\"peer\":\"ana\""))
        usleep(3_000_000)
        speaker.finish()
        listener.finish()
        _ = room.stop()
        let audio = try recording(room.path("heard.wav"), from: 0, to: 60)
        let start = try #require(audio.firstIndex { abs(Int($0)) > 1000 })
        let heard = toneStrength(Array(audio[(start + 4800)...].prefix(48_000)), hertz: 440)
        #expect(heard.ratio > 1000, "440 Hz against its neighbours: \(heard.ratio)")
        // A tone microphone is sent without DTX, so it is still heard two seconds on: with the room's default
        // settings Opus would have taken the steady tone for background noise after about a second.
        let later = toneStrength(Array(audio[(start + 96_000)...].prefix(24_000)), hertz: 440)
        #expect(later.ratio > 1000, "440 Hz two seconds on, against its neighbours: \(later.ratio)")
    }
}

/// The samples a `record:` loudspeaker has written so far: it writes a second at a time after a 44-byte header
/// whose sizes it fills in only when it closes.
func recordedSoFar(_ path: String) -> [Int16] {
    guard let data = FileManager.default.contents(atPath: path), data.count > 44 else { return [] }
    let bytes = data.dropFirst(44)
    return bytes.prefix(bytes.count / 2 * 2).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
}

/// Polls `condition` every 50 ms until it holds or `seconds` pass.
func eventually(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(50_000)
    }
    return condition()
}
