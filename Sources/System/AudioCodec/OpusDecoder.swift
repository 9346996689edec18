internal import COpus

/// An Opus decoder for one remote speaker: 48 kHz mono, 20 ms frames.
///
/// Every call fills the caller's buffer with a full frame, whatever arrives: a good packet is decoded, a lost
/// one is recovered from the next packet's FEC data or concealed, and a malformed one is concealed and
/// counted. Decoding and concealing do not allocate after `init` (only building the error for a malformed packet
/// does). One thread at a time.
public final class OpusDecoder {
    /// Samples per second of the PCM this decoder produces.
    public static let sampleRate = 48_000
    /// Samples in one 20 ms frame at 48 kHz mono.
    public static let frameSamples = 960

    /// How a frame was produced.
    public enum Outcome: Sendable, Equatable {
        /// The packet decoded normally.
        case decoded
        /// The frame was rebuilt from the FEC data of the packet after it (or concealed when that packet
        /// carried none; libopus does not say which).
        case recoveredFromNextPacket
        /// No packet: the frame was concealed (packet loss concealment).
        case concealed
        /// The packet could not be decoded; the frame was concealed instead and the error counted.
        case malformed(AudioCodecError)
    }

    private let state: OpaquePointer
    /// Packets that failed to decode since this decoder was created.
    public private(set) var malformedPacketCount = 0

    /// Creates a decoder.
    public init() throws(AudioCodecError) {
        var error: Int32 = 0
        guard let state = opus_decoder_create(opus_int32(Self.sampleRate), 1, &error), error == OPUS_OK else {
            throw .opus(code: error, place: "OpusDecoder.init")
        }
        self.state = state
    }

    deinit {
        opus_decoder_destroy(state)
    }

    /// Decodes `packet` into `frame`, which must hold exactly 960 samples.
    ///
    /// An empty packet is treated as lost and concealed. A packet libopus rejects, or one holding other than
    /// 20 ms of audio, is concealed, counted in `malformedPacketCount` and reported as `.malformed`.
    public func decode(
        _ packet: UnsafeRawBufferPointer, into frame: UnsafeMutableBufferPointer<Int16>
    ) throws(AudioCodecError) -> Outcome {
        let output = try frameStart(frame, place: "OpusDecoder.decode")
        guard let bytes = packet.baseAddress, !packet.isEmpty else {
            conceal(output)
            return .concealed
        }
        let length = opus_int32(packet.count)
        let input = bytes.assumingMemoryBound(to: UInt8.self)
        // The packet's duration is checked first so that a valid packet of another length (which would make
        // libopus write a different number of samples) is rejected as well as a garbled one.
        let duration = opus_packet_get_nb_samples(input, length, opus_int32(Self.sampleRate))
        if duration != opus_int32(Self.frameSamples) {
            let error: AudioCodecError =
                duration < 0
                ? .opus(code: duration, place: "OpusDecoder.decode")
                : .wrongFrameSize(place: "OpusDecoder.decode", expected: Self.frameSamples, actual: Int(duration))
            return concealMalformed(output, error)
        }
        let decoded = opus_decode(state, input, length, output, Int32(Self.frameSamples), 0)
        guard decoded == Int32(Self.frameSamples) else {
            return concealMalformed(output, .opus(code: min(decoded, -1), place: "OpusDecoder.decode"))
        }
        return .decoded
    }

    /// Rebuilds the frame before `nextPacket` from its FEC data, for when that frame was lost.
    ///
    /// Call this for the lost frame, then `decode(_:into:)` with the same packet for the next one. A malformed
    /// `nextPacket` is concealed and counted like in `decode`.
    public func recover(
        fromNextPacket nextPacket: UnsafeRawBufferPointer, into frame: UnsafeMutableBufferPointer<Int16>
    ) throws(AudioCodecError) -> Outcome {
        let output = try frameStart(frame, place: "OpusDecoder.recover")
        guard let bytes = nextPacket.baseAddress, !nextPacket.isEmpty else {
            conceal(output)
            return .concealed
        }
        let decoded = opus_decode(
            state, bytes.assumingMemoryBound(to: UInt8.self), opus_int32(nextPacket.count), output,
            Int32(Self.frameSamples), 1)
        guard decoded == Int32(Self.frameSamples) else {
            return concealMalformed(output, .opus(code: min(decoded, -1), place: "OpusDecoder.recover"))
        }
        return .recoveredFromNextPacket
    }

    /// Conceals one lost frame (packet loss concealment) into `frame`, which must hold 960 samples.
    public func conceal(into frame: UnsafeMutableBufferPointer<Int16>) throws(AudioCodecError) {
        conceal(try frameStart(frame, place: "OpusDecoder.conceal"))
    }

    /// Decodes a packet held in an array; convenient for tests and tools, allocates.
    public func decode(_ packet: [UInt8]?) throws(AudioCodecError) -> (samples: [Int16], outcome: Outcome) {
        var samples = [Int16](repeating: 0, count: Self.frameSamples)
        let outcome = try samples.withUnsafeMutableBufferPointer { frame throws(AudioCodecError) in
            guard let packet else {
                try conceal(into: frame)
                return Outcome.concealed
            }
            // `withUnsafeBytes` rethrows untyped errors, so the typed error travels out in a `Result`.
            let result = packet.withUnsafeBytes { bytes in
                Result { () throws(AudioCodecError) in try decode(bytes, into: frame) }
            }
            return try result.get()
        }
        return (samples, outcome)
    }

    private func frameStart(
        _ frame: UnsafeMutableBufferPointer<Int16>, place: String
    ) throws(AudioCodecError) -> UnsafeMutablePointer<Int16> {
        guard frame.count == Self.frameSamples, let start = frame.baseAddress else {
            throw .wrongFrameSize(place: place, expected: Self.frameSamples, actual: frame.count)
        }
        return start
    }

    private func conceal(_ output: UnsafeMutablePointer<Int16>) {
        if opus_decode(state, nil, 0, output, Int32(Self.frameSamples), 0) != Int32(Self.frameSamples) {
            output.update(repeating: 0, count: Self.frameSamples)
        }
    }

    private func concealMalformed(_ output: UnsafeMutablePointer<Int16>, _ error: AudioCodecError) -> Outcome {
        malformedPacketCount += 1
        conceal(output)
        return .malformed(error)
    }
}
