internal import CSpeexDSP

/// Cleans up the microphone signal before it is encoded: noise suppression, automatic gain control and voice
/// activity detection (speexdsp's preprocessor), optionally with residual echo suppression from an
/// `EchoCanceller`.
///
/// Processing works in place on frames of the size given at creation and does not allocate. One thread at a
/// time.
public final class VoiceProcessor {
    /// How the preprocessor is set up. The defaults are what a speaker's microphone uses.
    public struct Configuration: Sendable, Equatable {
        /// Samples per frame; 480 (10 ms) or 960 (20 ms) at 48 kHz.
        public var frameSamples: Int
        /// Samples per second.
        public var sampleRate: Int
        /// Whether to suppress stationary noise (fans, hum).
        public var noiseSuppression: Bool
        /// Maximum attenuation of noise, in dB (a negative number).
        public var noiseSuppressionDecibels: Int
        /// Whether to even out the speaker's level.
        public var automaticGain: Bool
        /// The most the gain control may amplify, in dB.
        public var maximumGainDecibels: Int
        /// Whether to decide, frame by frame, if someone is talking.
        public var voiceActivityDetection: Bool

        /// Creates a configuration; every parameter has the default for a speaker's microphone.
        public init(
            frameSamples: Int = 960, sampleRate: Int = 48_000, noiseSuppression: Bool = true,
            noiseSuppressionDecibels: Int = -30, automaticGain: Bool = true, maximumGainDecibels: Int = 20,
            voiceActivityDetection: Bool = true
        ) {
            self.frameSamples = frameSamples
            self.sampleRate = sampleRate
            self.noiseSuppression = noiseSuppression
            self.noiseSuppressionDecibels = noiseSuppressionDecibels
            self.automaticGain = automaticGain
            self.maximumGainDecibels = maximumGainDecibels
            self.voiceActivityDetection = voiceActivityDetection
        }
    }

    private let state: OpaquePointer
    /// Whether the last frame held voice, for the detector's hysteresis.
    private var wasSpeech = false
    /// The speech probability (percent) above which a frame starts voice, and above which voice continues:
    /// speexdsp's own defaults for its detector.
    static let speechStart = 35
    static let speechContinue = 20
    /// The setup this processor was created with.
    public let configuration: Configuration
    // Kept so the echo state outlives this preprocessor, which holds a pointer to it.
    private let echoCanceller: EchoCanceller?

    /// Creates a preprocessor; with `echoCanceller`, it also suppresses the echo that the canceller leaves.
    public init(
        configuration: Configuration = Configuration(), echoCanceller: EchoCanceller? = nil
    ) throws(AudioCodecError) {
        let place = "VoiceProcessor.init"
        guard configuration.frameSamples > 0, configuration.sampleRate > 0 else {
            throw .invalidSetting(place: place, detail: "frame size and sample rate must be positive")
        }
        if let echoCanceller, echoCanceller.frameSamples != configuration.frameSamples {
            throw .wrongFrameSize(
                place: place, expected: configuration.frameSamples, actual: echoCanceller.frameSamples)
        }
        guard
            let state = speex_preprocess_state_init(
                Int32(configuration.frameSamples), Int32(configuration.sampleRate))
        else {
            throw .speex(place: place, detail: "could not create the preprocessor state")
        }
        self.state = state
        self.configuration = configuration
        self.echoCanceller = echoCanceller
        let settings: [(Int32, Int32)] = [
            (SPEEX_PREPROCESS_SET_DENOISE, configuration.noiseSuppression ? 1 : 0),
            (SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, Int32(configuration.noiseSuppressionDecibels)),
            (SPEEX_PREPROCESS_SET_AGC, configuration.automaticGain ? 1 : 0),
            (SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, Int32(configuration.maximumGainDecibels)),
        ]
        // Voice activity is decided here, on the speech probability the preprocessor computes for every frame,
        // with speexdsp's own thresholds: its SPEEX_PREPROCESS_SET_VAD request does the same, but prints a
        // warning to the process's stderr each time, which would land in a person's terminal.
        // Every property is set, so a throw from here on runs `deinit`, which frees the state.
        for (request, value) in settings where clubroom_speex_preprocess_set_int(state, request, value) != 0 {
            throw .speex(place: place, detail: "request \(request) was refused")
        }
        if let echoCanceller {
            _ = clubroom_speex_preprocess_set_echo_state(state, echoCanceller.state)
        }
    }

    deinit {
        speex_preprocess_state_destroy(state)
    }

    /// Processes one frame in place and returns whether it holds voice (always true when voice activity
    /// detection is off).
    public func process(_ frame: UnsafeMutableBufferPointer<Int16>) throws(AudioCodecError) -> Bool {
        guard frame.count == configuration.frameSamples, let samples = frame.baseAddress else {
            throw .wrongFrameSize(
                place: "VoiceProcessor.process", expected: configuration.frameSamples, actual: frame.count)
        }
        _ = speex_preprocess_run(state, samples)
        guard configuration.voiceActivityDetection else { return true }
        wasSpeech = Self.holdsVoice(probability: speechProbability, after: wasSpeech)
        return wasSpeech
    }

    /// Whether a frame with this speech probability (percent) holds voice, given whether the frame before did:
    /// above 35 % starts voice, and voice continues above 20 %.
    static func holdsVoice(probability: Int, after wasSpeech: Bool) -> Bool {
        probability > speechStart || (wasSpeech && probability > speechContinue)
    }

    /// Processes a frame held in an array; convenient for tests and tools.
    public func process(_ frame: inout [Int16]) throws(AudioCodecError) -> Bool {
        try frame.withUnsafeMutableBufferPointer { samples throws(AudioCodecError) in try process(samples) }
    }

    /// The preprocessor's speech probability for the last frame, 0...100.
    public var speechProbability: Int {
        var value: Int32 = 0
        _ = clubroom_speex_preprocess_get_int(state, SPEEX_PREPROCESS_GET_PROB, &value)
        return Int(value)
    }
}
