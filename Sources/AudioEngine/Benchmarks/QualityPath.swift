import AudioCodec
import AudioCore
import AudioDevices

/// Speech through the whole client path (send pipeline, link, jitter buffer, decoder, mixer) beside libopus
/// alone with the same settings and the same lost frames, for `bench/quality`'s PESQ comparison.
public enum QualityPath {
    /// What came out of each path, 48 kHz mono, the same length as the input.
    public struct Result: Sendable, Equatable {
        /// Through the engine's send and receive paths.
        public var path: [Int16]
        /// Through one libopus encoder and decoder: a lost frame is rebuilt from the next packet's FEC when
        /// that one arrived, and concealed otherwise; DTX frames are not sent, as over RTP.
        public var opusAlone: [Int16]
        /// Frames lost on the link.
        public var lostFrames: Int
        /// The receive path's statistics.
        public var receiver: SpeakerStatistics?
    }

    /// Sends `speech` (48 kHz mono) through both paths with `link`'s loss (and jitter, for the engine path);
    /// the encoders expect the link's loss so they send FEC. `voiceProcessing` turns the microphone processing
    /// on in the engine path, as on a person's microphone.
    public static func run(
        speech: [Int16], link: LinkImpairment, voiceProcessing: Bool, leadInSeconds: Int = 2
    ) throws -> Result {
        // Both paths first hear `leadInSeconds` of the same speech under the same loss, as a session would
        // have before the moment measured: the encoders and the jitter buffer are in their steady state.
        let frame = AudioFormat.samplesPerFrame
        let leadFrames = speech.isEmpty ? 0 : leadInSeconds * 1000 / AudioFormat.frameMilliseconds
        var signal = (0..<(leadFrames * frame)).map { speech[$0 % speech.count] }
        signal += speech
        let frameCount = (signal.count + frame - 1) / frame
        var encoderSettings = OpusEncoder.Configuration()
        encoderSettings.expectedLossPercent = Int(link.lossPercent.rounded(.up))

        let sender = try SendPipeline(
            configuration: SendPipeline.Configuration(
                voiceProcessing: voiceProcessing, encoder: encoderSettings, initialTimestamp: 0),
            talk: TalkSwitch())
        let loopback = SteppedLoopback(input: SampleInput(samples: signal, loops: false), sender: sender, link: link)
        // Extra frames flush what the jitter buffer still holds; the delay is taken off the front below.
        let heard = try loopback.run(frames: frameCount + 25)
        let opus = try opusAlone(speech: signal, frames: frameCount, link: link, settings: encoderSettings)
        // Capture and playout run in the same 20 ms steps, so the path's delay is a whole number of frames.
        let delay = wholeFrameDelay(of: heard, against: opus, maximumFrames: 20) * frame
        var path = Array(heard.dropFirst(delay + leadFrames * frame).prefix(speech.count))
        path += [Int16](repeating: 0, count: max(0, speech.count - path.count))
        let lost = (leadFrames..<frameCount).filter { link.isLost(frame: $0) }.count
        return Result(
            path: path, opusAlone: Array(opus.dropFirst(leadFrames * frame)), lostFrames: lost,
            receiver: loopback.receiver.statistics.first)
    }

    /// The shift, in whole frames, at which `delayed` best matches `reference` (largest correlation).
    static func wholeFrameDelay(of delayed: [Int16], against reference: [Int16], maximumFrames: Int) -> Int {
        var best = (frames: 0, correlation: -Double.infinity)
        for frames in 0...maximumFrames {
            let shift = frames * AudioFormat.samplesPerFrame
            let count = min(reference.count, delayed.count - shift)
            guard count > 0 else { break }
            var sum = 0.0
            for index in 0..<count {
                sum += Double(reference[index]) * Double(delayed[index + shift])
            }
            if sum > best.correlation { best = (frames, sum) }
        }
        return best.frames
    }

    static func opusAlone(
        speech: [Int16], frames: Int, link: LinkImpairment, settings: OpusEncoder.Configuration
    ) throws -> [Int16] {
        let encoder = try OpusEncoder(configuration: settings)
        let decoder = try OpusDecoder()
        let packets: [[UInt8]] = try (0..<frames).map { index in
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            let start = index * AudioFormat.samplesPerFrame
            let end = min(speech.count, start + AudioFormat.samplesPerFrame)
            frame.replaceSubrange(0..<(end - start), with: speech[start..<end])
            return try encoder.encode(frame)
        }
        var output: [Int16] = []
        output.reserveCapacity(frames * AudioFormat.samplesPerFrame)
        // As over RTP, DTX frames (one or two bytes) are not sent: the decoder conceals them like lost ones.
        func arrives(_ index: Int) -> Bool { !link.isLost(frame: index) && packets[index].count > 2 }
        for index in 0..<frames {
            if arrives(index) {
                output += try decoder.decode(packets[index]).samples
            } else if index + 1 < frames, arrives(index + 1) {
                var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
                _ = try frame.withUnsafeMutableBufferPointer { target throws(AudioCodecError) in
                    try packets[index + 1].withUnsafeBytes { bytes in
                        Swift.Result { () throws(AudioCodecError) in
                            try decoder.recover(fromNextPacket: bytes, into: target)
                        }
                    }.get()
                }
                output += frame
            } else {
                output += try decoder.decode(nil).samples
            }
        }
        return Array(output.prefix(speech.count))
    }
}
