import Foundation
import Testing

extension TestServer {
    /// `clubroom join --plain` as `identity` in `role`, with these devices.
    func join(_ identity: String, role: String, input: String, output: String) throws -> RunningProcess {
        try RunningProcess(
            [
                "join", url, "--token", try token(identity, role: role), "--plain", "--input", input, "--output",
                output,
            ], directory: directory)
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
        #expect(listener.waitFor("ana is speaking."))
        usleep(3_000_000)
        listener.finish()
        speaker.finish()
        _ = room.stop()
        // From the first sound on, not back from the end: the recording goes on, silent, while the listener
        // leaves, and leaving can take a while on a busy machine.
        let audio = try recording(room.path("heard.wav"), from: 0, to: 60)
        let start = try #require(
            audio.firstIndex { abs(Int($0)) > 1000 },
            "nothing heard in \(audio.count) samples; the listener printed:\n\(listener.standardOutput)")
        let heard = toneStrength(Array(audio[(start + 4800)...].prefix(72_000)), hertz: 440)
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
        #expect(listener.waitFor("ana is speaking."))
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

    @Test func aPromotedListenerOpensTheMicrophoneAndADemotedOneClosesIt() throws {
        let room = try TestServer(name: "join-promote")
        let host = try room.bot("hana", role: "host")
        #expect(host.waitFor("\"joined\""))
        // Each opening of this microphone fails loudly: one "No microphone" line per opening.
        let listener = try room.join(
            "eli", role: "audience", input: "wav:\(room.path("no-microphone.wav"))", output: "null")
        #expect(listener.waitFor("You joined stage as eli"))
        host.send("{\"cmd\":\"set_role\",\"peer\":\"eli\",\"role\":\"speaker\"}")
        #expect(listener.waitFor("No microphone ("))
        host.send("{\"cmd\":\"set_role\",\"peer\":\"eli\",\"role\":\"audience\"}")
        #expect(host.waitFor("\"role_changed\",\"peer\":\"eli\",\"role\":\"audience\""))
        usleep(300_000)
        host.send("{\"cmd\":\"set_role\",\"peer\":\"eli\",\"role\":\"speaker\"}")
        #expect(eventually(seconds: 10) { lines(listener.standardOutput, containing: "No microphone").count == 2 })
        listener.finish()
        host.finish()
        _ = room.stop()
        #expect(lines(listener.standardOutput, containing: "No microphone").count == 2)
    }

    @Test func aSpeakersMicrophoneIsHeardOnceUnmuted() throws {
        let room = try TestServer(name: "join-speak")
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.join("ana", role: "speaker", input: "tone:440", output: "null")
        #expect(speaker.waitFor("You joined stage as ana"))
        speaker.send("/unmute")
        #expect(listener.waitFor("\"speakers\":[{\"peer\":\"ana\""))
        usleep(1_500_000)
        speaker.finish()
        listener.finish()
        _ = room.stop()
        let audio = try recording(room.path("heard.wav"), from: 0, to: 60)
        // From the first sound on: the media layer's encoder keeps DTX on for a live microphone, and Opus takes
        // a steady tone for background noise after a few seconds.
        let start = try #require(audio.firstIndex { abs(Int($0)) > 1000 })
        let heard = toneStrength(Array(audio[(start + 4800)...].prefix(48_000)), hertz: 440)
        #expect(heard.ratio > 1000, "440 Hz against its neighbours: \(heard.ratio)")
    }
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
