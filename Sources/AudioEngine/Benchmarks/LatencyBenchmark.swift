import AudioCodec
import AudioCore
import AudioDevices
import Synchronization

/// Mouth-to-ear delay between two engines in one process: clicks injected into the speaker's paced virtual
/// microphone are found in the listener's paced virtual loudspeaker, and each one's delay is the time between
/// the click entering the microphone and leaving the loudspeaker.
public enum LatencyBenchmark {
    /// The figures for one run.
    public struct Result: Sendable, Equatable {
        /// The link the packets crossed.
        public var link: LinkImpairment
        /// Delays of the clicks found, in milliseconds, in the order sent.
        public var latencies: [Double]
        /// Clicks injected (after the warm-up).
        public var clicksSent: Int
        /// The longest stretch of silence in what the listener played once the tone had started, in ms.
        public var longestGapMilliseconds: Double
        /// The listener's statistics for the speaker at the end.
        public var receiver: SpeakerStatistics?

        /// The `fraction` quantile (0...1) of the delays, nearest rank; 0 with none.
        public func percentile(_ fraction: Double) -> Double {
            let sorted = latencies.sorted()
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(sorted.count - 1, max(0, rank))]
        }

        /// Clicks that never came out.
        public var clicksMissing: Int { clicksSent - latencies.count }
    }

    /// How far apart the clicks are.
    static let clickInterval = AudioFormat.samples(milliseconds: 500)
    /// Clicks in the first second are left out while the jitter buffer settles.
    static let warmUp: Int64 = 1_000_000

    /// Runs a speaker and a listener in `rounds` fresh pairs (each starts its devices at a new phase, as two
    /// machines would) for `seconds` in all, with packets passed across `link` (loss and jitter applied per
    /// packet, seeded), and measures each click's delay.
    public static func run(seconds: Int, rounds: Int, link: LinkImpairment) throws -> Result {
        let rounds = max(1, min(rounds, seconds / 2))
        var total = Result(link: link, latencies: [], clicksSent: 0, longestGapMilliseconds: 0, receiver: nil)
        for round in 0..<rounds {
            var roundLink = link
            roundLink.seed = link.seed &+ UInt64(round)
            let result = try runOnce(seconds: seconds / rounds, link: roundLink)
            total.latencies += result.latencies
            total.clicksSent += result.clicksSent
            total.longestGapMilliseconds = max(total.longestGapMilliseconds, result.longestGapMilliseconds)
            if let receiver = result.receiver {
                guard var sum = total.receiver else {
                    total.receiver = receiver
                    continue
                }
                sum.packetsReceived += receiver.packetsReceived
                sum.lost += receiver.lost
                sum.recoveredByFEC += receiver.recoveredByFEC
                sum.concealed += receiver.concealed
                sum.late += receiver.late
                sum.playoutDelayMilliseconds = max(sum.playoutDelayMilliseconds, receiver.playoutDelayMilliseconds)
                sum.targetDelayMilliseconds = max(sum.targetDelayMilliseconds, receiver.targetDelayMilliseconds)
                sum.jitterMilliseconds = max(sum.jitterMilliseconds, receiver.jitterMilliseconds)
                total.receiver = sum
            }
        }
        return total
    }

    static func runOnce(seconds: Int, link: LinkImpairment) throws -> Result {
        let microphone = ClickInput()
        let loudspeaker = ClickOutput()
        let microphoneBox = DeviceBox(microphone)
        let loudspeakerBox = DeviceBox(loudspeaker)
        let listener = try AudioEngine(
            configuration: AudioEngineConfiguration(
                input: .silence, output: .alsa("click-detector"),
                outputOpener: { () throws(AudioDeviceError) in loudspeakerBox.device },
                streamOptions: StreamOptions(realTimePriority: true)))
        let network = LinkThread(link: link, listener: listener)
        var send = SendPipeline.Configuration(voiceProcessing: false)
        // A tone under the clicks keeps Opus out of DTX and shows gaps; FEC sized for the link's loss.
        send.encoder.discontinuousTransmission = false
        send.encoder.expectedLossPercent = Int(link.lossPercent.rounded(.up))
        let speaker = try AudioEngine(
            configuration: AudioEngineConfiguration(
                input: .alsa("click-injector"), output: .null,
                inputOpener: { () throws(AudioDeviceError) in microphoneBox.device }, send: send,
                streamOptions: StreamOptions(realTimePriority: true)),
            onEncoded: network.send)
        try listener.start()
        // Two machines' devices run at unrelated phases; a seeded pause of 0-20 ms gives each round its own.
        MonotonicClock.sleep(microseconds: Int64(LinkImpairment.unit(seed: link.seed, index: 0, stream: 3) * 20_000))
        try speaker.start()
        try speaker.startCapture()
        MonotonicClock.sleep(microseconds: Int64(seconds) * 1_000_000)
        // What plays after the speaker stops is the end of the run, not a gap.
        loudspeaker.stopWatchingGaps()
        speaker.stop()
        network.stop()
        listener.stop()

        let sent = microphone.onsets.values
        let received = loudspeaker.onsets.values
        let first = sent.first ?? 0
        let counted = sent.filter { $0 - first >= warmUp && $0 < sent.last! }
        var latencies: [Double] = []
        var next = 0
        for onset in counted {
            while next < received.count && received[next] < onset { next += 1 }
            guard next < received.count, received[next] - onset < 400_000 else { continue }
            latencies.append(Double(received[next] - onset) / 1000)
            next += 1
        }
        return Result(
            link: link, latencies: latencies, clicksSent: counted.count,
            longestGapMilliseconds: Double(loudspeaker.longestGap) / Double(AudioFormat.sampleRate) * 1000,
            receiver: listener.speakerStatistics.first)
    }
}

/// Hands a device made on one thread to the stream that opens it on another, once.
private final class DeviceBox<Device>: @unchecked Sendable {
    // `@unchecked`: the device is only used by the stream's audio thread after the opener returns it; the
    // benchmark reads its results (through atomics) after the stream has stopped.
    let device: Device
    init(_ device: Device) { self.device = device }
}

/// Times of events recorded on an audio thread without allocating: a fixed array and an atomic count.
final class EventTimes: @unchecked Sendable {
    // `@unchecked`: one thread appends (slots past `count`, published with a releasing store); readers read
    // the first `count` slots after an acquiring load.
    private let storage: UnsafeMutablePointer<Int64>
    private let capacity = 16_384
    private let count = Atomic<Int>(0)

    init() {
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0, count: capacity)
    }

    deinit { storage.deallocate() }

    func append(_ time: Int64) {
        let index = count.load(ordering: .relaxed)
        guard index < capacity else { return }
        storage[index] = time
        count.store(index + 1, ordering: .releasing)
    }

    var values: [Int64] {
        Array(UnsafeBufferPointer(start: storage, count: count.load(ordering: .acquiring)))
    }
}

/// A paced microphone hearing a quiet 300 Hz tone with a click every 500 ms; it notes when each click entered.
final class ClickInput: AudioInput {
    let name = "click-injector"
    let onsets = EventTimes()
    private var clock = PacingClock()
    private var tone = ToneGenerator(frequency: 300, amplitude: 0.09)
    private var injector = ClickInjector(interval: LatencyBenchmark.clickInterval)

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        clock.wait()
        // A device's read returns when the period is full: its first sample was heard one period earlier.
        let periodStart = clock.lastWake - Int64(AudioFormat.periodMilliseconds) * 1000
        let position = injector.position
        tone.fill(buffer)
        injector.process(buffer)
        let offset = (injector.interval - position % injector.interval) % injector.interval
        if offset < buffer.count {
            onsets.append(periodStart + AudioFormat.microseconds(samples: Int64(offset)))
        }
        return 0
    }
}

/// A paced loudspeaker that finds clicks in what it plays and notes when each one came out, and the longest
/// silence once sound has started.
final class ClickOutput: AudioOutput {
    let name = "click-detector"
    let onsets = EventTimes()
    private var clock = PacingClock()
    private var detector = ClickDetector()
    private var started = false
    private var quietRun = 0
    private let longestQuiet = Atomic<Int>(0)
    private let watching = Atomic<Bool>(true)

    /// Stops measuring silence (before the speaker stops).
    func stopWatchingGaps() { watching.store(false, ordering: .relaxed) }

    /// The longest run of silent samples after the first click, in samples.
    var longestGap: Int { longestQuiet.load(ordering: .relaxed) }

    func write(_ buffer: UnsafeBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        clock.wait()
        let periodStart = clock.lastWake
        let start = detector.position
        let onsets = onsets
        detector.process(buffer) { position in
            onsets.append(periodStart + AudioFormat.microseconds(samples: Int64(position - start)))
        }
        if detector.position > start, !started, !onsets.isEmpty { started = true }
        guard started, watching.load(ordering: .relaxed) else { return 0 }
        for sample in buffer {
            if abs(Int(sample)) < 200 {
                quietRun += 1
                if quietRun > longestQuiet.load(ordering: .relaxed) {
                    longestQuiet.store(quietRun, ordering: .relaxed)
                }
            } else {
                quietRun = 0
            }
        }
        return 0
    }
}

extension EventTimes {
    fileprivate var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }
}

/// Carries packets from the speaker's encoder thread to the listener, through a link that loses and delays
/// them per packet, delivered by a thread of its own at each packet's arrival time.
private final class LinkThread: Sendable {
    private struct InFlight: Sendable {
        var due: Int64
        var sequence: UInt16
        var packet: EncodedAudio
    }

    private let link: LinkImpairment
    private let listener: AudioEngine
    private final class Pending: Sendable {
        let packets = Mutex<[InFlight]>([])
    }

    private let pending = Pending()
    private let sequence = Atomic<Int>(0)
    private let worker: Worker

    init(link: LinkImpairment, listener: AudioEngine) {
        self.link = link
        self.listener = listener
        let pending = pending
        worker = Worker.start(name: "clubroom-link") { worker in
            while !worker.isStopping {
                let now = MonotonicClock.microseconds()
                let due = pending.packets.withLock { pending -> [InFlight] in
                    let due = pending.filter { $0.due <= now }
                    pending.removeAll { $0.due <= now }
                    return due
                }
                for packet in due.sorted(by: { $0.due < $1.due }) {
                    listener.receive(
                        speaker: "speaker", ssrc: 1, sequence: packet.sequence, timestamp: packet.packet.timestamp,
                        payload: packet.packet.payload, arrival: packet.due)
                }
                MonotonicClock.sleep(microseconds: 500)
            }
        }
    }

    func send(_ packet: EncodedAudio) {
        let index = sequence.add(1, ordering: .relaxed).oldValue
        guard !link.isLost(frame: index) else { return }
        let due = MonotonicClock.microseconds() + link.delay(frame: index)
        pending.packets.withLock {
            $0.append(InFlight(due: due, sequence: UInt16(truncatingIfNeeded: index), packet: packet))
        }
    }

    func stop() {
        worker.stop()
    }
}
