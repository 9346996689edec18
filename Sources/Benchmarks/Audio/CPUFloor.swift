import AudioCodec
import AudioCore
import AudioDevices
import Foundation
import Platform

/// The work a client's audio cannot do without, measured alone on one thread of the bench's own process, for
/// `clubroom bench cpu` to set beside the whole client in the same run: libopus (the microphone's encode and the
/// speakers' decodes, on the same signals the measured client encodes and decodes), speexdsp's voice processing,
/// and a thread that only wakes at a device's period.
public enum CPUFloor {
    /// Natural speech from alsa-utils' recordings, or a tone when they are not installed.
    public static func speech() -> (samples: [Int16], description: String) {
        let directory = "/usr/share/sounds/alsa"
        let names = ["Front_Center", "Front_Left", "Front_Right", "Rear_Center", "Rear_Left", "Rear_Right"]
        var samples: [Int16] = []
        for name in names {
            if let file = try? SoundFile.readMono48k(path: "\(directory)/\(name).wav") { samples += file }
        }
        guard samples.isEmpty else { return (samples, "speech from \(directory)") }
        var tone = ToneGenerator(frequency: 440, amplitude: 0.25)
        var generated = [Int16](repeating: 0, count: AudioFormat.sampleRate * 5)
        tone.fill(&generated)
        return (generated, "a 440 Hz tone (alsa-utils' speech recordings are not installed)")
    }

    /// The tone a speaker bot sends at `hertz` (its `--input tone:HZ`, the same device), `seconds` long.
    public static func botTone(hertz: Int, seconds: Int) -> [Int16] {
        let tone = ToneInput(frequency: Double(hertz), pacing: .unpaced)
        var samples = [Int16](repeating: 0, count: AudioFormat.sampleRate * seconds)
        // A tone reads from memory and cannot fail.
        _ = samples.withUnsafeMutableBufferPointer { try? tone.read(into: $0) }
        return samples
    }

    /// CPU seconds per minute of audio from nanoseconds over `frames` frames.
    public static func perMinute(_ nanoseconds: Int64, frames: Int) -> Double {
        let audioMinutes = Double(frames * AudioFormat.frameMilliseconds) / 60_000
        return Double(nanoseconds) / 1e9 / audioMinutes
    }

    /// Packets of each signal as a speaker bot sends them (DTX off), looped by the measurements.
    static func packets(of signals: [[Int16]], frames: Int) throws -> [[[UInt8]]] {
        try signals.map { signal in
            let encoder = try OpusEncoder(configuration: OpusEncoder.Configuration(discontinuousTransmission: false))
            let input = WAVFileInput(samples: signal, loops: true)
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            return try (0..<frames).map { _ in
                _ = try frame.withUnsafeMutableBufferPointer { try input.read(into: $0) }
                return try encoder.encode(frame)
            }
        }
    }

    /// libopus alone over `frames` frames: one encode of `speech` (the room's settings) per frame unless
    /// `encoding` is false, and a decode of each of `remote`'s streams. Thread CPU nanoseconds.
    public static func opusAlone(
        frames: Int, speech: [Int16], remote signals: [[Int16]], encoding: Bool = true
    ) throws -> Int64 {
        let codec = try CodecWork(speech: speech, remote: signals)
        let start = MonotonicClock.threadCPUNanoseconds()
        for index in 0..<frames {
            if encoding {
                try codec.readMicrophone()
                try codec.encode()
            }
            try codec.decode(index)
        }
        return MonotonicClock.threadCPUNanoseconds() - start
    }

    /// speexdsp's preprocessing alone (noise suppression, gain control, voice activity detection: what a
    /// person's microphone gets) over `frames` frames of `speech`. Thread CPU nanoseconds.
    public static func voiceProcessingAlone(frames: Int, speech: [Int16]) throws -> Int64 {
        let processor = try VoiceProcessor()
        let microphone = WAVFileInput(samples: speech, loops: true)
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        frame.initialize(repeating: 0)
        defer { frame.deallocate() }
        let start = MonotonicClock.threadCPUNanoseconds()
        for _ in 0..<frames {
            _ = try microphone.read(into: frame)
            _ = try processor.process(frame)
        }
        return MonotonicClock.threadCPUNanoseconds() - start
    }

    /// The client's codec work done as the client does it, one 20 ms frame per 20 ms of the clock, for `frames`
    /// frames: each frame a decode of each of `remote`'s streams, and with `speaking` the speech's voice
    /// processing and encode too. Only the work is timed (thread CPU time around it), not the sleeps between,
    /// so the figure is libopus's and speexdsp's cost when they run once per tick from cold caches, as in a
    /// client, instead of back to back. Thread CPU nanoseconds of libopus, and of speexdsp.
    public static func pacedCodecWork(
        frames: Int, speech: [Int16], remote signals: [[Int16]], speaking: Bool
    ) throws -> (opus: Int64, voiceProcessing: Int64) {
        let codec = try CodecWork(speech: speech, remote: signals)
        let processor = try VoiceProcessor()
        var clock = PeriodClock(periodNanoseconds: AudioFormat.frameMicroseconds * 1_000)
        var opus: Int64 = 0
        var voice: Int64 = 0
        for index in 0..<frames {
            clock.wait()
            if speaking {
                try codec.readMicrophone()
                let start = MonotonicClock.threadCPUNanoseconds()
                _ = try processor.process(codec.frame)
                let processed = MonotonicClock.threadCPUNanoseconds()
                try codec.encode()
                voice += processed - start
                opus += MonotonicClock.threadCPUNanoseconds() - processed
            }
            let start = MonotonicClock.threadCPUNanoseconds()
            try codec.decode(index)
            opus += MonotonicClock.threadCPUNanoseconds() - start
        }
        return (opus, voice)
    }

    /// A thread that does nothing but sleep to deadlines 10 ms apart, as a device thread does, for `seconds`:
    /// what its wake-ups alone cost on this machine. Thread CPU nanoseconds.
    public static func wakeUpsAlone(seconds: Int) -> Int64 {
        var clock = PeriodClock(periodNanoseconds: Int64(AudioFormat.periodMilliseconds) * 1_000_000)
        let start = MonotonicClock.threadCPUNanoseconds()
        for _ in 0..<(seconds * 1000 / AudioFormat.periodMilliseconds) { clock.wait() }
        return MonotonicClock.threadCPUNanoseconds() - start
    }
}

/// A measurement's codec work: the speech as the microphone, its encoder, the remote speakers' packets (as their
/// bots send them) and a decoder for each, and the buffers they write into, allocated once and freed with it.
final class CodecWork {
    let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
    private let decoded = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
    private let packet = UnsafeMutableRawBufferPointer.allocate(
        byteCount: OpusEncoder.maxPacketBytes, alignment: 16)
    private let remote: [[[UInt8]]]
    private let encoder: OpusEncoder
    private let decoders: [OpusDecoder]
    private let microphone: WAVFileInput

    init(speech: [Int16], remote signals: [[Int16]]) throws {
        remote = try CPUFloor.packets(of: signals, frames: 500)
        encoder = try OpusEncoder()
        decoders = try remote.map { _ in try OpusDecoder() }
        microphone = WAVFileInput(samples: speech, loops: true)
        frame.initialize(repeating: 0)
        decoded.initialize(repeating: 0)
    }

    /// The microphone's next frame into `frame`.
    func readMicrophone() throws {
        _ = try microphone.read(into: frame)
    }

    /// Encodes `frame`.
    func encode() throws {
        _ = try encoder.encode(UnsafeBufferPointer(frame), into: packet)
    }

    /// Decodes each remote speaker's packet of frame `index` (their packets looped).
    func decode(_ index: Int) throws {
        for (speaker, packets) in remote.enumerated() {
            _ = try packets[index % packets.count].withUnsafeBytes { bytes throws(AudioCodecError) in
                try decoders[speaker].decode(bytes, into: decoded)
            }
        }
    }

    deinit {
        frame.deallocate()
        decoded.deallocate()
        packet.deallocate()
    }
}
