internal import COpus

/// An Opus encoder set up for speech in a room: 48 kHz mono, 20 ms frames, VBR around 24 kbit/s, capped to
/// wideband, in-band FEC and DTX on.
///
/// The encoder owns its libopus state and is used from one thread at a time (the capture side of a session).
/// `encode` writes into a buffer the caller owns and does not allocate, so it may run on an audio thread.
public final class OpusEncoder {
    /// Samples per second of the PCM this encoder takes.
    public static let sampleRate = 48_000
    /// Samples in one 20 ms frame at 48 kHz mono.
    public static let frameSamples = 960
    /// The largest packet `encode` writes; RFC 7587 recommends bounding Opus payloads well below the MTU.
    public static let maxPacketBytes = 1_275

    /// How the encoder is set up. The defaults are what a speaker in a room uses.
    public struct Configuration: Sendable, Equatable {
        /// Target bit rate in bits per second (VBR, so packets vary around it).
        public var bitrate: Int
        /// 0 (cheapest) to 10 (best). At 48 kHz complexity 5 costs about half of complexity 10's CPU and
        /// sounds the same for speech at this bit rate.
        public var complexity: Int
        /// Percentage of packets the receivers expect to lose; 0 disables the FEC data even with FEC on.
        public var expectedLossPercent: Int
        /// In-band forward error correction: each packet carries a coarse copy of the previous one.
        public var forwardErrorCorrection: Bool
        /// Discontinuous transmission: during silence the encoder emits tiny packets that need not be sent.
        public var discontinuousTransmission: Bool

        /// Creates a configuration; every parameter has the room default.
        public init(
            bitrate: Int = 24_000, complexity: Int = 5, expectedLossPercent: Int = 0,
            forwardErrorCorrection: Bool = true, discontinuousTransmission: Bool = true
        ) {
            self.bitrate = bitrate
            self.complexity = complexity
            self.expectedLossPercent = expectedLossPercent
            self.forwardErrorCorrection = forwardErrorCorrection
            self.discontinuousTransmission = discontinuousTransmission
        }
    }

    private let state: OpaquePointer
    /// The configuration in effect, including the latest expected loss.
    public private(set) var configuration: Configuration

    /// Creates an encoder with the given configuration.
    public init(configuration: Configuration = Configuration()) throws(AudioCodecError) {
        var error: Int32 = 0
        guard
            let state = opus_encoder_create(
                opus_int32(Self.sampleRate), 1, OPUS_APPLICATION_VOIP, &error),
            error == OPUS_OK
        else {
            throw .opus(code: error, place: "OpusEncoder.init")
        }
        self.state = state
        self.configuration = configuration
        // Once every property is set, a throw runs `deinit`, which frees the state.
        try apply(configuration)
    }

    deinit {
        opus_encoder_destroy(state)
    }

    private func apply(_ configuration: Configuration) throws(AudioCodecError) {
        guard (0...10).contains(configuration.complexity) else {
            throw .invalidSetting(
                place: "OpusEncoder.configure", detail: "complexity \(configuration.complexity) is not in 0...10")
        }
        let place = "OpusEncoder.configure"
        try check(clubroom_opus_set_bitrate(state, opus_int32(configuration.bitrate)), place)
        try check(clubroom_opus_set_vbr(state, 1), place)
        try check(clubroom_opus_set_complexity(state, opus_int32(configuration.complexity)), place)
        try check(clubroom_opus_set_signal(state, OPUS_SIGNAL_VOICE), place)
        // At 24 kbit/s libopus only spends bits on FEC when capped to wideband; speech loses little by it.
        try check(clubroom_opus_set_max_bandwidth(state, OPUS_BANDWIDTH_WIDEBAND), place)
        try check(clubroom_opus_set_inband_fec(state, configuration.forwardErrorCorrection ? 1 : 0), place)
        try check(clubroom_opus_set_dtx(state, configuration.discontinuousTransmission ? 1 : 0), place)
        try setExpectedLoss(percent: configuration.expectedLossPercent)
    }

    /// The bit rate while a file plays into the room: music needs about 64 kbit/s mono to keep its highs.
    public static let musicBitrate = 64_000

    /// Whether the encoder is set for music (a file played into the room) rather than speech.
    public private(set) var isMusic = false

    /// Switches between speech (the configuration's bit rate, the voice signal, wideband, DTX as configured) and
    /// music: `OPUS_SET_SIGNAL(OPUS_SIGNAL_MUSIC)` (libopus then prefers CELT, as `OPUS_APPLICATION_AUDIO` would),
    /// ``musicBitrate``, fullband and no DTX, so that quiet passages are not cut. Only sets fields of the encoder:
    /// safe on the media thread.
    public func setMusic(_ music: Bool) throws(AudioCodecError) {
        guard music != isMusic else { return }
        let place = "OpusEncoder.setMusic"
        try check(
            clubroom_opus_set_bitrate(state, opus_int32(music ? Self.musicBitrate : configuration.bitrate)), place)
        try check(clubroom_opus_set_signal(state, music ? OPUS_SIGNAL_MUSIC : OPUS_SIGNAL_VOICE), place)
        try check(
            clubroom_opus_set_max_bandwidth(state, music ? OPUS_BANDWIDTH_FULLBAND : OPUS_BANDWIDTH_WIDEBAND), place)
        try check(
            clubroom_opus_set_dtx(state, !music && configuration.discontinuousTransmission ? 1 : 0), place)
        isMusic = music
    }

    /// Tells the encoder how many packets receivers are losing, so it sizes its FEC data; values are clamped
    /// to 0...100. Call it whenever receiver reports arrive.
    public func setExpectedLoss(percent: Int) throws(AudioCodecError) {
        let clamped = min(max(percent, 0), 100)
        try check(clubroom_opus_set_packet_loss_perc(state, opus_int32(clamped)), "OpusEncoder.setExpectedLoss")
        configuration.expectedLossPercent = clamped
    }

    /// Encodes one 20 ms frame (960 samples) into `packet` and returns the number of bytes written.
    ///
    /// A result of one or two bytes means the frame carried nothing worth sending (DTX in silence); the
    /// sender may skip it. `packet` should hold `maxPacketBytes`; a smaller buffer may be refused.
    public func encode(
        _ frame: UnsafeBufferPointer<Int16>, into packet: UnsafeMutableRawBufferPointer
    ) throws(AudioCodecError) -> Int {
        guard frame.count == Self.frameSamples, let samples = frame.baseAddress else {
            throw .wrongFrameSize(place: "OpusEncoder.encode", expected: Self.frameSamples, actual: frame.count)
        }
        guard let output = packet.baseAddress, !packet.isEmpty else {
            throw .opus(OpusStatus.bufferTooSmall, place: "OpusEncoder.encode", detail: "empty output buffer")
        }
        let capacity = opus_int32(min(packet.count, Self.maxPacketBytes))
        let written = opus_encode(
            state, samples, Int32(Self.frameSamples), output.assumingMemoryBound(to: UInt8.self), capacity)
        guard written >= 0 else {
            throw .opus(code: written, place: "OpusEncoder.encode")
        }
        return Int(written)
    }

    /// Encodes one frame from an array into a byte array; convenient for tests and tools, allocates.
    public func encode(_ frame: [Int16]) throws(AudioCodecError) -> [UInt8] {
        var packet = [UInt8](repeating: 0, count: Self.maxPacketBytes)
        let count = try frame.withUnsafeBufferPointer { samples throws(AudioCodecError) in
            // `withUnsafeMutableBytes` rethrows untyped errors, so the typed error travels out in a `Result`.
            let result = packet.withUnsafeMutableBytes { bytes in
                Result { () throws(AudioCodecError) in try encode(samples, into: bytes) }
            }
            return try result.get()
        }
        packet.removeSubrange(count...)
        return packet
    }

    /// Whether the last encoded frame was in discontinuous transmission (silence the receiver fills in).
    public var isInDTX: Bool {
        var value: opus_int32 = 0
        guard clubroom_opus_get_in_dtx(state, &value) == OPUS_OK else { return false }
        return value != 0
    }

    /// The encoder's algorithmic delay in samples at 48 kHz.
    public var lookaheadSamples: Int {
        var value: opus_int32 = 0
        guard clubroom_opus_get_lookahead(state, &value) == OPUS_OK else { return 0 }
        return Int(value)
    }

    private func check(_ code: Int32, _ place: String) throws(AudioCodecError) {
        guard code == OPUS_OK else { throw .opus(code: code, place: place) }
    }
}
