import AudioCore
import AudioDevices
import AudioEngine
import Foundation
import RoomAppRuntime
import RoomClient
import Synchronization

/// Mouth-to-ear through a real room server on loopback, with the product's client audio: each client is a
/// `RoomSession` with the room screen's sound (`RoomAudio`: device threads, rings, send pipeline and the
/// `ClientMedia` media thread with its jitter buffer, decoder and mixer). The speaker's microphone is a paced
/// virtual device playing clicks (``ClickMicrophone``), the listener's loudspeaker a paced virtual device that
/// finds them (``ClickLoudspeaker``); each click's delay is the time between entering the one and leaving the
/// other. Impaired runs put an ``ImpairingRelay`` between the listener and the server.
public enum PathLatencyBenchmark {
    /// The figures of one condition.
    public struct Result: Sendable, Equatable {
        /// Delays of the clicks found, in milliseconds, in the order sent.
        public var latencies: [Double]
        /// Clicks counted (those injected after each round's warm-up).
        public var clicksSent: Int
        /// The longest stretch of silence the listener heard while clicks were counted, in ms.
        public var longestGapMilliseconds: Double
        /// RTP packets the relay dropped and carried (0 without a relay).
        public var packetsDropped: Int
        public var packetsRelayed: Int

        /// The `fraction` quantile (0...1) of the delays, nearest rank; 0 with none.
        public func percentile(_ fraction: Double) -> Double { AudioPathBenchmarks.percentile(latencies, fraction) }

        /// Clicks that never came out.
        public var clicksMissing: Int { clicksSent - latencies.count }
    }

    /// Clicks after this long from the first one heard are counted, once the jitter buffer has settled.
    static let warmUp: Int64 = 1_000_000

    /// Runs `rounds` fresh rooms (a new server, new clients, new device and media-thread phases), each
    /// counting `clicksPerRound` clicks, with the listener behind a relay impairing by `link` when given
    /// (its seed advanced by one per round).
    public static func run(rounds: Int, clicksPerRound: Int, link: LinkImpairment?) throws -> Result {
        var total = Result(
            latencies: [], clicksSent: 0, longestGapMilliseconds: 0, packetsDropped: 0, packetsRelayed: 0)
        for round in 0..<max(1, rounds) {
            var roundLink = link
            roundLink?.seed = (link?.seed ?? 0) &+ UInt64(round)
            let result = try runOnce(clicks: clicksPerRound, link: roundLink)
            total.latencies += result.latencies
            total.clicksSent += result.clicksSent
            total.longestGapMilliseconds = max(total.longestGapMilliseconds, result.longestGapMilliseconds)
            total.packetsDropped += result.packetsDropped
            total.packetsRelayed += result.packetsRelayed
        }
        return total
    }

    /// One room: joins a listener and a speaker, counts `clicks` clicks after the warm-up, and leaves.
    static func runOnce(clicks: Int, link: LinkImpairment?) throws -> Result {
        let room = try BenchRoom()
        defer { room.shutdown() }
        let microphone = ClickMicrophone()
        let loudspeaker = ClickLoudspeaker()
        let listener = try ScreenClient(
            room: room, identity: "listener", role: "audience", relay: link,
            settings: RoomAudioSettings(input: .silence, output: .alsa(loudspeaker.name), echoCancellation: false),
            devices: RoomAudioDevices(
                openInput: { () throws(AudioDeviceError) in SilenceInput(name: "silence", pacing: .realTime) },
                openOutput: { () throws(AudioDeviceError) in loudspeaker }))
        defer { listener.close() }
        // The click microphone is a virtual one, so the send pipeline has no voice processing, as for any
        // virtual input.
        let speaker = try ScreenClient(
            room: room, identity: "speaker", role: "speaker", relay: nil,
            settings: RoomAudioSettings(input: .tone(hertz: 300), output: .null, echoCancellation: false),
            devices: RoomAudioDevices(
                openInput: { () throws(AudioDeviceError) in microphone },
                openOutput: { () throws(AudioDeviceError) in NullOutput(name: "null", pacing: .realTime) }))
        defer { speaker.close() }
        try listener.client.join()
        try speaker.client.join()
        try speaker.speak()

        // Wait for the first click to come out, then for the warm-up, then for `clicks` more to go in.
        let deadline = MonotonicClock.microseconds() + 10_000_000
        while loudspeaker.onsets.isEmpty {
            guard MonotonicClock.microseconds() < deadline else {
                throw PathBenchmarkError("no click reached the listener within 10 s")
            }
            pause(microseconds: 10_000)
        }
        let countFrom = loudspeaker.onsets.values[0] + warmUp
        loudspeaker.watchGaps(false)
        var watching = false
        while true {
            let now = MonotonicClock.microseconds()
            if !watching, now >= countFrom {
                loudspeaker.watchGaps(true)
                watching = true
            }
            if microphone.onsets.values.filter({ $0 >= countFrom }).count >= clicks { break }
            pause(microseconds: 10_000)
        }
        // The last click needs time to come out; what plays after the speaker stops is not a gap.
        pause(microseconds: 400_000)
        loudspeaker.watchGaps(false)

        let sent = Array(microphone.onsets.values.filter { $0 >= countFrom }.prefix(clicks))
        let records = listener.client.relay?.records ?? []
        return Result(
            latencies: clickDelays(sent: sent, found: loudspeaker.onsets.values), clicksSent: sent.count,
            longestGapMilliseconds: Double(loudspeaker.longestGap) / Double(AudioFormat.sampleRate) * 1000,
            packetsDropped: records.filter { $0.decision == .drop }.count, packetsRelayed: records.count)
    }
}

/// A client as `clubroom join` runs one: a session whose media drives the room screen's sound.
final class ScreenClient: Sendable {
    let client: BenchClient
    let audio: RoomAudio

    init(
        room: BenchRoom, identity: String, role: String, relay: LinkImpairment?, settings: RoomAudioSettings,
        devices: RoomAudioDevices
    ) throws {
        let audio = RoomAudio(settings: settings, devices: devices) { _ in }
        self.audio = audio
        client = try BenchClient(room: room, identity: identity, role: role, relay: relay) { audio.handle($0) }
        audio.attach(client.session)
        audio.start()
    }

    /// Unmuted by the server, then the microphone opens, as the screen does when its role may publish.
    func speak() throws {
        try client.unmute()
        audio.setMuted(false)
        audio.setCapturing(true)
    }

    func close() {
        audio.stop()
        client.close()
    }
}
