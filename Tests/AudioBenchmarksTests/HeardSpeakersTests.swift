import ClientAudio
import Platform
import RoomClient
import ServerBenchmarks
import Synchronization
import Testing

@testable import AudioBenchmarks

/// Who a listener hears talking, from the levels in the packets it receives, through a real room server.
@Suite struct HeardSpeakersTests {
    @Test func aListenerHearsWhoIsTalkingFromTheirPackets() throws {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }
        let reports = Mutex<[[HeardSpeaker]]>([])
        let listening = MediaLink(
            options: ClientMedia.Options(tracksTalkers: true),
            onEvent: { event in
                if case .heard(let heard) = event { reports.withLock { $0.append(heard) } }
            },
            onFailure: { _ in })
        let listener = try BenchClient(room: server, identity: "eli", role: "audience", relay: nil) {
            listening.handle($0)
        }
        listening.attach(listener.session)
        defer {
            listening.close()
            listener.close()
        }
        // 400 Hz is eight whole cycles per 20 ms frame, so every frame has the same level.
        let speaking = MediaLink(options: ClientMedia.Options(source: .tone(hertz: 400)), onFailure: { _ in })
        let speaker = try BenchClient(room: server, identity: "ana", role: "speaker", relay: nil) {
            speaking.handle($0)
        }
        speaking.attach(speaker.session)
        try listener.join()
        try speaker.join()
        let unmuted = MonotonicClock.milliseconds()
        try speaker.unmute()

        // The tone (0.3 of full scale: 13 dBov, UI level 80) from its first packet on, named by the server's
        // media_sources.
        func talking() -> HeardSpeaker? {
            reports.withLock { $0 }.last?.first { $0.peer == "ana" && $0.talkingSince != nil }
        }
        #expect(waitFor(seconds: 10) { talking() != nil })
        let ana = try #require(talking())
        #expect(ana.level == 80)
        #expect(try #require(ana.talkingSince) >= unmuted - 1_000)
        #expect(try #require(ana.talkingSince) <= MonotonicClock.milliseconds())

        // The speaker leaves: once the hold has passed, she is no longer talking.
        speaking.close()
        speaker.close()
        #expect(
            waitFor(seconds: 5) {
                reports.withLock { $0 }.last?.first { $0.ssrc == ana.ssrc }?.talkingSince == nil
            })
    }

    func waitFor(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
        while MonotonicClock.milliseconds() < deadline {
            if condition() { return true }
            MonotonicClock.sleep(microseconds: 20_000)
        }
        return condition()
    }
}
