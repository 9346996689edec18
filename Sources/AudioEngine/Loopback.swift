import AudioCodec
import AudioCore
import AudioDevices

/// Network conditions between two engines in one process, decided per frame from a seed so that the same
/// seed loses the same frames on every run and for every path compared.
public struct LinkImpairment: Sendable, Equatable {
    /// Share of packets lost, in percent (independent random loss).
    public var lossPercent: Double
    /// Delay every packet takes, in milliseconds.
    public var baseDelayMilliseconds: Double
    /// Extra delay, uniform from 0 to this many milliseconds, per packet (so packets may arrive out of order).
    public var jitterMilliseconds: Double
    /// The seed of the loss and jitter pattern.
    public var seed: UInt64

    /// A link; clean (no loss, 1 ms, no jitter) by default.
    public init(
        lossPercent: Double = 0, baseDelayMilliseconds: Double = 1, jitterMilliseconds: Double = 0, seed: UInt64 = 1
    ) {
        self.lossPercent = lossPercent
        self.baseDelayMilliseconds = baseDelayMilliseconds
        self.jitterMilliseconds = jitterMilliseconds
        self.seed = seed
    }

    /// Whether the packet of frame `index` is lost.
    public func isLost(frame index: Int) -> Bool {
        Self.unit(seed: seed, index: index, stream: 1) * 100 < lossPercent
    }

    /// How long the packet of frame `index` takes, in microseconds.
    public func delay(frame index: Int) -> Int64 {
        let jitter = Self.unit(seed: seed, index: index, stream: 2) * jitterMilliseconds
        return Int64((baseDelayMilliseconds + jitter) * 1000)
    }

    /// A number in 0..<1 from the seed, the frame and the stream (SplitMix64 of their combination).
    static func unit(seed: UInt64, index: Int, stream: UInt64) -> Double {
        var z = seed &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 &+ stream &* 0xD1B5_4A32_D192_ED03
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}

/// One speaker's send path feeding one listener's receive path through an impaired link, on a simulated clock:
/// each step captures 20 ms from `input`, encodes it, lets the link deliver what has arrived and plays one frame.
/// Deterministic for a given input and seed; for tests, `bench quality-path` and `bench cpu`.
public final class SteppedLoopback {
    /// The speaker's send path.
    public let sender: SendPipeline
    /// The listener's receive path.
    public let receiver: Playout
    /// The link between them.
    public let link: LinkImpairment

    private let input: any AudioInput
    private var frameIndex = 0
    private var inFlight: [(arrival: Int64, sequence: UInt16, packet: EncodedAudio)] = []
    private var sequence: UInt16 = 0
    private let captured: UnsafeMutableBufferPointer<Int16>
    private let played: UnsafeMutableBufferPointer<Int16>
    /// Where the listener's ticks fall within each 20 ms, in microseconds after the capture of a frame ends.
    private let tickPhase: Int64 = 7_000

    /// Connects `input` (read 10 ms at a time, as a device thread would) through `sender` and the link to a
    /// fresh receive path tuned by `jitter`.
    public init(
        input: any AudioInput, sender: SendPipeline, link: LinkImpairment = LinkImpairment(),
        jitter: JitterBufferConfiguration = AudioEngineConfiguration.defaultJitter, volumes: VolumeStore? = nil
    ) {
        self.input = input
        self.sender = sender
        self.link = link
        receiver = Playout(jitter: jitter, volumes: volumes ?? (try! VolumeStore(path: nil)))
        captured = .allocate(capacity: AudioFormat.samplesPerFrame)
        captured.initialize(repeating: 0)
        played = .allocate(capacity: AudioFormat.samplesPerFrame)
        played.initialize(repeating: 0)
    }

    deinit {
        captured.deallocate()
        played.deallocate()
    }

    /// The simulated time, in microseconds, at the end of the frame the next step captures.
    public var now: Int64 { Int64(frameIndex + 1) * AudioFormat.frameMicroseconds }

    /// Runs one 20 ms step and returns the frame the listener played (valid until the next step).
    @discardableResult
    public func step() throws(AudioDeviceError) -> UnsafeBufferPointer<Int16> {
        let period = AudioFormat.samplesPerPeriod
        _ = try input.read(into: UnsafeMutableBufferPointer(rebasing: captured[0..<period]))
        _ = try input.read(into: UnsafeMutableBufferPointer(rebasing: captured[period..<(2 * period)]))
        let captureEnd = now
        if let packet = sender.process(captured, played: UnsafeBufferPointer(played), at: captureEnd / 1000) {
            if !link.isLost(frame: frameIndex) {
                inFlight.append((captureEnd + link.delay(frame: frameIndex), sequence, packet))
            }
            sequence &+= 1
        }
        let tick = captureEnd + tickPhase
        inFlight.sort { $0.arrival < $1.arrival }
        while let first = inFlight.first, first.arrival <= tick {
            inFlight.removeFirst()
            receiver.enqueue(
                speaker: "speaker", ssrc: 1, sequence: first.sequence, timestamp: first.packet.timestamp,
                payload: first.packet.payload, arrival: first.arrival)
        }
        receiver.render(at: tick, into: played)
        frameIndex += 1
        return UnsafeBufferPointer(played)
    }

    /// Runs `frames` steps and returns everything the listener played.
    public func run(frames: Int) throws(AudioDeviceError) -> [Int16] {
        var output: [Int16] = []
        output.reserveCapacity(frames * AudioFormat.samplesPerFrame)
        for _ in 0..<frames {
            output.append(contentsOf: try step())
        }
        return output
    }
}
