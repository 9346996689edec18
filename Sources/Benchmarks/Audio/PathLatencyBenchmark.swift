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
/// virtual device playing clicks (``ClickMicrophone``); two listeners' loudspeakers find them
/// (``ClickLoudspeaker``): one on stage (a speaker whose microphone is open but muted, as in a conversation:
/// its devices run as a speaker's) and one in the audience (only the loudspeaker open, on the longer periods of
/// someone who only listens). Each click's delay is the time between entering the microphone and leaving a
/// loudspeaker. Impaired runs put an ``ImpairingRelay`` between each listener and the server, both with the
/// same seed, so both lose and delay the same packets.
public enum PathLatencyBenchmark {
    /// The figures of one listener in one condition.
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

        /// Nothing yet.
        public static let empty = Result(
            latencies: [], clicksSent: 0, longestGapMilliseconds: 0, packetsDropped: 0, packetsRelayed: 0)

        /// The `fraction` quantile (0...1) of the delays, nearest rank; 0 with none.
        public func percentile(_ fraction: Double) -> Double { BenchmarkSupport.percentile(latencies, fraction) }

        /// Clicks that never came out.
        public var clicksMissing: Int { clicksSent - latencies.count }

        /// This and `other` together.
        func adding(_ other: Result) -> Result {
            Result(
                latencies: latencies + other.latencies, clicksSent: clicksSent + other.clicksSent,
                longestGapMilliseconds: max(longestGapMilliseconds, other.longestGapMilliseconds),
                packetsDropped: packetsDropped + other.packetsDropped,
                packetsRelayed: packetsRelayed + other.packetsRelayed)
        }
    }

    /// What both listeners heard in one condition.
    public struct Listeners: Sendable, Equatable {
        /// The listener on stage (microphone open, muted): what speakers in a conversation hear.
        public var stage: Result
        /// The listener in the audience (loudspeaker only).
        public var audience: Result
    }

    /// Clicks after this long from the first one heard are counted, once the jitter buffer has settled.
    static let warmUp: Int64 = 1_000_000

    /// Runs `rounds` fresh rooms (a new server, new clients, new device and media-thread phases), each
    /// counting `clicksPerRound` clicks, with the listeners behind relays impairing by `link` when given
    /// (its seed advanced by one per round).
    public static func run(rounds: Int, clicksPerRound: Int, link: LinkImpairment?) throws -> Listeners {
        var total = Listeners(stage: .empty, audience: .empty)
        for round in 0..<max(1, rounds) {
            var roundLink = link
            roundLink?.seed = (link?.seed ?? 0) &+ UInt64(round)
            let result = try runOnce(clicks: clicksPerRound, link: roundLink)
            total.stage = total.stage.adding(result.stage)
            total.audience = total.audience.adding(result.audience)
        }
        return total
    }

    /// A listener of the rig: its client and the loudspeaker that finds the clicks.
    struct Listener {
        let client: ScreenClient
        let loudspeaker: ClickLoudspeaker

        init(room: BenchServer, identity: String, role: String, link: LinkImpairment?) throws {
            let loudspeaker = ClickLoudspeaker()
            self.loudspeaker = loudspeaker
            client = try ScreenClient(
                room: room, identity: identity, role: role, relay: link,
                settings: RoomAudioSettings(
                    input: .silence, output: .alsa(loudspeaker.name), echoCancellation: false, volumesPath: nil),
                devices: RoomAudioDevices(
                    openInput: { request throws(AudioDeviceError) in
                        SilenceInput(name: "silence", pacing: request.pacing)
                    },
                    openOutput: { request throws(AudioDeviceError) in
                        loudspeaker.driven = request.pacing == .driven
                        return loudspeaker
                    }))
        }

        func result(sent: [Int64]) -> Result {
            let records = client.client.relay?.records ?? []
            return Result(
                latencies: clickDelays(sent: sent, found: loudspeaker.onsets.values), clicksSent: sent.count,
                longestGapMilliseconds: Double(loudspeaker.longestGap) / Double(AudioFormat.sampleRate) * 1000,
                packetsDropped: records.filter { $0.decision == .drop }.count, packetsRelayed: records.count)
        }
    }

    /// One room: joins the two listeners and a speaker, counts `clicks` clicks after the warm-up, and leaves.
    static func runOnce(clicks: Int, link: LinkImpairment?) throws -> Listeners {
        let room = try BenchServer(room: "bench", media: true)
        defer { room.shutdown() }
        let microphone = ClickMicrophone()
        let stage = try Listener(room: room, identity: "stage", role: "speaker", link: link)
        defer { stage.client.close() }
        let audience = try Listener(room: room, identity: "audience", role: "audience", link: link)
        defer { audience.client.close() }
        // A person's microphone without the voice processing: gain control would lift the quiet tone above the
        // click detector's threshold, and voice processing works frame by frame, adding no delay.
        let speaker = try ScreenClient(
            room: room, identity: "speaker", role: "speaker", relay: nil,
            settings: RoomAudioSettings(
                input: .alsa(microphone.name), output: .null, echoCancellation: false,
                voiceProcessing: false, volumesPath: nil),
            devices: RoomAudioDevices(
                openInput: { _ throws(AudioDeviceError) in microphone },
                openOutput: { request throws(AudioDeviceError) in NullOutput(name: "null", pacing: request.pacing) }))
        defer { speaker.close() }
        try stage.client.client.join()
        try audience.client.client.join()
        try speaker.client.join()
        // On stage, the listener's microphone is open (its role may publish) and muted, as the screen leaves it.
        stage.client.audio.setCapturing(true)
        try speaker.speak()

        // Wait for the first click to come out of both, then for the warm-up, then for `clicks` more to go in.
        let listeners = [stage.loudspeaker, audience.loudspeaker]
        let deadline = MonotonicClock.microseconds() + 10_000_000
        while listeners.contains(where: { $0.onsets.isEmpty }) {
            guard MonotonicClock.microseconds() < deadline else {
                throw PathBenchmarkError("no click reached a listener within 10 s")
            }
            MonotonicClock.sleep(microseconds: 10_000)
        }
        let countFrom = listeners.map { $0.onsets.values[0] }.max()! + warmUp
        for loudspeaker in listeners { loudspeaker.watchGaps(false) }
        var watching = false
        while true {
            let now = MonotonicClock.microseconds()
            if !watching, now >= countFrom {
                for loudspeaker in listeners { loudspeaker.watchGaps(true) }
                watching = true
            }
            if microphone.onsets.values.filter({ $0 >= countFrom }).count >= clicks { break }
            MonotonicClock.sleep(microseconds: 10_000)
        }
        // The last click needs time to come out; what plays after the speaker stops is not a gap.
        MonotonicClock.sleep(microseconds: 400_000)
        let sent = Array(microphone.onsets.values.filter { $0 >= countFrom }.prefix(clicks))
        // On a busy machine a loudspeaker's thread can be late to play what it was given: a click not heard yet
        // is waited for up to 2 s more (it still counts only when it played within 400 ms of going in).
        let patience = MonotonicClock.microseconds() + 2_000_000
        while MonotonicClock.microseconds() < patience,
            listeners.contains(where: { clickDelays(sent: sent, found: $0.onsets.values).count < sent.count })
        {
            MonotonicClock.sleep(microseconds: 10_000)
        }
        for loudspeaker in listeners { loudspeaker.watchGaps(false) }

        return Listeners(stage: stage.result(sent: sent), audience: audience.result(sent: sent))
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
        let cleanStage = clean.stage
        let impairedStage = impaired.stage
        var rows: [BenchmarkReport.Row] = [
            .init("clean: p50 mouth-to-ear", cleanStage.percentile(0.5), "ms", target: 70),
            .init("clean: p95 mouth-to-ear", cleanStage.percentile(0.95), "ms", target: 90),
            .init("clean: clicks missing", Double(cleanStage.clicksMissing), "of \(cleanStage.clicksSent)", target: 0),
            .init("clean: longest silence gap", cleanStage.longestGapMilliseconds, "ms", target: 200),
            .init("impaired: p50 mouth-to-ear", impairedStage.percentile(0.5), "ms"),
            .init("impaired: p95 mouth-to-ear", impairedStage.percentile(0.95), "ms", target: 150),
            .init(
                "impaired: clicks missing", Double(impairedStage.clicksMissing), "of \(impairedStage.clicksSent)"),
            .init("impaired: longest silence gap", impairedStage.longestGapMilliseconds, "ms", target: 200),
            .init(
                "impaired: packets dropped by the relay", Double(impairedStage.packetsDropped),
                "of \(impairedStage.packetsRelayed)"),
            .init("audience, clean: p50 mouth-to-ear", clean.audience.percentile(0.5), "ms"),
            .init("audience, clean: p95 mouth-to-ear", clean.audience.percentile(0.95), "ms"),
            .init(
                "audience, clean: clicks missing", Double(clean.audience.clicksMissing),
                "of \(clean.audience.clicksSent)", target: 0),
            .init("audience, clean: longest silence gap", clean.audience.longestGapMilliseconds, "ms", target: 200),
            .init("audience, impaired: p50 mouth-to-ear", impaired.audience.percentile(0.5), "ms"),
            .init("audience, impaired: p95 mouth-to-ear", impaired.audience.percentile(0.95), "ms"),
            .init(
                "audience, impaired: longest silence gap", impaired.audience.longestGapMilliseconds, "ms",
                target: 200),
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
                "a room server in this process; a speaking client and two listening ones as 'clubroom join' runs "
                    + "them (session, device threads and rings, media thread with the send path, SRTP over UDP, "
                    + "jitter buffer, mixer) on paced virtual devices; clicks every 500 ms over a swaying 300 Hz "
                    + "tone, \(clicks) clicks in each of \(rounds) fresh rooms per condition, counted from 1 s after "
                    + "the first click is heard",
                "the rows without a prefix are the listener on stage (a speaker with the microphone open and "
                    + "muted: what the people in a conversation hear, on \(RoomAudio.speakingPeriod) ms periods); "
                    + "'audience' is a listener who only listens (loudspeaker periods of "
                    + "\(RoomAudio.listeningPeriod) ms, two frames per media wake-up)",
                "impaired: a UDP relay in front of each listener drops 5% of the server's RTP packets and delays "
                    + "each by 0-40 ms (uniform), chosen per sequence number from seed \(seed) (+1 per room)",
                "virtual devices are ideal (no buffering of their own); real devices add theirs",
            ] + notes + [buildNote])
    }
}
