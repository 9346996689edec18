import AudioCore
import AudioDevices
import BenchmarkSupport
import ClientAudio
import Foundation
import Platform
import RoomClient
import ServerBenchmarks
import Synchronization

/// Mouth-to-ear through a real room server on loopback, with the product's client audio: each client is a
/// `RoomSession` with the room screen's sound (`RoomAudio`: device threads, rings, and the `ClientMedia` media
/// thread with its send path, jitter buffer, decoder and mixer). The speaker's microphone is a paced
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
        public func percentile(_ fraction: Double) -> Double { BenchmarkSupport.percentile(latencies, fraction) }

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
        let room = try BenchServer(room: "bench", media: true)
        defer { room.shutdown() }
        let microphone = ClickMicrophone()
        let loudspeaker = ClickLoudspeaker()
        let listener = try ScreenClient(
            room: room, identity: "listener", role: "audience", relay: link,
            settings: RoomAudioSettings(
                input: .silence, output: .alsa(loudspeaker.name), echoCancellation: false, volumesPath: nil),
            devices: RoomAudioDevices(
                openInput: { _ throws(AudioDeviceError) in SilenceInput(name: "silence", pacing: .realTime) },
                openOutput: { _ throws(AudioDeviceError) in loudspeaker }))
        defer { listener.close() }
        // A person's microphone without the voice processing: gain control would lift the quiet tone above the
        // click detector's threshold, and voice processing works frame by frame, adding no delay.
        let speaker = try ScreenClient(
            room: room, identity: "speaker", role: "speaker", relay: nil,
            settings: RoomAudioSettings(
                input: .alsa(microphone.name), output: .null, echoCancellation: false,
                voiceProcessing: false, volumesPath: nil),
            devices: RoomAudioDevices(
                openInput: { _ throws(AudioDeviceError) in microphone },
                openOutput: { _ throws(AudioDeviceError) in NullOutput(name: "null", pacing: .realTime) }))
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
            MonotonicClock.sleep(microseconds: 10_000)
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
            MonotonicClock.sleep(microseconds: 10_000)
        }
        // The last click needs time to come out; what plays after the speaker stops is not a gap.
        MonotonicClock.sleep(microseconds: 400_000)
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
        room: BenchServer, identity: String, role: String, relay: LinkImpairment?, settings: RoomAudioSettings,
        devices: RoomAudioDevices
    ) throws {
        let audio = RoomAudio(settings: settings, devices: devices, report: { _ in })
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

extension PathLatencyBenchmark {
    /// Runs the clean and impaired conditions for `seconds` each (and the PulseAudio devices with `pulse`) and
    /// shapes their figures into the shared report, with the targets.
    public static func report(seconds: Int, seed: UInt64, pulse: Bool) throws -> BenchmarkReport {
        // Fresh rooms of 5 s each (ten clicks), so the clients' device and media-thread phases vary.
        let rounds = max(1, seconds / 5)
        let clicks = max(2, seconds * 2 / rounds)
        let clean = try run(rounds: rounds, clicksPerRound: clicks, link: nil)
        let impaired = try run(
            rounds: rounds, clicksPerRound: clicks,
            link: LinkImpairment(lossPercent: 5, baseDelayMilliseconds: 0, jitterMilliseconds: 40, seed: seed))
        var rows: [BenchmarkReport.Row] = [
            .init("clean: p50 mouth-to-ear", clean.percentile(0.5), "ms", target: 70),
            .init("clean: p95 mouth-to-ear", clean.percentile(0.95), "ms", target: 90),
            .init("clean: clicks missing", Double(clean.clicksMissing), "of \(clean.clicksSent)", target: 0),
            .init("clean: longest silence gap", clean.longestGapMilliseconds, "ms", target: 200),
            .init("impaired: p50 mouth-to-ear", impaired.percentile(0.5), "ms"),
            .init("impaired: p95 mouth-to-ear", impaired.percentile(0.95), "ms", target: 150),
            .init("impaired: clicks missing", Double(impaired.clicksMissing), "of \(impaired.clicksSent)"),
            .init("impaired: longest silence gap", impaired.longestGapMilliseconds, "ms", target: 200),
            .init(
                "impaired: packets dropped by the relay", Double(impaired.packetsDropped),
                "of \(impaired.packetsRelayed)"),
        ]
        var notes: [String] = []
        if pulse {
            let devices = try PulseLatencyBenchmark.run(seconds: seconds)
            rows += [
                .init("devices: p50 mouth-to-ear", devices.percentile(0.5), "ms"),
                .init("devices: p95 mouth-to-ear", devices.percentile(0.95), "ms"),
                .init(
                    "devices: clicks missing", Double(devices.clicksSent - devices.latencies.count),
                    "of \(devices.clicksSent)"),
                .init("devices: the rig's own loop (taken off)", devices.rigMilliseconds, "ms"),
            ]
            notes.append(
                "devices: clicks played into a PulseAudio null sink, captured from its monitor by the speaking "
                    + "client, sent through the server, played by the listening client into a second sink and "
                    + "found in its monitor, all through ALSA's pulse plugin; the rig's own play-and-capture loop is "
                    + "measured alone and taken off"
            )
        }
        return BenchmarkReport(
            name: "latency: mouth-to-ear through a room server on loopback", rows: rows,
            notes: [
                "a room server in this process; a speaking and a listening client as 'clubroom join' runs them "
                    + "(session, device threads and rings, send pipeline, media thread with SRTP over UDP, jitter "
                    + "buffer, mixer) on paced virtual devices; clicks every 500 ms over a swaying 300 Hz tone, "
                    + "\(clicks) clicks in each of \(rounds) fresh rooms per condition, counted from 1 s after the "
                    + "first click is heard",
                "impaired: a UDP relay in front of the listener drops 5% of the server's RTP packets and delays "
                    + "each by 0-40 ms (uniform), chosen per sequence number from seed \(seed) (+1 per room)",
                "virtual devices are ideal (no buffering of their own); real devices add theirs",
            ] + notes + [buildNote])
    }
}
