import AudioCore
import ClientAudio
import Testing

/// `--echo-cancel`: the send path removes what the loudspeaker played from what the microphone heard.
@Suite struct EchoCancellationTests {
    /// A deterministic noise-like signal (speech-like in that it is broadband), 48 kHz.
    static func noise(count: Int, seed: UInt64) -> [Int16] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16(truncatingIfNeeded: Int64(state >> 33) % 8_000 - 4_000)
        }
    }

    /// Sends 4 s of pure echo (the microphone hears the loudspeaker 5 ms late, at half level) and returns the
    /// levels (-dBov) of the first and the last frames after processing.
    func echoLevels(cancel: Bool) throws -> (first: UInt8, last: UInt8) {
        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(voiceProcessing: false, echoCancellation: cancel),
            talk: TalkSwitch(), stream: SendPipeline.Stream(ssrc: 1))
        let frames = 200
        var packet = [UInt8](repeating: 0, count: SendPipeline.maxPacketBytes)
        let played = Self.noise(count: frames * 960 + 240, seed: 3)
        var levels: [UInt8] = []
        for index in 0..<frames {
            let start = index * 960 + 240
            var microphone = (0..<960).map { played[start - 240 + $0] / 2 }
            let reference = Array(played[start..<(start + 960)])
            _ = microphone.withUnsafeMutableBufferPointer { frame in
                reference.withUnsafeBufferPointer { played in
                    packet.withUnsafeMutableBytes {
                        sender.send(frame, played: played, into: $0)
                    }
                }
            }
            levels.append(sender.lastLevel)
        }
        return (levels[0], levels[frames - 1])
    }

    @Test func theLoudspeakerIsTakenOutOfTheMicrophone() throws {
        let plain = try echoLevels(cancel: false)
        let cancelled = try echoLevels(cancel: true)
        // Without cancellation the echo stays as loud as it came in.
        #expect(plain.last == plain.first)
        // With it, after 4 s the echo is at least 20 dB quieter (a larger -dBov is quieter).
        #expect(Int(cancelled.last) >= Int(plain.last) + 20)
    }
}
