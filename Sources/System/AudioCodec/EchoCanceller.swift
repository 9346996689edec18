internal import CSpeexDSP

/// Removes the room's own playback from the microphone signal (acoustic echo cancellation with speexdsp),
/// for people who listen on loudspeakers (`--echo-cancel`).
///
/// Feed it each captured frame together with the frame that was played at the same time; pass it to a
/// `VoiceProcessor` as well so that the residual echo is suppressed. Does not allocate after `init`.
/// One thread at a time.
public final class EchoCanceller {
    /// Samples per frame, 480 (10 ms) or 960 (20 ms) at 48 kHz.
    public let frameSamples: Int
    /// Length of the echo path the filter models, in samples.
    public let tailSamples: Int
    let state: OpaquePointer

    /// Creates a canceller for frames of `frameSamples` and an echo tail of `tailMilliseconds` (about
    /// 200 ms covers a room and the devices' buffering).
    public init(
        frameSamples: Int = 960, sampleRate: Int = 48_000, tailMilliseconds: Int = 200
    ) throws(AudioCodecError) {
        let place = "EchoCanceller.init"
        guard frameSamples > 0, sampleRate > 0, tailMilliseconds > 0 else {
            throw .invalidSetting(place: place, detail: "frame size, sample rate and tail must be positive")
        }
        let tail = sampleRate * tailMilliseconds / 1000
        guard let state = speex_echo_state_init(Int32(frameSamples), Int32(tail)) else {
            throw .speex(place: place, detail: "could not create the echo canceller state")
        }
        guard clubroom_speex_echo_set_sampling_rate(state, Int32(sampleRate)) == 0 else {
            speex_echo_state_destroy(state)
            throw .speex(place: place, detail: "sample rate \(sampleRate) was refused")
        }
        self.state = state
        self.frameSamples = frameSamples
        self.tailSamples = tail
    }

    deinit {
        speex_echo_state_destroy(state)
    }

    /// Writes `captured` minus the echo of `played` into `output`; all three hold `frameSamples` samples.
    public func cancel(
        captured: UnsafeBufferPointer<Int16>, played: UnsafeBufferPointer<Int16>,
        output: UnsafeMutableBufferPointer<Int16>
    ) throws(AudioCodecError) {
        // Checked one by one: an array of the three counts would allocate on every frame.
        let wrong =
            captured.count != frameSamples ? captured.count : played.count != frameSamples ? played.count : output.count
        guard wrong == frameSamples else {
            throw .wrongFrameSize(place: "EchoCanceller.cancel", expected: frameSamples, actual: wrong)
        }
        speex_echo_cancellation(state, captured.baseAddress, played.baseAddress, output.baseAddress)
    }

    /// Forgets what the filter has learnt, for when the devices change.
    public func reset() {
        speex_echo_state_reset(state)
    }
}
