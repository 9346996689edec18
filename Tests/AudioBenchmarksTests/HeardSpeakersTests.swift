import ClientAudio
import Foundation
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

    /// A front end that draws no level bars (line mode) hears of talk starting and stopping, not of every level
    /// change: the same talker, louder and softer every 200 ms, makes several reports a second with levels and
    /// one without.
    @Test(arguments: [true, false]) func levelChangesAloneAreReportedOnlyWhenAskedFor(levels: Bool) throws {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }
        let reports = Mutex<[[HeardSpeaker]]>([])
        let listening = MediaLink(
            options: ClientMedia.Options(tracksTalkers: true, talkerLevels: levels),
            onEvent: { event in
                if case .heard(let heard) = event { reports.withLock { $0.append(heard) } }
            },
            onFailure: { _ in })
        let listener = try BenchClient(room: server, identity: "eli", role: "audience", relay: nil) {
            listening.handle($0)
        }
        listening.attach(listener.session)
        // 400 Hz at 0.3 of full scale (UI level 80) for 200 ms, then at 0.05 (UI level 55) for 200 ms: voice
        // throughout.
        let samples = (0..<19_200).map { index in
            let amplitude = index < 9_600 ? 0.3 : 0.05
            return Int16((amplitude * 32_767 * sin(2 * Double.pi * 400 * Double(index) / 48_000)).rounded())
        }
        let speaking = MediaLink(
            options: ClientMedia.Options(source: .samples(samples)), onFailure: { _ in })
        let speaker = try BenchClient(room: server, identity: "ana", role: "speaker", relay: nil) {
            speaking.handle($0)
        }
        speaking.attach(speaker.session)
        defer {
            speaking.close()
            speaker.close()
            listening.close()
            listener.close()
        }
        try listener.join()
        try speaker.join()
        try speaker.unmute()
        func talking() -> Bool { reports.withLock { $0 }.contains { $0.contains { $0.talkingSince != nil } } }
        #expect(waitFor(seconds: 10) { talking() })
        let first = reports.withLock { $0.count }
        MonotonicClock.sleep(microseconds: 1_200_000)
        let later = reports.withLock { $0 }.dropFirst(first)
        #expect(later.allSatisfy { $0.contains { $0.peer == "ana" && $0.talkingSince != nil } })
        if levels {
            #expect(later.count >= 4)
            #expect(Set(later.compactMap { $0.first { $0.peer == "ana" }?.level }).count >= 2)
        } else {
            #expect(later.isEmpty)
        }
    }

    /// Someone who joins after a speaker's sequence numbers wrapped hears them: SRTP's rollover counter of that
    /// stream is past 0 under the room's key by then, which a newcomer cannot guess, so the server gives the room
    /// a new key first (every stream starts again at 0 under it).
    @Test func aListenerWhoJoinsAfterTheSequenceWrappedHearsTheSpeaker() throws {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }
        let sent = Mutex(0)
        let speaking = MediaLink(
            options: ClientMedia.Options(source: .tone(hertz: 400), initialSequence: 65_500),
            onEvent: { event in
                if case .stats(_, _, let packets) = event { sent.withLock { $0 = packets } }
            },
            onFailure: { _ in })
        let speaker = try BenchClient(room: server, identity: "ana", role: "speaker", relay: nil) {
            speaking.handle($0)
        }
        speaking.attach(speaker.session)
        // Someone else is there from the start, so that the room and its key outlive the wrap.
        let early = MediaLink(options: ClientMedia.Options(), onFailure: { _ in })
        let earlyListener = try BenchClient(room: server, identity: "bo", role: "audience", relay: nil) {
            early.handle($0)
        }
        early.attach(earlyListener.session)
        try speaker.join()
        try earlyListener.join()
        try speaker.unmute()
        // 36 packets reach 65,535; the next ones are numbered from 0.
        #expect(waitFor(seconds: 10) { sent.withLock { $0 } > 100 })

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
            early.close()
            earlyListener.close()
            speaking.close()
            speaker.close()
        }
        try listener.join()
        #expect(
            waitFor(seconds: 5) {
                reports.withLock { $0 }.contains { $0.contains { $0.peer == "ana" && $0.talkingSince != nil } }
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
