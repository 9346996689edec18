import AudioCodec
import AudioCore
import AudioDevices
import Foundation

/// The pieces of the client's audio work measured alone on one thread, for `clubroom bench cpu` to set beside
/// the whole client: libopus (one encoder and three decoders) and speexdsp's voice processing.
public enum CPUBenchmark {
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

    /// CPU seconds per minute of audio from nanoseconds over `frames` frames.
    public static func perMinute(_ nanoseconds: Int64, frames: Int) -> Double {
        let audioMinutes = Double(frames * AudioFormat.frameMilliseconds) / 60_000
        return Double(nanoseconds) / 1e9 / audioMinutes
    }

    /// Pre-encoded packets for remote speakers (each from a different place in the speech), looped by the
    /// measurements.
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

    /// libopus alone over `frames` frames of `speech`: one encode (the room's settings, unless `encoding` is
    /// false) and three decodes per frame. Thread CPU nanoseconds.
    public static func opusAlone(frames: Int, speech: [Int16], encoding: Bool = true) throws -> Int64 {
        let remote = try remoteStreams(speech: speech, count: 3, frames: 500)
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
            if encoding {
                _ = try microphone.read(into: frame)
                _ = try encoder.encode(UnsafeBufferPointer(frame), into: packet)
            }
            for (speaker, packets) in remote.enumerated() {
                _ = try packets[index % packets.count].withUnsafeBytes { bytes throws(AudioCodecError) in
                    try decoders[speaker].decode(bytes, into: decoded)
                }
            }
        }
        return MonotonicClock.threadCPUNanoseconds() - start
    }

    /// speexdsp's preprocessing alone (noise suppression, gain control, voice activity detection: what a
    /// person's microphone gets) over `frames` frames of `speech`. Thread CPU nanoseconds.
    public static func voiceProcessingAlone(frames: Int, speech: [Int16]) throws -> Int64 {
        let processor = try VoiceProcessor()
        let microphone = SampleInput(samples: speech, loops: true)
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

    /// A thread that does nothing but sleep to deadlines 10 ms apart, as a device thread does, for `seconds`:
    /// what its wake-ups alone cost on this machine. Thread CPU nanoseconds.
    public static func wakeUpsAlone(seconds: Int) -> Int64 {
        var clock = PacingClock()
        let start = MonotonicClock.threadCPUNanoseconds()
        for _ in 0..<(seconds * 100) { clock.wait() }
        return MonotonicClock.threadCPUNanoseconds() - start
    }
}

/// Sleeps to absolute deadlines one period apart, like `AudioDevices`' clock for its virtual devices; restarts
/// the schedule after a stall instead of bursting to catch up. Does not allocate.
struct PacingClock {
    private var next: Int64 = 0
    let period: Int64 = 10_000

    mutating func wait() {
        let now = MonotonicClock.microseconds()
        if next == 0 || now - next > 10 * period { next = now + period }
        let wait = next - now
        if wait > 0 { MonotonicClock.sleep(microseconds: wait) }
        next += period
    }
}
