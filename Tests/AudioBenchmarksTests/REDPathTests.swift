import AudioDevices
import ClientAudio
import Platform
import RoomTesting
import ServerBenchmarks
import Testing

@testable import AudioBenchmarks

/// RFC 2198 redundancy through a real room server on loopback: a listener behind a lossy relay makes the speaker
/// repeat frames, which that listener rebuilds its losses from; a listener that does not take RED, in the same
/// room, keeps hearing every packet as plain Opus.
@Suite(.ownThread) struct REDPathTests {
    @Test func aLossyListenerGetsREDWhileAListenerWithoutItHearsThePrimaryAlone() throws {
        let server = try BenchServer(room: "bench", media: true)
        defer { server.shutdown() }
        let lossy = try MediaClientRig(
            room: server, identity: "lossy", role: "audience",
            relay: LinkImpairment(lossPercent: 10, baseDelayMilliseconds: 1, seed: 7), options: ClientMedia.Options())
        defer { lossy.close() }
        let older = try MediaClientRig(
            room: server, identity: "older", role: "audience", relay: nil,
            options: ClientMedia.Options(redundancy: false))
        defer { older.close() }
        let speaker = try MediaClientRig(
            room: server, identity: "speaker", role: "speaker", relay: nil,
            options: ClientMedia.Options(source: .device(.tone(hertz: 440))))
        defer { speaker.close() }
        for rig in [lossy, older, speaker] { try rig.client.join() }
        try speaker.client.unmute()
        for rig in [lossy, older, speaker] { try rig.waitForPath() }

        // The lossy listener's reports reach the speaker within a second or two: its packets then repeat the
        // frame before, and the lossy listener's lost packets come back from the next ones.
        #expect(waitUntil(limit: 15, every: 0.02) { (lossy.lastStats?.recoveredByRED ?? 0) >= 10 })
        let before = try #require(older.lastStats)
        // Two more seconds of RED packets: the listener that does not take RED got every one, as plain Opus (its
        // receiver drops any other payload type), and rebuilt nothing from redundancy.
        #expect(waitUntil(limit: 10, every: 0.02) { (older.lastStats?.received ?? 0) >= before.received + 100 })
        let after = try #require(older.lastStats)
        #expect(after.lost == before.lost)
        #expect(after.recoveredByRED == 0)
    }
}
