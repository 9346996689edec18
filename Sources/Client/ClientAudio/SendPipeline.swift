import AudioCodec
import AudioCore
import AudioDevices
import MediaWire
import Synchronization

/// Whether the microphone is muted (the server's mute for this person), shared between the thread that handles
/// keys and the media thread: a muted microphone sends nothing.
public final class TalkSwitch: Sendable {
    private let muted: Atomic<Bool>

    /// A switch, muted or not.
    public init(muted: Bool = false) {
        self.muted = Atomic(muted)
    }

    /// Whether the microphone is muted now.
    public var isMuted: Bool { muted.load(ordering: .relaxed) }

    /// Mutes or unmutes the microphone.
    public func setMuted(_ muted: Bool) {
        self.muted.store(muted, ordering: .relaxed)
    }
}

/// Counts of what the send path has done.
public struct SendStatistics: Sendable, Equatable {
    /// 20 ms frames taken from the microphone.
    public var framesCaptured = 0
    /// Packets handed to the network.
    public var packetsSent = 0
    /// Bytes of Opus payload in them.
    public var bytesSent = 0
    /// Frames not sent because the encoder was in DTX (silence).
    public var dtxFrames = 0
    /// Frames not sent because the microphone was muted.
    public var closedFrames = 0
    /// Frames that carried a file played into the room.
    public var musicFrames = 0

    /// Creates empty counters.
    public init() {}
}

/// The send path, one 20 ms frame at a time, on the media thread: echo cancellation against what was played,
/// voice processing, the frame's level and voice decision, the mute, the Opus encoder and the RTP packet with
/// the RFC 6464 level extension. One level measurement serves the packet and the microphone's meter; the voice flag in the packet is the voice processing's decision (by level when
/// there is none). The encoder is the one whose settings the configuration chose (a tone gets no DTX).
///
/// Used by one thread at a time.
public final class SendPipeline {
    /// How the send path is set up.
    public struct Configuration: Sendable, Equatable {
        /// speexdsp noise suppression, automatic gain and voice activity detection on the microphone.
        public var voiceProcessing: Bool
        /// speexdsp acoustic echo cancellation against what is played (`--echo-cancel`).
        public var echoCancellation: Bool
        /// The Opus encoder's settings.
        public var encoder: OpusEncoder.Configuration

        /// Creates a configuration; voice processing on, echo cancellation off, the room's encoder settings.
        public init(
            voiceProcessing: Bool = true, echoCancellation: Bool = false,
            encoder: OpusEncoder.Configuration = OpusEncoder.Configuration()
        ) {
            self.voiceProcessing = voiceProcessing
            self.echoCancellation = echoCancellation
            self.encoder = encoder
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

    /// Where the packets go and how they are numbered.
    public struct Stream: Sendable, Equatable {
        /// The SSRC the server assigned.
        public var ssrc: UInt32
        /// The RTP payload type of Opus.
        public var payloadType: UInt8
        /// The one-byte header extension ID of the RFC 6464 level.
        public var audioLevelID: UInt8
        /// The first frame's RTP timestamp.
        public var initialTimestamp: UInt32
        /// The sequence number before the first packet's.
        public var initialSequence: UInt16
        /// The payload type of RFC 2198 redundancy, when the server takes it; nil never sends it.
        public var redPayloadType: UInt8?

        /// A stream; timestamps and sequence numbers start at random, as RFC 3550 asks.
        public init(
            ssrc: UInt32, payloadType: UInt8 = RTPAudioProfile.opusPayloadType,
            audioLevelID: UInt8 = RTPAudioProfile.audioLevelExtensionID,
            initialTimestamp: UInt32 = UInt32.random(in: 0...UInt32.max),
            initialSequence: UInt16 = UInt16.random(in: 0...UInt16.max), redPayloadType: UInt8? = nil
        ) {
            self.redPayloadType = redPayloadType
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.audioLevelID = audioLevelID
            self.initialTimestamp = initialTimestamp
            self.initialSequence = initialSequence
        }
    }

    /// The largest RTP packet the path writes: header, level extension, the largest Opus packet and, with
    /// redundancy, the RED headers and the earlier frames.
    public static let maxPacketBytes =
        RTPHeader.fixedLength + 8 + OpusEncoder.maxPacketBytes + 1
        + REDPayload.maxRedundantBlocks * (4 + REDPayload.maxBlockLength)

    /// The level of the last frame captured, whether or not it was sent, in -dBov.
    public private(set) var lastLevel = AudioLevel.silence
    /// Whether the last frame was voice, by voice activity detection (by level when processing is off).
    public private(set) var lastVoice = false
    /// What the path has done.
    public private(set) var statistics = SendStatistics()
    /// The settings in use.
    public let configuration: Configuration

    private let stream: Stream
    private let talk: TalkSwitch
    private let encoder: OpusEncoder
    private let processor: VoiceProcessor?
    private let echoCanceller: EchoCanceller?
    private var timestamp: UInt32
    private var sequence: UInt16
    private var appliedLoss: Int
    private let cleaned: UnsafeMutableBufferPointer<Int16>
    private let player: FilePlayer?
    private let music: UnsafeMutableBufferPointer<Int16>
    private var musicGain = SendPipeline.musicGain
    /// When and how much redundancy goes out, from the loss the server reports.
    private var policy = RedundancyPolicy()
    /// The frame just encoded, before it goes into the packet.
    private let encoded: UnsafeMutableRawBufferPointer
    /// The last frames sent (newest at `historyNewest`), each in its own `REDPayload.maxBlockLength` bytes, for
    /// the packets that repeat them.
    private let history: UnsafeMutableRawBufferPointer
    private var historyFrames: [(sequence: UInt16, timestamp: UInt32, length: Int)]
    private var historyNewest = 0

    /// Creates the codec and processors for `configuration`; `talk` decides whether frames are sent; `player`
    /// is the file played into the room beside the microphone, if any.
    public init(
        configuration: Configuration, talk: TalkSwitch, stream: Stream, player: FilePlayer? = nil
    ) throws(AudioCodecError) {
        self.configuration = configuration
        self.stream = stream
        self.talk = talk
        self.player = player
        music = .allocate(capacity: AudioFormat.samplesPerFrame)
        music.initialize(repeating: 0)
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
        timestamp = stream.initialTimestamp
        sequence = stream.initialSequence
        appliedLoss = configuration.encoder.expectedLossPercent
        cleaned = .allocate(capacity: AudioFormat.samplesPerFrame)
        cleaned.initialize(repeating: 0)
        encoded = .allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 16)
        history = .allocate(byteCount: REDPayload.maxRedundantBlocks * REDPayload.maxBlockLength, alignment: 16)
        historyFrames = Array(repeating: (0, 0, 0), count: REDPayload.maxRedundantBlocks)
    }

    deinit {
        cleaned.deallocate()
        music.deallocate()
        encoded.deallocate()
        history.deallocate()
    }

    /// How many earlier frames each packet repeats now (RFC 2198), 0 to `REDPayload.maxRedundantBlocks`.
    public var redundancy: Int { stream.redPayloadType == nil ? 0 : policy.level }

    /// The server's report of the loss on this client's stream (the worse of its uplink and its listeners'
    /// downlinks, with the runs that loss came in when the server says them), about once a second: sets the
    /// redundancy (see ``RedundancyPolicy``) and the encoder's
    /// expected loss, which sizes its FEC. While packets repeat earlier frames, FEC (which repeats the previous
    /// frame at a lower quality) would only take bits from the frame itself, so it is off.
    public func reportLoss(percent: Int, runs: RTCPLossRuns? = nil) {
        if stream.redPayloadType != nil { policy.report(lossPercent: percent, runs: runs) }
        setExpectedLoss(percent: redundancy > 0 ? 0 : percent)
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

    /// Takes one captured frame of 960 samples (cleaned in place: echo cancellation against `played`, the frame
    /// played at the same time, when enabled; then voice processing), measures it, and writes the RTP packet to
    /// send into `packet` (at least ``maxPacketBytes``). Returns the packet's length, or nil when nothing is to
    /// be sent: the microphone is muted, or the encoder is in DTX. The timestamp advances by a frame either
    /// way, so a gap shows to receivers as a timestamp jump (RFC 7587 §4.2).
    public func send(
        _ frame: UnsafeMutableBufferPointer<Int16>, played: UnsafeBufferPointer<Int16>?,
        into packet: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard frame.count == AudioFormat.samplesPerFrame, packet.count >= Self.maxPacketBytes else { return nil }
        statistics.framesCaptured += 1
        let frameTimestamp = timestamp
        timestamp &+= AudioFormat.rtpTimestampStep

        if let echoCanceller, let played, played.count == frame.count {
            if (try? echoCanceller.cancel(captured: UnsafeBufferPointer(frame), played: played, output: cleaned))
                != nil
            {
                frame.baseAddress!.update(from: cleaned.baseAddress!, count: frame.count)
            }
        }
        let heard = processor.map { (try? $0.process(frame)) ?? false }
        let microphoneLevel = AudioLevel.dBov(UnsafeBufferPointer(frame))
        let voice = configuration.voiceProcessing ? heard ?? false : microphoneLevel <= Self.voiceLevel
        let open = !talk.isMuted

        // A file played into the room joins after the voice processing, which would take music for noise and
        // level it; it goes out with the microphone, never while muted.
        let file = player?.take(into: music) ?? (count: 0, playing: false)
        // Only a libopus failure on a valid encoder could refuse the switch; the frame then goes out as it is set.
        _ = try? encoder.setMusic(file.playing)
        if file.playing {
            guard open else {
                statistics.closedFrames += 1
                return nil
            }
            mixMusic(file.count, into: frame, ducked: voice)
            statistics.musicFrames += 1
        }
        let level = file.playing ? AudioLevel.dBov(UnsafeBufferPointer(frame)) : microphoneLevel
        lastLevel = level
        lastVoice = voice

        guard open else {
            statistics.closedFrames += 1
            return nil
        }
        // The header with its one-word level extension comes first; the Opus packet goes right after it.
        let header = RTPHeader(
            payloadType: stream.payloadType, sequenceNumber: sequence &+ 1, timestamp: frameTimestamp,
            ssrc: stream.ssrc)
        let levelElement = RTPExtensionElement(
            id: stream.audioLevelID, data: [RTPAudioLevel(level: level, voice: voice).byte])
        guard let headerLength = header.write(into: packet, extensionElements: [levelElement]) else { return nil }
        let written: Int
        do {
            written = try encoder.encode(UnsafeBufferPointer(frame), into: encoded)
        } catch {
            // The frame is the right size and the buffer the largest Opus packet: libopus has nothing to refuse.
            return nil
        }
        // One or two bytes: DTX silence, not worth sending.
        guard written > 2 else {
            statistics.dtxFrames += 1
            return nil
        }
        sequence &+= 1
        let length = writePayload(
            into: packet, at: headerLength, frame: UnsafeRawBufferPointer(rebasing: encoded[0..<written]),
            timestamp: frameTimestamp)
        statistics.packetsSent += 1
        statistics.bytesSent += length - headerLength
        return length
    }

    /// Writes the payload after the header at `start`: the frame alone, or, with redundancy on and earlier
    /// frames to repeat, a RED payload (RFC 2198) of those frames and this one, with the header's payload type
    /// changed to RED's. An earlier frame is repeated only when it was sent in the packets just before this one
    /// with no gap (DTX) between, so that its timestamp offset says which packet it stands for. Then keeps the
    /// frame for the next packets. Returns the packet's length.
    private func writePayload(
        into packet: UnsafeMutableRawBufferPointer, at start: Int, frame: UnsafeRawBufferPointer, timestamp: UInt32
    ) -> Int {
        var cursor = start
        let depth = redundancy
        if depth > 0, let redPayloadType = stream.redPayloadType {
            // Oldest first, as the headers list them.
            var slots: (Int, Int) = (-1, -1)
            var count = 0
            for back in stride(from: depth, through: 1, by: -1) {
                let slot = (historyNewest - (back - 1) + historyFrames.count) % historyFrames.count
                let earlier = historyFrames[slot]
                guard earlier.length > 0, sequence &- earlier.sequence == UInt16(back),
                    timestamp &- earlier.timestamp == UInt32(back) * AudioFormat.rtpTimestampStep
                else { continue }
                if count == 0 { slots.0 = slot } else { slots.1 = slot }
                count += 1
            }
            if count > 0 {
                packet[1] = packet[1] & 0x80 | redPayloadType
                for index in 0..<count {
                    let earlier = historyFrames[index == 0 ? slots.0 : slots.1]
                    let word = (timestamp &- earlier.timestamp) << 10 | UInt32(earlier.length)
                    packet[cursor] = 0x80 | stream.payloadType
                    packet[cursor + 1] = UInt8(truncatingIfNeeded: word >> 16)
                    packet[cursor + 2] = UInt8(truncatingIfNeeded: word >> 8)
                    packet[cursor + 3] = UInt8(truncatingIfNeeded: word)
                    cursor += 4
                }
                packet[cursor] = stream.payloadType
                cursor += 1
                for index in 0..<count {
                    let slot = index == 0 ? slots.0 : slots.1
                    let length = historyFrames[slot].length
                    let from = slot * REDPayload.maxBlockLength
                    UnsafeMutableRawBufferPointer(rebasing: packet[cursor..<(cursor + length)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: history[from..<(from + length)]))
                    cursor += length
                }
            }
        }
        UnsafeMutableRawBufferPointer(rebasing: packet[cursor..<(cursor + frame.count)]).copyMemory(from: frame)
        cursor += frame.count
        // Kept even while redundancy is off, so that the first packet after it turns on already repeats.
        historyNewest = (historyNewest + 1) % historyFrames.count
        if frame.count <= REDPayload.maxBlockLength {
            let from = historyNewest * REDPayload.maxBlockLength
            UnsafeMutableRawBufferPointer(rebasing: history[from..<(from + frame.count)]).copyMemory(from: frame)
            historyFrames[historyNewest] = (sequence, timestamp, frame.count)
        } else {
            historyFrames[historyNewest] = (sequence, timestamp, 0)
        }
        return cursor
    }

    /// Without voice activity detection, frames at least this loud (-dBov) count as voice.
    static let voiceLevel: UInt8 = 50

    /// The file's gain under no speech: -6 dB, so that a file mastered to full scale leaves room for a voice.
    static let musicGain: Float = 0.5
    /// The file's gain while the microphone carries speech: -12 dB (ducked), so that the voice stays on top.
    static let duckedGain: Float = 0.25

    /// Adds the first `count` samples of the file's frame to `frame`, at the music gain or ducked under speech;
    /// the gain moves linearly across the frame from the last frame's, so a duck does not click.
    private func mixMusic(_ count: Int, into frame: UnsafeMutableBufferPointer<Int16>, ducked: Bool) {
        let target = ducked ? Self.duckedGain : Self.musicGain
        let start = musicGain
        let step = (target - start) / Float(frame.count)
        for index in 0..<count {
            let gain = start + step * Float(index)
            let sum = Float(frame[index]) + Float(music[index]) * gain
            frame[index] = Int16(max(-32_768, min(32_767, sum)))
        }
        musicGain = target
    }
}
