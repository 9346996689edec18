import AudioCore
import Foundation
import RoomTesting
import Testing

/// The recording's samples from `from` to `to` seconds.
func recording(_ path: String, from: Double, to: Double) throws -> [Int16] {
    guard let data = FileManager.default.contents(atPath: path) else { throw TestFailure("no recording at \(path)") }
    let audio = try WAVAudio.decode(Array(data))
    #expect(audio.sampleRate == 48_000)
    #expect(audio.channelCount == 1)
    let start = min(audio.samples.count, Int(from * 48_000))
    let end = min(audio.samples.count, Int(to * 48_000))
    return Array(audio.samples[start..<end])
}

/// The tone's power against its neighbours': large when the tone is there, and the RMS for silence.
func toneStrength(_ samples: [Int16], hertz: Double) -> (ratio: Double, rms: Double) {
    let tone = ToneAnalysis.power(of: samples, frequency: hertz)
    let around = max(
        ToneAnalysis.power(of: samples, frequency: hertz * 0.7),
        ToneAnalysis.power(of: samples, frequency: hertz * 1.4), 1e-9)
    return (tone / around, ToneAnalysis.rms(of: samples))
}

/// The tone in `audio` from its first sound on (past the first 100 ms, where the jitter buffer fills), over at
/// most `samples`; nil when nothing louder than 1000 is in it. From the first sound, not back from the end: a
/// recording goes on, silent, while its listener leaves, and leaving can take a while on a busy machine.
func toneFromFirstSound(_ audio: [Int16], hertz: Double, samples: Int) -> (ratio: Double, rms: Double)? {
    guard let start = audio.firstIndex(where: { abs(Int($0)) > 1000 }) else { return nil }
    return toneStrength(Array(audio.dropFirst(start + 4800).prefix(samples)), hertz: hertz)
}

func counter(_ name: String, in log: String) -> Int {
    guard let range = log.range(of: "media counters:") else { return 0 }
    let line = log[range.upperBound...].prefix(while: { $0 != "\n" })
    for field in line.split(separator: " ") where field.hasPrefix(name + "=") {
        return Int(field.dropFirst(name.count + 1)) ?? 0
    }
    return 0
}

@Suite(.ownThread, .serialized) struct MediaEndToEndTests {
    @Test func aSpeakersToneIsHeardByAListener() throws {
        let room = try TestServer(name: "tone")
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        // The device spec join takes; the other tests use its short form, --tone.
        let speaker = try room.bot("ana", role: "speaker", ["--input", "tone:440"])
        #expect(listener.waitUntil(receivedAudio), "\(listener.standardOutput)")
        usleep(3_000_000)
        speaker.finish()
        listener.finish()
        let log = room.stop()
        #expect(listener.standardOutput.contains("{\"event\":\"media_path\",\"path\":\"udp\"}"))
        #expect(listener.standardOutput.contains("\"event\":\"speakers\""))
        #expect(listener.standardOutput.contains("\"speakers\":[{\"peer\":\"ana\""))
        let heard = toneStrength(try recording(room.path("heard.wav"), from: 1.5, to: 3.0), hertz: 440)
        #expect(heard.ratio > 1000, "440 Hz against its neighbours: \(heard.ratio)")
        // What the room said is for whoever recorded it.
        let mode = try FileManager.default.attributesOfItem(atPath: room.path("heard.wav"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(counter("rtp_forwarded", in: log) > 100)
        // The listener's flow was bound once, after it answered a consent nonce.
        #expect(counter("consent_checks", in: log) >= 1)
        // The bot sends from the start; the few packets before the server saw it unmute itself are dropped.
        #expect(counter("not_permitted", in: log) < 25)
    }

    @Test func anAudienceMemberSendingAudioIsNeverHeard() throws {
        let room = try TestServer(name: "audience")
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let intruder = try room.bot("gus", role: "audience", ["--tone", "440"])
        #expect(intruder.waitFor("\"sent\":"))
        usleep(2_000_000)
        intruder.finish()
        listener.finish()
        let log = room.stop()
        let heard = toneStrength(try recording(room.path("heard.wav"), from: 0, to: 10), hertz: 440)
        #expect(heard.rms == 0, "the listener heard something: RMS \(heard.rms)")
        #expect(counter("not_permitted", in: log) > 50)
        #expect(counter("rtp_forwarded", in: log) == 0)
    }

    @Test func aDemotedSpeakerStopsBeingHeard() throws {
        let room = try TestServer(name: "demote")
        let host = try room.bot("hana", role: "host")
        #expect(host.waitFor("\"joined\""))
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav")])
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440"])
        #expect(listener.waitUntil(receivedAudio), "\(listener.standardOutput)")
        usleep(1_500_000)
        host.send("{\"cmd\":\"set_role\",\"peer\":\"ana\",\"role\":\"audience\"}")
        #expect(listener.waitFor("\"role_changed\",\"peer\":\"ana\""))
        let marker = listener.standardOutput.components(separatedBy: "\n").count
        usleep(2_000_000)
        speaker.finish()
        listener.finish()
        host.finish()
        let log = room.stop()
        let lines = listener.standardOutput.components(separatedBy: "\n")
        let statsAfter = lines.dropFirst(marker).filter { $0.contains("audio_stats") }
        #expect(statsAfter.count >= 2)
        let received = statsAfter.compactMap(receivedCount)
        // The speaker's packet count stops growing: no packet arrived in the last second.
        #expect(received.count >= 2 && received.suffix(2).first == received.last, "packets kept arriving: \(received)")
        #expect(counter("not_permitted", in: log) > 50)
        let audio = try recording(room.path("heard.wav"), from: 0, to: 30)
        let tail = Array(audio.suffix(48_000))
        #expect(toneStrength(tail, hertz: 440).rms == 0, "the last second still holds sound")
        #expect(toneStrength(Array(audio.prefix(48_000 * 2)), hertz: 440).ratio > 1000)
    }

    @Test func whenUDPIsBlockedMediaFallsBackToTheWebSocketAndIsStillHeard() throws {
        let room = try TestServer(name: "fallback")
        let listener = try room.bot("eli", role: "audience", ["--record", room.path("heard.wav"), "--block-udp"])
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440", "--block-udp"])
        #expect(listener.waitFor("{\"event\":\"media_path\",\"path\":\"websocket\"}"))
        #expect(speaker.waitFor("{\"event\":\"media_path\",\"path\":\"websocket\"}"))
        #expect(listener.waitUntil(receivedAudio), "\(listener.standardOutput)")
        usleep(2_000_000)
        speaker.finish()
        listener.finish()
        let log = room.stop()
        let audio = try recording(room.path("heard.wav"), from: 0, to: 30)
        #expect(toneStrength(Array(audio.suffix(48_000 * 2)), hertz: 440).ratio > 1000)
        #expect(counter("websocket_in", in: log) > 50)
        #expect(counter("websocket_out", in: log) > 50)
        #expect(!listener.standardOutput.contains("\"path\":\"udp\""))
    }

    /// The server's output on the wire decodes as RTP (the headers are in the clear) with no sequence errors.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tshark")))
    func theServersOutputDecodesAsRTPWithoutSequenceErrors() throws {
        let room = try TestServer(name: "pcap")
        let capture = room.path("media.pcap")
        let dumpcap = Process()
        dumpcap.executableURL = URL(fileURLWithPath: "/usr/bin/tshark")
        // tshark stops by itself after the duration: a signal does not always reach it through Foundation's Process.
        dumpcap.arguments = ["-i", "lo", "-f", "udp port \(room.mediaPort)", "-a", "duration:9", "-w", capture, "-q"]
        dumpcap.standardOutput = FileHandle.nullDevice
        dumpcap.standardError = FileHandle.nullDevice
        try dumpcap.run()
        usleep(1_500_000)
        let listener = try room.bot("eli", role: "audience")
        #expect(listener.waitFor("\"media_path\""))
        let speaker = try room.bot("ana", role: "speaker", ["--tone", "440"])
        #expect(listener.waitUntil(receivedAudio), "\(listener.standardOutput)")
        usleep(2_000_000)
        speaker.finish()
        listener.finish()
        _ = room.stop()
        let deadline = Date().addingTimeInterval(20)
        while dumpcap.isRunning, Date() < deadline { usleep(50_000) }
        if dumpcap.isRunning { kill(dumpcap.processIdentifier, SIGKILL) }
        dumpcap.waitUntilExit()
        guard FileManager.default.fileExists(atPath: capture) else {
            // No permission to capture here: nothing to check.
            return
        }
        let analysis = Process()
        analysis.executableURL = URL(fileURLWithPath: "/usr/bin/tshark")
        analysis.arguments = ["-r", capture, "-d", "udp.port==\(room.mediaPort),rtp", "-q", "-z", "rtp,streams"]
        let pipe = Pipe()
        analysis.standardOutput = pipe
        analysis.standardError = FileHandle.nullDevice
        try analysis.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        analysis.waitUntilExit()
        let streams = text.components(separatedBy: "\n").filter { $0.contains("RTPType-111") || $0.contains("opus") }
        // One stream in from the speaker, one out to the listener, with the same SSRC.
        #expect(streams.count == 2, "RTP streams: \(text)")
        for line in streams {
            let fields = line.split(separator: " ").map(String.init)
            guard let payload = fields.firstIndex(where: { $0.contains("RTPType-111") || $0.contains("opus") }),
                payload + 2 < fields.count
            else { continue }
            // Columns after the payload type: packets, lost, (lost %), deltas, jitter, then "X" when tshark
            // found a sequence or timestamp problem.
            #expect((Int(fields[payload + 1]) ?? 0) > 50, "too few packets: \(line)")
            #expect(fields[payload + 2] == "0", "lost packets: \(line)")
            #expect(fields.last != "X", "tshark flags a problem: \(line)")
        }
    }
}

func receivedCount(_ line: String) -> Int? {
    guard let range = line.range(of: "\"received\":") else { return nil }
    return Int(line[range.upperBound...].prefix(while: \.isNumber))
}
