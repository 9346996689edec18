import AudioDevices
import ClientAudio
import Foundation
import Platform
import RoomClient
import RoomTesting
import ServerBenchmarks
import Synchronization
import Testing

@testable import AudioBenchmarks

/// What a member's media reported.
final class MediaRecord: Sendable {
    /// Every `heard` report, in order.
    let reports = Mutex<[[HeardSpeaker]]>([])
    /// The packets sent, from the last `stats`.
    let sent = Mutex(0)
}

/// A client in the room with its media, and what its media reported.
final class Member: Sendable {
    let mediaSlot: ClientMediaSlot
    let client: BenchClient
    let record = MediaRecord()

    init(_ server: BenchServer, _ identity: String, role: String, options: ClientMedia.Options) throws {
        let record = record
        let mediaSlot = ClientMediaSlot(
            options: options,
            onEvent: { event in
                switch event {
                case .heard(let heard): record.reports.withLock { $0.append(heard) }
                case .stats(_, _, let packets): record.sent.withLock { $0 = packets }
                default: break
                }
            },
            onFailure: { _ in })
        self.mediaSlot = mediaSlot
        client = try BenchClient(room: server, identity: identity, role: role, relay: nil) { mediaSlot.handle($0) }
        mediaSlot.attach(client.session)
    }

    var reports: [[HeardSpeaker]] { record.reports.withLock { $0 } }
    var sent: Int { record.sent.withLock { $0 } }

    /// Whether a report has `peer` talking.
    func hears(_ peer: String) -> Bool {
        reports.contains { $0.contains { $0.peer == peer && $0.talkingSince != nil } }
    }

    func close() {
        mediaSlot.close()
        client.close()
    }
}

/// Who a listener hears talking, from the levels in the packets it receives, through a real room server.
@Suite(.ownThread) struct HeardSpeakersTests {
    @Test func aListenerHearsWhoIsTalkingFromTheirPackets() throws {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }
        let listener = try Member(server, "eli", role: "audience", options: ClientMedia.Options(tracksTalkers: true))
        defer { listener.close() }
        // 400 Hz is eight whole cycles per 20 ms frame, so every frame has the same level.
        let speaker = try Member(
            server, "ana", role: "speaker", options: ClientMedia.Options(source: .device(.tone(hertz: 400))))
        try listener.client.join()
        try speaker.client.join()
        let unmuted = MonotonicClock.milliseconds()
        try speaker.client.unmute()

        // The tone (`tone:400`, 8,000 in sample units: 15 dBov, UI level 75) from its first packet on, named by
        // the server's media_sources.
        func talking() -> HeardSpeaker? {
            listener.reports.last?.first { $0.peer == "ana" && $0.talkingSince != nil }
        }
        #expect(waitUntil(limit: 10, every: 0.02) { talking() != nil })
        let ana = try #require(talking())
        #expect(ana.level == 75)
        #expect(try #require(ana.talkingSince) >= unmuted - 1_000)
        #expect(try #require(ana.talkingSince) <= MonotonicClock.milliseconds())

        // The speaker leaves: once the hold has passed, she is no longer talking.
        speaker.close()
        #expect(
            waitUntil(limit: 5, every: 0.02) {
                listener.reports.last?.first { $0.ssrc == ana.ssrc }?.talkingSince == nil
            })
    }

    /// A front end that draws no level bars (line mode) hears of talk starting and stopping, not of every level
    /// change: the same talker, louder and softer every 200 ms, makes several reports a second with levels and
    /// one without.
    @Test(arguments: [true, false]) func levelChangesAloneAreReportedOnlyWhenAskedFor(levels: Bool) throws {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }
        let listener = try Member(
            server, "eli", role: "audience", options: ClientMedia.Options(tracksTalkers: true, talkerLevels: levels))
        // 400 Hz at 0.3 of full scale (UI level 80) for 200 ms, then at 0.05 (UI level 55) for 200 ms: voice
        // throughout.
        let samples = (0..<19_200).map { index in
            let amplitude = index < 9_600 ? 0.3 : 0.05
            return Int16((amplitude * 32_767 * sin(2 * Double.pi * 400 * Double(index) / 48_000)).rounded())
        }
        let speaker = try Member(
            server, "ana", role: "speaker", options: ClientMedia.Options(source: .samples(samples)))
        defer {
            speaker.close()
            listener.close()
        }
        try listener.client.join()
        try speaker.client.join()
        try speaker.client.unmute()
        #expect(waitUntil(limit: 10, every: 0.02) { listener.hears("ana") })
        let first = listener.reports.count
        MonotonicClock.sleep(microseconds: 1_200_000)
        let later = listener.reports.dropFirst(first)
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
        let speaker = try Member(
            server, "ana", role: "speaker",
            options: ClientMedia.Options(source: .device(.tone(hertz: 400)), initialSequence: 65_500))
        // Someone else is there from the start, so that the room and its key outlive the wrap.
        let early = try Member(server, "bo", role: "audience", options: ClientMedia.Options())
        try speaker.client.join()
        try early.client.join()
        try speaker.client.unmute()
        // 36 packets reach 65,535; the next ones are numbered from 0.
        #expect(waitUntil(limit: 10, every: 0.02) { speaker.sent > 100 })

        let listener = try Member(server, "eli", role: "audience", options: ClientMedia.Options(tracksTalkers: true))
        defer {
            listener.close()
            early.close()
            speaker.close()
        }
        try listener.client.join()
        #expect(waitUntil(limit: 5, every: 0.02) { listener.hears("ana") })
    }

}
