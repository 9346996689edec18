import AudioCodec
import AudioCore
import AudioDevices
import Foundation

/// CPU time per minute of audio for the client's audio work, with libopus alone measured in the same run.
public enum CPUBenchmark {
    /// One figure: CPU seconds spent per minute of audio.
    public struct Result: Sendable, Equatable {
        /// A client speaking (microphone, voice processing, encoding) while hearing three speakers.
        public var speakingClient: Double
        /// A client hearing three speakers.
        public var listener: Double
        /// libopus alone: one encoder and three decoders over the same frames.
        public var opusAlone: Double
        /// The threaded engine speaking and hearing three speakers on devices paced in real time (process CPU,
        /// which includes the threads' wake-ups); nil when not measured.
        public var threadedSpeakingClient: Double?
        /// The threaded engine only hearing three speakers, paced in real time.
        public var threadedListener: Double?
        /// Seconds of audio each stepped figure covers.
        public var audioSeconds: Int
        /// Seconds of real time each threaded figure covers.
        public var threadedSeconds: Int
        /// What the microphone and the speakers said.
        public var signal: String
    }

    /// Natural speech from alsa-utils' recordings, or a tone when they are not installed.
    public static func speech() -> (samples: [Int16], description: String) {
        let directory = "/usr/share/sounds/alsa"
        let names = ["Front_Center", "Front_Left", "Front_Right", "Rear_Center", "Rear_Left", "Rear_Right"]
        var samples: [Int16] = []
        for name in names {
            if let input = try? WAVFileInput(path: "\(directory)/\(name).wav", loops: false, pacing: .unpaced) {
                samples += input.samples
            }
        }
        guard samples.isEmpty else { return (samples, "speech from \(directory)") }
        var tone = ToneGenerator(frequency: 440, amplitude: 0.25)
        var generated = [Int16](repeating: 0, count: AudioFormat.sampleRate * 5)
        tone.fill(&generated)
        return (generated, "a 440 Hz tone (alsa-utils' speech recordings are not installed)")
    }

    /// Runs the stepped measurements over `seconds` of audio, and the threaded ones over `threadedSeconds` of
    /// real time (0 skips them).
    public static func run(seconds: Int = 60, threadedSeconds: Int = 10) throws -> Result {
        let (speech, description) = speech()
        let frames = seconds * 1000 / AudioFormat.frameMilliseconds
        let remote = try remoteStreams(speech: speech, count: 3, frames: 500)

        let speaking = try measureStepped(frames: frames, speech: speech, remote: remote, speaking: true)
        let listening = try measureStepped(frames: frames, speech: speech, remote: remote, speaking: false)
        let opus = try measureOpusAlone(frames: frames, speech: speech, remote: remote)
        var result = Result(
            speakingClient: perMinute(speaking, frames: frames), listener: perMinute(listening, frames: frames),
            opusAlone: perMinute(opus, frames: frames), audioSeconds: seconds, threadedSeconds: threadedSeconds,
            signal: description)
        if threadedSeconds > 0 {
            result.threadedSpeakingClient = try measureThreaded(
                seconds: threadedSeconds, speech: speech, remote: remote, speaking: true)
            result.threadedListener = try measureThreaded(
                seconds: threadedSeconds, speech: speech, remote: remote, speaking: false)
        }
        return result
    }

    /// CPU seconds per minute of audio from nanoseconds over `frames` frames.
    static func perMinute(_ nanoseconds: Int64, frames: Int) -> Double {
        let audioMinutes = Double(frames * AudioFormat.frameMilliseconds) / 60_000
        return Double(nanoseconds) / 1e9 / audioMinutes
    }

    /// Pre-encoded packets for remote speakers (each from a different place in the speech), looped by the
    /// measurements with fresh sequence numbers and timestamps.
    static func remoteStreams(speech: [Int16], count: Int, frames: Int) throws -> [[[UInt8]]] {
        try (0..<count).map { speaker in
            let encoder = try OpusEncoder(configuration: OpusEncoder.Configuration(discontinuousTransmission: false))
            let input = SampleInput(samples: speech, loops: true, offset: speaker * speech.count / max(1, count))
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            return try (0..<frames).map { _ in
                _ = try frame.withUnsafeMutableBufferPointer { try input.read(into: $0) }
                return try encoder.encode(frame)
            }
        }
    }

    /// The engine's work for `frames` frames on this thread: a microphone read in two periods through the
    /// capture ring into the send path (when `speaking`), three speakers' packets into the receive path, and
    /// the mix through the playback ring to an unpaced null output. Returns thread CPU nanoseconds.
    static func measureStepped(frames: Int, speech: [Int16], remote: [[[UInt8]]], speaking: Bool) throws -> Int64 {
        let talk = TalkSwitch()
        let sender = try SendPipeline(configuration: SendPipeline.Configuration(), talk: talk)
        let playout = Playout(volumes: try VolumeStore(path: nil))
        let microphone = SampleInput(samples: speech, loops: true)
        let output = NullOutput(pacing: .unpaced)
        let captureRing = SampleRing(capacity: AudioFormat.samplesPerFrame * 4)
        let playbackRing = SampleRing(capacity: AudioFormat.samplesPerFrame * 4)
        let period = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerPeriod)
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        let mixed = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        period.initialize(repeating: 0)
        frame.initialize(repeating: 0)
        mixed.initialize(repeating: 0)
        defer {
            period.deallocate()
            frame.deallocate()
            mixed.deallocate()
        }
        let start = MonotonicClock.threadCPUNanoseconds()
        for index in 0..<frames {
            let now = Int64(index) * AudioFormat.frameMicroseconds
            if speaking {
                for _ in 0..<2 {
                    _ = try microphone.read(into: period)
                    captureRing.write(UnsafeBufferPointer(period))
                }
                captureRing.read(into: frame)
                // The packet would go to the media layer; building it is part of the cost measured.
                _ = sender.process(frame, played: nil, at: now / 1000)
            }
            for (speaker, packets) in remote.enumerated() {
                playout.enqueue(
                    speaker: "speaker-\(speaker)", ssrc: UInt32(speaker), sequence: UInt16(truncatingIfNeeded: index),
                    timestamp: UInt32(truncatingIfNeeded: index * AudioFormat.samplesPerFrame),
                    payload: packets[index % packets.count], arrival: now)
            }
            playout.render(at: now + 5_000, into: mixed)
            playbackRing.write(UnsafeBufferPointer(mixed))
            for _ in 0..<2 {
                playbackRing.read(into: period)
                _ = try output.write(UnsafeBufferPointer(period))
            }
        }
        return MonotonicClock.threadCPUNanoseconds() - start
    }

    /// libopus alone over the same frames: one encode and three decodes per frame. Thread CPU nanoseconds.
    static func measureOpusAlone(frames: Int, speech: [Int16], remote: [[[UInt8]]]) throws -> Int64 {
        let encoder = try OpusEncoder()
        let decoders = try remote.map { _ in try OpusDecoder() }
        let microphone = SampleInput(samples: speech, loops: true)
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        let decoded = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 16)
        frame.initialize(repeating: 0)
        decoded.initialize(repeating: 0)
        defer {
            frame.deallocate()
            decoded.deallocate()
            packet.deallocate()
        }
        let start = MonotonicClock.threadCPUNanoseconds()
        for index in 0..<frames {
            _ = try microphone.read(into: frame)
            _ = try encoder.encode(UnsafeBufferPointer(frame), into: packet)
            for (speaker, packets) in remote.enumerated() {
                _ = try packets[index % packets.count].withUnsafeBytes { bytes throws(AudioCodecError) in
                    try decoders[speaker].decode(bytes, into: decoded)
                }
            }
        }
        return MonotonicClock.threadCPUNanoseconds() - start
    }

    /// The threaded engine on paced virtual devices for `seconds` of real time, with three speakers' packets
    /// delivered every 20 ms from another thread. Process CPU seconds per minute (the process runs nothing
    /// else meanwhile).
    static func measureThreaded(seconds: Int, speech: [Int16], remote: [[[UInt8]]], speaking: Bool) throws -> Double {
        let engine = try AudioEngine(
            configuration: AudioEngineConfiguration(
                input: .silence, output: .null,
                inputOpener: { () throws(AudioDeviceError) in PacedInput(SampleInput(samples: speech, loops: true)) },
                send: SendPipeline.Configuration(), streamOptions: StreamOptions(realTimePriority: false)))
        try engine.start()
        if speaking { try engine.startCapture() }
        let start = MonotonicClock.processCPUNanoseconds()
        let wallStart = MonotonicClock.microseconds()
        let frames = seconds * 1000 / AudioFormat.frameMilliseconds
        for index in 0..<frames {
            let due = wallStart + Int64(index) * AudioFormat.frameMicroseconds
            let wait = due - MonotonicClock.microseconds()
            if wait > 0 { MonotonicClock.sleep(microseconds: wait) }
            for (speaker, packets) in remote.enumerated() {
                engine.receive(
                    speaker: "speaker-\(speaker)", ssrc: UInt32(speaker), sequence: UInt16(truncatingIfNeeded: index),
                    timestamp: UInt32(truncatingIfNeeded: index * AudioFormat.samplesPerFrame),
                    payload: packets[index % packets.count])
            }
        }
        let used = MonotonicClock.processCPUNanoseconds() - start
        let elapsed = MonotonicClock.microseconds() - wallStart
        engine.stop()
        return Double(used) / 1e9 / (Double(elapsed) / 60e6)
    }
}

/// Paces another microphone like hardware: one period every 10 ms at absolute deadlines on the monotonic clock.
public final class PacedInput: AudioInput {
    private let inner: any AudioInput
    private var clock = PacingClock()
    public var name: String { inner.name }

    /// Paces `inner`.
    public init(_ inner: any AudioInput) { self.inner = inner }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        clock.wait()
        return try inner.read(into: buffer)
    }

    /// When the last period's wait ended, in microseconds on ``MonotonicClock``.
    var lastWake: Int64 { clock.lastWake }
}

/// Sleeps to absolute deadlines one period apart, like `AudioDevices`' clock for its virtual devices; restarts
/// the schedule after a stall instead of bursting to catch up. Does not allocate.
struct PacingClock {
    private var next: Int64 = 0
    private(set) var lastWake: Int64 = 0
    let period: Int64 = 10_000

    mutating func wait() {
        let now = MonotonicClock.microseconds()
        if next == 0 || now - next > 10 * period { next = now + period }
        let wait = next - now
        if wait > 0 { MonotonicClock.sleep(microseconds: wait) }
        lastWake = next
        next += period
    }
}
