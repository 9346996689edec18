import AudioCodec
import AudioCore
import AudioDevices
import Foundation
import MediaTransport
import MediaWire
import Platform
import RoomProtocol
import Synchronization

/// What a client sends as its microphone.
public enum MicrophoneSource: Sendable, Equatable {
    /// Nothing: the client only listens.
    case none
    /// A virtual microphone (`tone:HZ`, `wav:PATH`, `silence`: the devices `--input` names), read unpaced on the
    /// media thread as each frame is due. An ALSA device is refused: it comes as `live`, served by its own thread.
    case device(DeviceSpec)
    /// These samples (48 kHz mono), looped.
    case samples([Int16])
    /// A live device: asked for one 20 ms frame per tick.
    case live(AudioFeed)
}

/// A live audio connection for a device: the capture side fills the microphone frame, the playback side takes
/// each mixed frame. Both are called on the media thread once per 20 ms and must not block (read from and
/// write to lock-free rings that the device threads serve).
public final class AudioFeed: Sendable, Equatable {
    /// Fills the 960-sample frame with what the microphone captured; returns false when no audio is ready
    /// (nothing is sent for that tick).
    public let capture: @Sendable (UnsafeMutableBufferPointer<Int16>) -> Bool
    /// Takes the 960-sample mixed frame of what the client hears.
    public let playback: @Sendable (UnsafeBufferPointer<Int16>) -> Void
    /// After a frame was captured: how long, in µs, the device's newest period had waited before this tick
    /// took it, or nil when that is not known. The tick moves to follow it while nothing is played.
    public let captureWait: @Sendable () -> Int64?

    public init(
        capture: @escaping @Sendable (UnsafeMutableBufferPointer<Int16>) -> Bool = { _ in false },
        playback: @escaping @Sendable (UnsafeBufferPointer<Int16>) -> Void = { _ in },
        captureWait: @escaping @Sendable () -> Int64? = { nil }
    ) {
        self.capture = capture
        self.playback = playback
        self.captureWait = captureWait
    }

    public static func == (lhs: AudioFeed, rhs: AudioFeed) -> Bool { lhs === rhs }
}

/// What the media engine tells its owner, from its media thread.
public enum ClientMediaEvent: Sendable, Equatable {
    /// Media now travels this way.
    case path(MediaPathKind)
    /// Once a second: every speaker heard so far.
    case stats(path: MediaPathKind?, speakers: [SpeakerStats], packetsSent: Int)
    /// Who is talking among the speakers heard, every time someone starts or stops and, with
    /// `Options.talkerLevels`, as levels move (at most every 100 ms); only with `Options.tracksTalkers`.
    case heard([HeardSpeaker])
    /// Each RTP packet that opened, as it arrived (its SSRC and sequence number; the kernel's arrival stamp on
    /// `MonotonicClock`, in microseconds); only with `Options.reportsPackets`.
    case packet(ssrc: UInt32, sequence: UInt16, arrivalMicroseconds: Int64)
}

/// A client's media for one connection's `media` offer: sends the microphone as Opus in SRTP (RTP with the
/// audio-level extension), receives each speaker into its own jitter buffer, decodes with FEC and concealment,
/// mixes, plays (and records) what it hears. Probes UDP first and falls back to the WebSocket when no answer
/// comes within `probeTimeout`.
///
/// One media thread does all of it, once per 20 ms tick: it sleeps to the tick, takes every datagram queued on
/// its socket (the kernel stamps each one's arrival, so the jitter buffers see the same arrival times as if the
/// thread had woken for each), then sends the microphone's frame and plays out. The pieces: `MediaPath` (the
/// socket, SRTP, the choice of path), `SendPipeline` (processing, level, mute, Opus, RTP) and
/// `Receiver` (jitter buffers, decoders, levels heard, the mix).
///
/// The media thread owns every piece of state but the locked inboxes (keys, WebSocket packets, volumes) and
/// the recording (a lock, read at the end); that split is what makes the unchecked sendability safe.
public final class ClientMedia: @unchecked Sendable {
    public struct Options: Sendable {
        /// What the microphone sends.
        public var source: MicrophoneSource
        /// How the microphone's frames are processed and encoded; nil chooses for the source (a tone gets no DTX
        /// and no voice processing; samples get no voice processing).
        public var sending: SendPipeline.Configuration?
        /// The mute; open by default.
        public var talk: TalkSwitch
        /// Drop every UDP datagram in and out: a test aid that stands for a network that blocks UDP.
        public var blockUDP: Bool
        /// How long to wait for the server's answer over UDP before falling back.
        public var probeTimeout: Duration
        public var record: Bool
        /// Where the mixed frames go besides the recording (a playback device).
        public var output: AudioFeed?
        /// Whether to follow who is talking among the speakers heard (`ClientMediaEvent.heard`).
        public var tracksTalkers: Bool
        /// Whether those reports also come when only a level changed (for level bars), or only when someone
        /// starts or stops talking.
        public var talkerLevels: Bool
        /// Whether to report every packet heard as it arrives (`ClientMediaEvent.packet`): a test aid.
        public var reportsPackets: Bool
        /// The sequence number before the first packet's; nil chooses at random, as RFC 3550 asks. A test aid, to
        /// see the numbers wrap.
        public var initialSequence: UInt16?
        /// A file played into the room beside the microphone (with no microphone, alone).
        public var player: FilePlayer?
        /// Whether this client takes RFC 2198 redundancy from a server that offers it: it sends it when its
        /// listeners report loss, and rebuilds lost frames from what it receives. Off only to measure without it.
        public var redundancy: Bool

        public init(
            source: MicrophoneSource = .none, sending: SendPipeline.Configuration? = nil,
            talk: TalkSwitch = TalkSwitch(), blockUDP: Bool = false, probeTimeout: Duration = .seconds(2),
            record: Bool = false, output: AudioFeed? = nil, tracksTalkers: Bool = false, talkerLevels: Bool = true,
            reportsPackets: Bool = false, initialSequence: UInt16? = nil, player: FilePlayer? = nil,
            redundancy: Bool = true
        ) {
            self.player = player
            self.redundancy = redundancy
            self.source = source
            self.sending = sending
            self.talk = talk
            self.blockUDP = blockUDP
            self.probeTimeout = probeTimeout
            self.record = record
            self.output = output
            self.tracksTalkers = tracksTalkers
            self.talkerLevels = talkerLevels
            self.reportsPackets = reportsPackets
            self.initialSequence = initialSequence
        }

        /// The send path's settings for the source.
        var sendingConfiguration: SendPipeline.Configuration {
            if let sending { return sending }
            switch source {
            // A steady tone is what Opus's DTX takes for background noise; a test tone must keep sounding.
            case .device(let spec): return SendPipeline.Configuration.suggested(for: spec)
            case .none, .samples, .live: return SendPipeline.Configuration(voiceProcessing: false)
            }
        }
    }

    private let options: Options
    private let onEvent: @Sendable (ClientMediaEvent) -> Void
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let recorded = Mutex<[Int16]>([])
    /// Local volumes and who sends with which SSRC, set from any thread. The media thread copies the table
    /// (a reference count, no allocation) only when `volumesVersion` moved, so it takes this lock rarely and briefly.
    private let sharedVolumes = Mutex(SpeakerVolumes())
    private let volumesVersion = Atomic<Int>(0)
    /// The microphone's last level in -dBov, or -1 when no frame came for a while: for the meter.
    private let microphoneLevelValue = Atomic<Int>(-1)
    /// Ticks since the microphone last gave a frame.
    private var ticksWithoutMicrophone = 0
    /// Whether only the loudspeaker is open: the thread then wakes every other frame and plays two.
    private let listenOnly = Atomic<Bool>(false)

    private let path: MediaPath
    /// Clears the low bit of a packet's SSRC when this client takes RED: the server sends it each speaker's
    /// packets under the odd SSRC beside the speaker's (docs/media.md, "Redundancy").
    private let speakerSSRCMask: UInt32
    private let sender: SendPipeline?
    private let receiver: Receiver
    private var device: (any AudioInput)?
    private var loopSamples: [Int16] = []
    private var loopPosition = 0
    private var tickSchedule = TickSchedule()

    /// Starts media for one connection's `media` offer; nothing runs until ``start()``.
    public init(
        offer: MediaOffer, options: Options, channel: MediaChannel,
        onEvent: @escaping @Sendable (ClientMediaEvent) -> Void
    ) throws {
        self.options = options
        self.onEvent = onEvent
        let red = options.redundancy ? offer.redPayloadType.map { UInt8(truncatingIfNeeded: $0) } : nil
        speakerSSRCMask = red == nil ? ~0 : ~1
        path = try MediaPath(
            offer: offer, redPayloadType: red, blockUDP: options.blockUDP, probeTimeout: options.probeTimeout,
            channel: channel, onChosen: { kind in onEvent(.path(kind)) })
        receiver = Receiver(
            payloadType: UInt8(truncatingIfNeeded: offer.payloadType), redPayloadType: red,
            audioLevelID: UInt8(truncatingIfNeeded: offer.audioLevelID), tracksTalkers: options.tracksTalkers,
            talkerLevels: options.talkerLevels)
        var stream = SendPipeline.Stream(
            ssrc: offer.ssrc, payloadType: UInt8(truncatingIfNeeded: offer.payloadType),
            audioLevelID: UInt8(truncatingIfNeeded: offer.audioLevelID))
        stream.redPayloadType = red
        if let initialSequence = options.initialSequence { stream.initialSequence = initialSequence }
        let player = options.player
        switch options.source {
        case .none:
            // With no microphone, the send path exists only to play a file.
            sender =
                player == nil
                ? nil
                : try SendPipeline(
                    configuration: options.sendingConfiguration, talk: options.talk, stream: stream, player: player)
        case .device(let spec):
            guard spec.isVirtual else {
                throw AudioDeviceError.unsupported(
                    device: spec.description, setting: "a microphone read on the media thread", code: EINVAL)
            }
            device = try spec.openInput(pacing: .unpaced)
            sender = try SendPipeline(
                configuration: options.sendingConfiguration, talk: options.talk, stream: stream, player: player)
        case .samples(let samples):
            loopSamples = samples.isEmpty ? [0] : samples
            sender = try SendPipeline(
                configuration: options.sendingConfiguration, talk: options.talk, stream: stream, player: player)
        case .live:
            sender = try SendPipeline(
                configuration: options.sendingConfiguration, talk: options.talk, stream: stream, player: player)
        }
    }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        startThread(named: "clubroom-media") { [self] in run() }
    }

    /// Stops the media thread; returns what was recorded (48 kHz mono).
    @discardableResult
    public func stop() -> [Int16] {
        if running.exchange(false, ordering: .acquiringAndReleasing) { stopped.wait() }
        return recorded.withLock { $0 }
    }

    /// A binary WebSocket message from the server: media on the fallback path.
    public func receivedOverWebSocket(_ bytes: [UInt8]) {
        path.receivedOverWebSocket(bytes)
    }

    /// A `media_key` message: the room's new key.
    public func newRoomKey(_ bytes: [UInt8], epoch: Int) {
        guard let key = SRTPKey(bytes: bytes) else { return }
        path.newRoomKey(key, epoch: epoch)
    }

    /// A `media_sources` message: which peer sends with which SSRC, so local volumes follow identities.
    public func setSources(_ sources: [MediaSource]) {
        sharedVolumes.withLock { table in
            for source in sources { table.setSource(ssrc: source.ssrc, peer: source.peer) }
        }
        volumesVersion.add(1, ordering: .releasing)
    }

    /// The local volume of each peer in percent (0–200; a peer not listed plays at 100), applied from the next
    /// mix on. Called from any thread; it never waits for the media thread.
    public func setVolumes(_ volumes: [String: Int]) {
        sharedVolumes.withLock { $0.setVolumes(volumes) }
        volumesVersion.add(1, ordering: .releasing)
    }

    /// Tells the media thread whether only the loudspeaker is open (no microphone). Someone who only listens is
    /// served two frames per wake-up, every 40 ms, instead of one every 20 ms: what they hear comes 20 ms later,
    /// for half the wake-ups. Any thread.
    public func setListenOnly(_ listenOnly: Bool) {
        self.listenOnly.store(listenOnly, ordering: .relaxed)
    }

    /// Ticks without a microphone frame after which its level is no longer known.
    static let microphoneGone = 5

    /// The level of the microphone's last frame in -dBov (measured whether or not it was sent), or nil when no
    /// frame has come for 100 ms (the microphone is closed). Read from any thread.
    public var microphoneLevel: UInt8? {
        let level = microphoneLevelValue.load(ordering: .relaxed)
        return level < 0 ? nil : UInt8(level)
    }

    // MARK: The media thread

    private func run() {
        let start = MonotonicClock.microseconds()
        var nextTick = start
        var lastStats = start
        var volumes = SpeakerVolumes()
        var appliedVolumesVersion = 0
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        let mixed = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        let packet = UnsafeMutableRawBufferPointer.allocate(
            byteCount: SendPipeline.maxPacketBytes + SRTPSession.maxTrailer, alignment: 16)
        frame.initialize(repeating: 0)
        mixed.initialize(repeating: 0)
        defer {
            frame.deallocate()
            mixed.deallocate()
            packet.deallocate()
        }
        while running.load(ordering: .acquiring) {
            path.maintain(now: MonotonicClock.microseconds(), report: { receiver.report() })
            let now = MonotonicClock.microseconds()
            if nextTick > now { MonotonicClock.sleep(microseconds: nextTick - now) }
            path.receive { incoming in
                switch incoming {
                case .rtp(let bytes, let arrival):
                    if options.reportsPackets, bytes.count >= RTPHeader.fixedLength {
                        onEvent(
                            .packet(
                                ssrc: (UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8
                                    | UInt32(bytes[11])) & speakerSSRCMask,
                                sequence: UInt16(bytes[2]) << 8 | UInt16(bytes[3]),
                                arrivalMicroseconds: arrival))
                    }
                    receiver.insert(bytes, arrival: arrival)
                case .lossReport(let percent, let runs): sender?.reportLoss(percent: percent, runs: runs)
                }
            }
            let tickTime = MonotonicClock.microseconds()
            guard tickTime >= nextTick else { continue }
            let frames: Int64 = listenOnly.load(ordering: .relaxed) ? 2 : 1
            nextTick += frames * AudioFormat.frameMicroseconds
            // After a stall, catch up without a burst of frames.
            if tickTime - nextTick > 200_000 { nextTick = tickTime + frames * AudioFormat.frameMicroseconds }

            let version = volumesVersion.load(ordering: .acquiring)
            if version != appliedVolumesVersion {
                appliedVolumesVersion = version
                volumes = sharedVolumes.withLock { $0 }
            }
            var captureWait: Int64?
            var slack: Int64?
            // Frames of one wake-up play as if each had its own tick, the earlier ones a frame apart before now.
            for index in 0..<frames {
                let frameTime = tickTime - (frames - 1 - index) * AudioFormat.frameMicroseconds
                if let sender, fillMicrophone(frame) {
                    if case .live(let feed) = options.source { captureWait = feed.captureWait() }
                    // The echo canceller's reference is the last mix played, still in `mixed`.
                    if let length = sender.send(frame, played: UnsafeBufferPointer(mixed), into: packet) {
                        _ = path.sendRTP(packet, length: length)
                    }
                    microphoneLevelValue.store(Int(sender.lastLevel), ordering: .relaxed)
                    ticksWithoutMicrophone = 0
                } else if ticksWithoutMicrophone < Self.microphoneGone {
                    // A frame missing now and then is a device's jitter; five in a row (100 ms) is a closed
                    // microphone.
                    ticksWithoutMicrophone += 1
                    if ticksWithoutMicrophone == Self.microphoneGone {
                        microphoneLevelValue.store(-1, ordering: .relaxed)
                    }
                }
                if let played = receiver.playOut(at: frameTime, volumes: volumes, into: mixed) {
                    slack = min(slack ?? .max, played)
                }
                if options.record { recorded.withLock { $0.append(contentsOf: mixed) } }
                options.output?.playback(UnsafeBufferPointer(mixed))
            }
            nextTick -= tickSchedule.earlier(playoutSlack: slack, captureWait: captureWait)
            if let heard = receiver.heard(at: tickTime, names: volumes) { onEvent(.heard(heard)) }
            if tickTime - lastStats >= 1_000_000 {
                lastStats = tickTime
                onEvent(
                    .stats(
                        path: path.kind, speakers: receiver.statistics(at: tickTime, names: volumes),
                        packetsSent: sender?.statistics.packetsSent ?? 0))
            }
        }
        stopped.signal()
    }

    /// One frame of microphone; false when a live device has none ready.
    private func fillMicrophone(_ frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        switch options.source {
        case .none:
            // No microphone: a silent frame for the file to be mixed into, while one plays.
            guard options.player?.isPlaying == true else { return false }
            frame.update(repeating: 0)
            return true
        case .live(let feed):
            return feed.capture(frame)
        case .device:
            // A virtual device reads from memory and cannot fail.
            _ = try? device!.read(into: frame)
            return true
        case .samples:
            for index in frame.indices {
                frame[index] = loopSamples[loopPosition]
                loopPosition = (loopPosition + 1) % loopSamples.count
            }
            return true
        }
    }
}
