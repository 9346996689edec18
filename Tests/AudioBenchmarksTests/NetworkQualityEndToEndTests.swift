import AudioCore
import ClientAudio
import Dispatch
import Platform
import RoomCore
import RoomTesting
import ServerBenchmarks
import Testing

@testable import AudioBenchmarks

/// The end-to-end check of the network quality indicator: a listener behind a relay that starts losing
/// the speaker's packets gets a score of 2 or less on the host's side within 5 s, and 4 or 5 again within 5 s of
/// the loss stopping. Real server, real clients (a speaking host, a listener), real reports, over loopback.
@Suite(.ownThread) struct NetworkQualityEndToEndTests {
    /// Waits up to `seconds` for the host to have been sent a score of the listener that `accepts` takes;
    /// returns it, with how long it took (for the message), or nil.
    func waitForScore(
        of peer: PeerID, at host: BenchClient, after count: Int, seconds: Double, _ accepts: (Int) -> Bool
    ) -> (score: PeerQuality, waited: Double)? {
        let start = MonotonicClock.microseconds()
        while Double(MonotonicClock.microseconds() - start) < seconds * 1_000_000 {
            if let found = host.qualities.dropFirst(count).last(where: { $0.peer == peer && accepts($0.score) }) {
                return (found, Double(MonotonicClock.microseconds() - start) / 1_000_000)
            }
            MonotonicClock.sleep(microseconds: 50_000)
        }
        return nil
    }

    @Test func aLossyListenerIsPoorOnTheHostsSideAndRecovers() throws {
        let room = try BenchServer(room: "quality", media: true)
        defer { room.shutdown() }
        let microphone = SpeechFeed(signal: PathQualityTests.loudVoice(seconds: 40))
        let clean = LinkImpairment(lossPercent: 0, baseDelayMilliseconds: 1, jitterMilliseconds: 0, seed: 5)
        let listener = try MediaClientRig(
            room: room, identity: "listener", role: "audience", relay: clean, options: ClientMedia.Options())
        defer { listener.close() }
        let host = try MediaClientRig(
            room: room, identity: "host", role: "host", relay: nil,
            options: ClientMedia.Options(source: .live(AudioFeed(capture: { microphone.fill($0) }))))
        defer { host.close() }
        try listener.client.join()
        try host.client.join()
        try host.client.unmute()
        try listener.waitForPath()
        try host.waitForPath()
        microphone.start()

        // A clean start: the listener's score reaches the host (an audience member's goes to hosts).
        let good = waitForScore(of: "listener", at: host.client, after: 0, seconds: 10) { $0 >= 4 }
        #expect(good != nil, "the host was sent \(String(describing: host.client.qualities))")

        // The relay loses 30% of what the server sends the listener.
        let relay = try #require(listener.client.relay)
        var lossy = clean
        lossy.lossPercent = 30
        var sent = host.client.qualities.count
        relay.change(to: lossy)
        let poor = waitForScore(of: "listener", at: host.client, after: sent, seconds: 5) { $0 <= 2 }
        #expect(poor != nil, "the host was sent \(String(describing: Array(host.client.qualities.dropFirst(sent))))")
        if let poor {
            print("network quality: poor (\(poor.score)) \(poor.waited) s after the loss began")
            #expect(poor.score.lossPercent >= 7)
        }

        sent = host.client.qualities.count
        relay.change(to: clean)
        let recovered = waitForScore(of: "listener", at: host.client, after: sent, seconds: 5) { $0 >= 4 }
        #expect(
            recovered != nil, "the host was sent \(String(describing: Array(host.client.qualities.dropFirst(sent))))")
        if let recovered {
            print("network quality: recovered (\(recovered.score)) \(recovered.waited) s after the loss stopped")
        }
        // The listener was told of its own connection too.
        #expect(listener.client.qualities.contains { $0.peer == "listener" && $0.score <= 2 })
    }
}
