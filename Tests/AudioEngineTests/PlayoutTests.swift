import AudioCodec
import AudioCore
import AudioEngine
import Testing

/// The receive path on its own: exact pass-through of a single speaker, mixing of several, statistics and
/// removal.
@Suite struct PlayoutTests {
    /// Opus packets of a loud 300 Hz tone (peaks near full scale), 20 ms each.
    func loudPackets(count: Int) throws -> [[UInt8]] {
        let encoder = try OpusEncoder(configuration: OpusEncoder.Configuration(discontinuousTransmission: false))
        var tone = ToneGenerator(frequency: 300, amplitude: 0.9)
        var frame = [Int16](repeating: 0, count: 960)
        return try (0..<count).map { _ in
            tone.fill(&frame)
            return try encoder.encode(frame)
        }
    }

    func render(_ playout: Playout, packets: [String: [[UInt8]]], frames: Int) -> [Int16] {
        var output: [Int16] = []
        var frame = [Int16](repeating: 0, count: 960)
        for index in 0..<frames {
            let now = Int64(index) * 20_000
            for (speaker, stream) in packets.sorted(by: { $0.key < $1.key }) {
                playout.enqueue(
                    speaker: speaker, ssrc: UInt32(speaker.count), sequence: UInt16(index),
                    timestamp: UInt32(index * 960), payload: stream[index], arrival: now + 1_000)
            }
            frame.withUnsafeMutableBufferPointer { playout.render(at: now + 7_000, into: $0) }
            output += frame
        }
        return output
    }

    @Test func oneSpeakerComesOutExactlyAsDecoded() throws {
        let packets = try loudPackets(count: 50)
        let playout = Playout(jitter: AudioEngineConfiguration.defaultJitter, volumes: try VolumeStore(path: nil))
        let heard = render(playout, packets: ["ana": packets], frames: 50)
        let decoder = try OpusDecoder()
        let decoded = try packets.flatMap { try decoder.decode($0).samples }
        #expect(heard == decoded)
        #expect(heard.contains { abs(Int($0)) > 20_000 })
    }

    @Test func twoSpeakersAreMixedWithHeadroom() throws {
        let packets = try loudPackets(count: 50)
        let playout = Playout(jitter: AudioEngineConfiguration.defaultJitter, volumes: try VolumeStore(path: nil))
        let heard = render(playout, packets: ["ana": packets, "bo": packets], frames: 50)
        let peak = heard.map { abs(Int($0)) }.max() ?? 0
        // Two near-full-scale copies would sum to about 58,000; the soft clipper keeps them below full scale.
        #expect(peak > 24_000 && peak < 32_767)
        let statistics = playout.statistics
        #expect(statistics.map(\.speaker) == ["ana", "bo"])
        // A sine at 90 % of full scale has an RMS 4 dB below overload.
        #expect(statistics.allSatisfy { $0.packetsReceived == 50 && $0.lost == 0 && $0.level == 4 })
        playout.removeSpeaker("bo")
        var frame = [Int16](repeating: 0, count: 960)
        frame.withUnsafeMutableBufferPointer { playout.render(at: 1_100_000, into: $0) }
        #expect(playout.statistics.map(\.speaker) == ["ana"])
    }
}
