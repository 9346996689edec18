import AudioCodec
import AudioCore
import Synchronization

/// One encoded 20 ms frame, ready for the media layer to put in an RTP packet.
public struct EncodedAudio: Sendable, Equatable {
    /// The Opus packet.
    public var payload: [UInt8]
    /// The RTP timestamp at 48 kHz. It advances 960 per captured frame whether or not the frame is sent, so
    /// a gap (mute, push-to-talk closed, DTX) shows to receivers as a timestamp jump.
    public var timestamp: UInt32
    /// The frame's level in -dBov (0 loudest, 127 silence), for the RFC 6464 header extension.
    public var level: UInt8
    /// Whether voice activity detection heard speech in the frame (RFC 6464's V flag).
    public var voice: Bool

    /// Creates an encoded frame.
    public init(payload: [UInt8], timestamp: UInt32, level: UInt8, voice: Bool) {
        self.payload = payload
        self.timestamp = timestamp
        self.level = level
        self.voice = voice
    }
}

/// The microphone's talking controls, shared between the thread that handles keys and the media thread.
public final class TalkSwitch: Sendable {
    private let control: Mutex<TalkControl>

    /// A switch starting from `control`.
    public init(_ control: TalkControl = TalkControl()) {
        self.control = Mutex(control)
    }

    /// The controls as they are now.
    public var current: TalkControl { control.withLock { $0 } }

    /// Mutes or unmutes the microphone.
    public func setMuted(_ muted: Bool) {
        control.withLock { $0.muted = muted }
    }

    /// Chooses how the microphone opens when not muted.
    public func setMode(_ mode: TalkMode) {
        control.withLock { $0.mode = mode }
    }

    /// Sets the voice-activated threshold in -dBov (lower is louder).
    public func setVoiceThreshold(_ dBov: UInt8) {
        control.withLock { $0.voiceThreshold = dBov }
    }

    /// The talk key was pressed at `milliseconds` (monotonic): push-to-talk opens for its hold.
    public func talkKeyPressed(at milliseconds: Int64) {
        control.withLock { $0.talkKeyPressed(at: milliseconds) }
    }

    /// Records a frame's level and answers whether the microphone is open at `milliseconds`.
    func observe(dBov: UInt8, at milliseconds: Int64) -> Bool {
        control.withLock { control in
            control.observe(dBov: dBov, at: milliseconds)
            return control.isOpen(at: milliseconds)
        }
    }
}

/// Counts of what the send path has done.
public struct SendStatistics: Sendable, Equatable {
    /// 20 ms frames taken from the microphone.
    public var framesCaptured = 0
    /// Packets handed to the media layer.
    public var packetsSent = 0
    /// Bytes of Opus payload handed to the media layer.
    public var bytesSent = 0
    /// Frames not sent because the encoder was in DTX (silence).
    public var dtxFrames = 0
    /// Frames not sent because the microphone was closed (muted, push-to-talk released, below the threshold).
    public var closedFrames = 0

    /// Creates empty counters.
    public init() {}
}

/// The send path for one 20 ms frame at a time: echo cancellation, voice processing, level, talking controls
/// and Opus. Used by one thread at a time: the room screen's media thread calls ``prepare(_:played:at:)`` (the
/// media layer encodes); ``process(_:played:at:)`` adds the Opus encode for a caller that has no encoder.
public final class SendPipeline {
    /// How the send path is set up.
    public struct Configuration: Sendable {
        /// speexdsp noise suppression, automatic gain and voice activity detection on the microphone.
        public var voiceProcessing: Bool
        /// speexdsp acoustic echo cancellation against what is played (`--echo-cancel`).
        public var echoCancellation: Bool
        /// The Opus encoder's settings.
        public var encoder: OpusEncoder.Configuration
        /// The RTP timestamp of the first frame.
        public var initialTimestamp: UInt32

        /// Creates a configuration; voice processing on, echo cancellation off, the room's encoder settings.
        public init(
            voiceProcessing: Bool = true, echoCancellation: Bool = false,
            encoder: OpusEncoder.Configuration = OpusEncoder.Configuration(),
            initialTimestamp: UInt32 = UInt32.random(in: 0...UInt32.max)
        ) {
            self.voiceProcessing = voiceProcessing
            self.echoCancellation = echoCancellation
            self.encoder = encoder
            self.initialTimestamp = initialTimestamp
        }

        /// The settings that suit a microphone spec: a person's microphone gets voice processing; a virtual
        /// one (a clean file or tone) does not need it, and a tone gets no DTX, because Opus's own activity
        /// detection takes a steady tone for silence after a moment and would stop sending it.
        public static func suggested(for input: DeviceSpec) -> Configuration {
            var configuration = Configuration(voiceProcessing: !input.isVirtual)
            if case .tone = input { configuration.encoder.discontinuousTransmission = false }
            return configuration
        }
    }

    /// The level of the last frame captured, whether or not it was sent, in -dBov.
    public private(set) var lastLevel = AudioLevel.silence
    /// Whether the last frame was voice, by voice activity detection (by level when processing is off).
    public private(set) var lastVoice = false
    /// What the path has done.
    public private(set) var statistics = SendStatistics()

    private let talk: TalkSwitch
    private let encoder: OpusEncoder
    private let processor: VoiceProcessor?
    private let echoCanceller: EchoCanceller?
    private var timestamp: UInt32
    private var appliedLoss: Int
    private let packet: UnsafeMutableRawBufferPointer
    private let cleaned: UnsafeMutableBufferPointer<Int16>

    /// Creates the codec and processors for `configuration`; `talk` decides whether frames are sent.
    public init(configuration: Configuration = Configuration(), talk: TalkSwitch) throws(AudioCodecError) {
        self.talk = talk
        encoder = try OpusEncoder(configuration: configuration.encoder)
        let canceller = configuration.echoCancellation ? try EchoCanceller() : nil
        echoCanceller = canceller
        processor =
            configuration.voiceProcessing || canceller != nil
            ? try VoiceProcessor(
                configuration: VoiceProcessor.Configuration(
                    noiseSuppression: configuration.voiceProcessing, automaticGain: configuration.voiceProcessing,
                    voiceActivityDetection: configuration.voiceProcessing),
                echoCanceller: canceller)
            : nil
        timestamp = configuration.initialTimestamp
        appliedLoss = configuration.encoder.expectedLossPercent
        packet = .allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 16)
        cleaned = .allocate(capacity: AudioFormat.samplesPerFrame)
        cleaned.initialize(repeating: 0)
    }

    deinit {
        packet.deallocate()
        cleaned.deallocate()
    }

    /// The RTP timestamp the next frame will carry.
    public var nextTimestamp: UInt32 { timestamp }

    /// Tells the encoder how many packets receivers lose, so it sizes its FEC (0 turns FEC data off).
    public func setExpectedLoss(percent: Int) {
        let clamped = min(100, max(0, percent))
        guard clamped != appliedLoss else { return }
        // Only a libopus failure on a valid encoder could refuse this; the old setting then stays.
        if (try? encoder.setExpectedLoss(percent: clamped)) != nil { appliedLoss = clamped }
    }

    /// Cleans one captured frame of 960 samples in place (echo cancellation against `played`, when enabled;
    /// then voice processing), measures its level and answers whether the talking controls let it be sent,
    /// without encoding it: for a media layer that encodes itself (the room screen's `AudioFeed`).
    public func prepare(
        _ frame: UnsafeMutableBufferPointer<Int16>, played: UnsafeBufferPointer<Int16>?, at milliseconds: Int64
    ) -> Bool {
        guard frame.count == AudioFormat.samplesPerFrame else { return false }
        statistics.framesCaptured += 1
        timestamp &+= AudioFormat.rtpTimestampStep

        if let echoCanceller, let played, played.count == frame.count {
            if (try? echoCanceller.cancel(captured: UnsafeBufferPointer(frame), played: played, output: cleaned))
                != nil
            {
                frame.baseAddress!.update(from: cleaned.baseAddress!, count: frame.count)
            }
        }
        let level: UInt8
        let voice: Bool
        if let processor {
            let heard = (try? processor.process(frame)) ?? false
            level = AudioLevel.dBov(UnsafeBufferPointer(frame))
            voice = processor.configuration.voiceActivityDetection ? heard : level <= Self.voiceLevel
        } else {
            level = AudioLevel.dBov(UnsafeBufferPointer(frame))
            voice = level <= Self.voiceLevel
        }
        lastLevel = level
        lastVoice = voice

        guard talk.observe(dBov: level, at: milliseconds) else {
            statistics.closedFrames += 1
            return false
        }
        return true
    }

    /// Processes one captured frame of 960 samples in place (echo cancellation against `played`, the frame
    /// played at the same time, when enabled; then voice processing) and returns the packet to send, or nil
    /// when nothing should be sent (microphone closed, or DTX silence). `milliseconds` is the monotonic time,
    /// for the talking controls.
    public func process(
        _ frame: UnsafeMutableBufferPointer<Int16>, played: UnsafeBufferPointer<Int16>?, at milliseconds: Int64
    ) -> EncodedAudio? {
        let frameTimestamp = timestamp
        guard prepare(frame, played: played, at: milliseconds) else { return nil }
        let level = lastLevel
        let voice = lastVoice
        let written: Int
        do {
            written = try encoder.encode(UnsafeBufferPointer(frame), into: packet)
        } catch {
            // The frame is the right size and the buffer the largest Opus packet: libopus has nothing to refuse.
            return nil
        }
        guard written > 2 else {
            statistics.dtxFrames += 1
            return nil
        }
        statistics.packetsSent += 1
        statistics.bytesSent += written
        return EncodedAudio(
            payload: Array(UnsafeRawBufferPointer(rebasing: packet[0..<written])), timestamp: frameTimestamp,
            level: level, voice: voice)
    }

    /// Without voice activity detection, frames at least this loud (-dBov) count as voice.
    static let voiceLevel: UInt8 = 50
}
