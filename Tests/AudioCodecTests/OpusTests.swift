import AudioCodec
import RoomTesting
import Testing

@Suite struct OpusTests {
    static let frame = OpusEncoder.frameSamples

    /// Encodes `signal` frame by frame and returns the packets.
    func encode(_ signal: [Int16], encoder: OpusEncoder) throws -> [[UInt8]] {
        stride(from: 0, to: signal.count, by: Self.frame).map { start in
            try! encoder.encode(Array(signal[start..<start + Self.frame]))
        }
    }

    @Test func aToneSurvivesEncodingAndDecodingAtItsFrequency() throws {
        let tone = Signals.tone(frequency: 440, count: 48_000)
        let encoder = try OpusEncoder()
        let decoder = try OpusDecoder()
        var decoded: [Int16] = []
        for packet in try encode(tone, encoder: encoder) {
            let (samples, outcome) = try decoder.decode(packet)
            #expect(outcome == .decoded)
            decoded += samples
        }
        #expect(decoded.count == 48_000)
        // Skip the first 100 ms, where the encoder's look-ahead and start-up are.
        let steady = decoded[4_800...]
        #expect(Signals.dominantFrequency(steady, candidates: Signals.candidates) == 440)
        let originalRMS = Signals.rms(tone[4_800...])
        let decodedRMS = Signals.rms(steady)
        #expect(decodedRMS > originalRMS * 0.7 && decodedRMS < originalRMS * 1.3)
    }

    @Test func packetsStayNearTheTargetBitrate() throws {
        let encoder = try OpusEncoder()
        let packets = try encode(Signals.speechLike(count: 48_000 * 2), encoder: encoder)
        let bitsPerSecond = packets.reduce(0) { $0 + $1.count } * 8 / 2
        #expect(bitsPerSecond > 12_000 && bitsPerSecond < 36_000)
        #expect(packets.allSatisfy { $0.count <= OpusEncoder.maxPacketBytes })
    }

    @Test func forwardErrorCorrectionRecoversALostPacketBetterThanConcealment() throws {
        let encoder = try OpusEncoder()
        try encoder.setExpectedLoss(percent: 20)
        #expect(encoder.configuration.expectedLossPercent == 20)
        let signal = Signals.speechLike(count: 48_000)
        let packets = try encode(signal, encoder: encoder)
        let lost = 25
        let delay = encoder.lookaheadSamples

        // The reference is the same stream decoded with nothing lost: the codec's delay and coloration are in
        // both, so the difference measures only what the loss cost.
        let clean = try OpusDecoder()
        var reference: [Int16] = []
        for packet in packets[...lost] { reference += try clean.decode(packet).samples }

        func errorOfLostFrame(useFEC: Bool) throws -> Double {
            let decoder = try OpusDecoder()
            for packet in packets[..<lost] { _ = try decoder.decode(packet) }
            var frame = [Int16](repeating: 0, count: Self.frame)
            let outcome = try frame.withUnsafeMutableBufferPointer { output in
                if useFEC {
                    return try packets[lost + 1].withUnsafeBytes {
                        try decoder.recover(fromNextPacket: $0, into: output)
                    }
                }
                try decoder.conceal(into: output)
                return .concealed
            }
            #expect(outcome == (useFEC ? .recoveredFromNextPacket : .concealed))
            let start = lost * Self.frame
            var squared = 0.0
            for index in 0..<Self.frame {
                let difference = Double(frame[index]) - Double(reference[start + index])
                squared += difference * difference
            }
            return squared
        }
        let withFEC = try errorOfLostFrame(useFEC: true)
        let withConcealment = try errorOfLostFrame(useFEC: false)
        #expect(delay > 0)
        #expect(withFEC < withConcealment / 2)
    }

    @Test func silenceTurnsIntoTinyPacketsWithDTX() throws {
        let encoder = try OpusEncoder()
        let silence = [Int16](repeating: 0, count: Self.frame)
        var sizes: [Int] = []
        for _ in 0..<50 { sizes.append(try encoder.encode(silence).count) }
        // After a 200 ms hangover the encoder sends one-byte packets, with a small comfort-noise update
        // every 400 ms.
        let afterHangover = sizes[10...]
        #expect(afterHangover.filter { $0 > 2 }.count <= 2, "packet sizes: \(sizes)")
        #expect(afterHangover.allSatisfy { $0 <= 16 }, "packet sizes: \(sizes)")
        #expect(encoder.isInDTX)
        _ = try encoder.encode(Signals.tone(frequency: 440, count: Self.frame))
        #expect(!encoder.isInDTX)
    }

    @Test func malformedPacketsAreConcealedAndCounted() throws {
        let encoder = try OpusEncoder()
        let good = try encoder.encode(Signals.tone(frequency: 440, count: Self.frame))
        let decoder = try OpusDecoder()
        #expect(try decoder.decode(good).outcome == .decoded)

        var generator = SplitMix64(seed: 42)
        var malformed = 0
        var inputs: [[UInt8]] = []
        for length in 1..<400 {
            inputs.append((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        for cut in 1..<good.count { inputs.append(Array(good[..<cut])) }
        // A valid 60 ms packet (code 0 with a 60 ms SILK configuration) is not a 20 ms frame.
        inputs.append([0x18, 0x00, 0x00])
        for input in inputs {
            let (samples, outcome) = try decoder.decode(input)
            #expect(samples.count == Self.frame)
            if case .malformed = outcome { malformed += 1 }
        }
        #expect(malformed > 0)
        #expect(decoder.malformedPacketCount == malformed)
        // An empty packet is a lost one: concealed, not counted.
        #expect(try decoder.decode([]).outcome == .concealed)
        #expect(decoder.malformedPacketCount == malformed)
        // The decoder still works afterwards.
        #expect(try decoder.decode(good).outcome == .decoded)
    }

    @Test func badSettingsAndFramesAreTypedErrors() throws {
        #expect(throws: AudioCodecError.self) { try OpusEncoder(configuration: .init(complexity: 11)) }
        let encoder = try OpusEncoder()
        #expect(throws: AudioCodecError.wrongFrameSize(place: "OpusEncoder.encode", expected: 960, actual: 10)) {
            try encoder.encode([Int16](repeating: 0, count: 10))
        }
        #expect(throws: AudioCodecError.self) { try OpusEncoder(configuration: .init(bitrate: -5)) }
    }
}
