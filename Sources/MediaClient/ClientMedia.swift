import AudioCodec
import AudioCore
import Foundation
import MediaTransport
import RoomProtocol
import Synchronization

/// What a client sends as its microphone.
public enum MicrophoneSource: Sendable, Equatable {
    /// Nothing: the client only listens.
    case none
    /// A sine tone at this frequency.
    case tone(hertz: Double)
    /// These samples (48 kHz mono), looped.
    case samples([Int16])
    /// A live device: asked for one 20 ms frame per tick.
    case live(AudioFeed)
}

/// A live audio connection for a device: the capture side fills the microphone frame, the playback side takes
/// each mixed frame. Both are called on the media thread once per 20 ms and must not block (read from and
/// write to lock-free rings that the device threads serve).
public final class AudioFeed: Sendable, Equatable {
    /// Fills the 960-sample frame; returns false when no audio is ready (nothing is sent for that tick).
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

/// One speaker as a client hears it, over the last `audio_stats` period and since the start.
public struct SpeakerStats: Sendable, Equatable {
    public var ssrc: UInt32
    public var received: Int
    public var lost: Int
    public var recoveredByFEC: Int
    public var concealed: Int
    /// Interarrival jitter in milliseconds.
    public var jitterMilliseconds: Double
    /// How long packets wait in the jitter buffer, in milliseconds.
    public var playoutDelayMilliseconds: Double
}

/// What the media engine tells its owner.
public enum ClientMediaEvent: Sendable, Equatable {
    /// Media now travels this way.
    case path(MediaPathKind)
    /// Once a second: every speaker heard so far.
    case stats(path: MediaPathKind?, speakers: [SpeakerStats], packetsSent: Int)
}

/// A client's media: sends the microphone as Opus in SRTP (RTP with the audio-level extension), receives each
/// speaker into its own jitter buffer, decodes with FEC and concealment, mixes, and records what it hears.
/// Probes UDP first and falls back to the WebSocket when no answer comes within `probeTimeout`.
///
/// One media thread owns every piece of state but `webSocketInbox` (a lock) and `recording` (a lock, read at
/// the end); that split is what makes the unchecked sendability safe.
public final class ClientMedia: @unchecked Sendable {
    public struct Options: Sendable {
        public var source: MicrophoneSource
        /// Drop every UDP datagram in and out: a test aid that stands for a network that blocks UDP.
        public var blockUDP: Bool
        /// How long to wait for the server's answer over UDP before falling back.
        public var probeTimeout: Duration
        public var record: Bool
        /// Where the mixed frames go besides the recording (a playback device).
        public var output: AudioFeed?

        public init(
            source: MicrophoneSource = .none, blockUDP: Bool = false, probeTimeout: Duration = .seconds(2),
            record: Bool = false, output: AudioFeed? = nil
        ) {
            self.source = source
            self.blockUDP = blockUDP
            self.probeTimeout = probeTimeout
            self.record = record
            self.output = output
        }
    }

    private let offer: MediaOffer
    private let options: Options
    private let sendWebSocket: @Sendable ([UInt8]) -> Void
    private let sendControl: @Sendable (String) -> Void
    private let onEvent: @Sendable (ClientMediaEvent) -> Void
    private let socket: UDPSocket
    /// Where UDP media goes; nil when the server offered no address this client can reach.
    private let server: UDPAddress?
    private let uplink: SRTPSession
    private var roomSessions: [(epoch: Int, session: SRTPSession)] = []
    private let webSocketInbox = Mutex<[[UInt8]]>([])
    private let pendingKeys = Mutex<[(key: SRTPKey, epoch: Int)]>([])
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let recorded = Mutex<[Int16]>([])
    /// Local volumes and who sends with which SSRC, set from any thread. The media thread copies the table
    /// (a reference count, no allocation) only when `volumesVersion` moved, so it takes this lock rarely and briefly.
    private let sharedVolumes = Mutex(SpeakerVolumes())
    private let volumesVersion = Atomic<Int>(0)
    private var volumes = SpeakerVolumes()
    private var appliedVolumesVersion = 0

    private var path: MediaPathKind?
    private var encoder: OpusEncoder?
    private var tone: ToneGenerator?
    private var loopSamples: [Int16] = []
    private var loopPosition = 0
    private var sequence = UInt16.random(in: 0...UInt16.max)
    private var timestamp = UInt32.random(in: 0...UInt32.max)
    private var packetsSent = 0
    private var tickSchedule = TickSchedule()

    private final class Speaker {
        var buffer = JitterBuffer<[UInt8]>(configuration: ClientMedia.jitter)
        let decoder: OpusDecoder
        /// This speaker's frame for the current tick (decoded, recovered or concealed).
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var statistics = RTPReceiveStatistics(minSequential: 0)
        var lastArrival: Int64 = 0
        init() throws(AudioCodecError) { decoder = try OpusDecoder() }
    }
    private var speakers: [UInt32: Speaker] = [:]

    /// The jitter buffers' tuning: AudioCore's defaults with a 5 ms floor, since a tick falls anywhere within a
    /// frame of an arrival and so already gives each packet 0–20 ms of slack, and a 25 ms floor while packets are
    /// being lost, so that the next packet arrives in time to rebuild a lost one from its FEC. See
    /// docs/audio-engine.md.
    static var jitter: JitterBufferConfiguration {
        var configuration = JitterBufferConfiguration()
        configuration.minimumDelay = 5_000
        configuration.lossDelay = 25_000
        return configuration
    }
    /// Packets no key opened: after a rotation, the first packets under the new key can arrive before
    /// `media_key` does. They are tried again when a key arrives (a few at most; older ones are dropped).
    private var unopened: [[UInt8]] = []

    /// Starts media for one connection's `media` offer.
    public init(
        offer: MediaOffer, options: Options, sendWebSocket: @escaping @Sendable ([UInt8]) -> Void,
        sendControl: @escaping @Sendable (String) -> Void, onEvent: @escaping @Sendable (ClientMediaEvent) -> Void
    ) throws {
        guard let sendKey = SRTPKey(bytes: offer.sendKey), let roomKey = SRTPKey(bytes: offer.roomKey) else {
            throw MediaSignalError(message: "keys must be 30 bytes")
        }
        var server: UDPAddress?
        if offer.hasUDP {
            guard let address = UDPAddress(host: offer.host, port: UInt16(clamping: offer.port)) else {
                throw MediaSignalError(message: "the media host \(offer.host) is not an IPv4 address")
            }
            server = address
        }
        self.offer = offer
        self.options = options
        self.sendWebSocket = sendWebSocket
        self.sendControl = sendControl
        self.onEvent = onEvent
        self.server = server
        socket = try UDPSocket(binding: UDPAddress(ipv4: 0, port: 0), bufferBytes: 1 << 20)
        _ = socket.stampArrivals()
        uplink = try SRTPSession(key: sendKey, direction: .outbound, ssrc: offer.ssrc)
        roomSessions = [(offer.epoch, try SRTPSession(key: roomKey, direction: .inbound))]
        switch options.source {
        case .none: break
        case .tone(let hertz): tone = ToneGenerator(frequency: hertz, amplitude: 0.3)
        case .samples(let samples): loopSamples = samples.isEmpty ? [0] : samples
        case .live: break
        }
        switch options.source {
        case .none: break
        // A steady tone is what Opus's DTX takes for background noise; a test tone must keep sounding.
        case .tone: encoder = try OpusEncoder(configuration: .init(discontinuousTransmission: false))
        case .samples, .live: encoder = try OpusEncoder()
        }
    }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "clubroom-client-media"
        thread.start()
    }

    /// Stops the media thread; returns what was recorded (48 kHz mono).
    @discardableResult
    public func stop() -> [Int16] {
        if running.exchange(false, ordering: .acquiringAndReleasing) { stopped.wait() }
        return recorded.withLock { $0 }
    }

    /// A binary WebSocket message from the server: media on the fallback path.
    public func receivedOverWebSocket(_ bytes: [UInt8]) {
        webSocketInbox.withLock { $0.append(bytes) }
    }

    /// A `media_key` message: the room's new key.
    public func newRoomKey(_ bytes: [UInt8], epoch: Int) {
        guard let key = SRTPKey(bytes: bytes) else { return }
        pendingKeys.withLock { $0.append((key, epoch)) }
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

    // MARK: The media thread

    private func run() {
        Self.nameThread("clubroom-media")
        let start = Self.microseconds()
        var nextTick = start
        var lastProbe = start - 10_000_000
        var lastStats = start
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var mixed = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var mixer = Mixer()
        let probeDeadline = start + Self.microseconds(options.probeTimeout)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1600, alignment: 16)
        defer { buffer.deallocate() }
        // No UDP address: the WebSocket is the only way, so there is nothing to probe.
        if server == nil { choose(.websocket) }
        while running.load(ordering: .acquiring) {
            let now = Self.microseconds()
            if path == nil || path == .udp, now - lastProbe >= (path == nil ? 200_000 : 1_000_000) {
                lastProbe = now
                sendReport(path: path == nil ? .udp : path!)
            }
            if path == nil, now >= probeDeadline {
                choose(.websocket)
                sendReport(path: .websocket)
            }
            if path == .websocket, now - lastProbe >= 1_000_000 {
                lastProbe = now
                sendReport(path: .websocket)
            }
            // One wake-up per 20 ms tick, not one per datagram: the kernel stamps each datagram's arrival, so
            // the jitter buffers see the same arrival times as if the thread had woken for each.
            if nextTick > now { usleep(UInt32(nextTick - now)) }
            while let got = socket.receiveStamped(into: buffer) {
                if options.blockUDP { continue }
                let arrival = Self.microseconds() - min(got.ageMicroseconds, 1_000_000)
                handle(buffer, length: got.length, viaUDP: true, arrival: arrival)
            }
            applyPendingKeys()
            for bytes in webSocketInbox.withLock({ inbox -> [[UInt8]] in
                defer { inbox.removeAll() }
                return inbox
            }) where bytes.count + SRTPSession.maxTrailer <= buffer.count {
                buffer.copyBytes(from: bytes)
                handle(buffer, length: bytes.count, viaUDP: false)
            }
            let tickTime = Self.microseconds()
            guard tickTime >= nextTick else { continue }
            nextTick += 20_000
            // After a stall, catch up without a burst of frames.
            if tickTime - nextTick > 200_000 { nextTick = tickTime + 20_000 }
            var captureWait: Int64?
            if encoder != nil, fillMicrophone(&frame) {
                sendFrame(frame, buffer: buffer)
                if case .live(let feed) = options.source { captureWait = feed.captureWait() }
            }
            let slack = playOut(at: tickTime, mixer: &mixer, into: &mixed)
            nextTick -= tickSchedule.earlier(playoutSlack: slack, captureWait: captureWait)
            if tickTime - lastStats >= 1_000_000 {
                lastStats = tickTime
                report()
            }
        }
        stopped.signal()
    }

    private func choose(_ kind: MediaPathKind) {
        guard path != kind else { return }
        path = kind
        sendControl(MediaSignalCodec.encode(.mediaPath(kind)))
        onEvent(.path(kind))
    }

    /// An SRTCP receiver report with a block per speaker: it binds our flow at the server, keeps it alive,
    /// tells speakers how they are heard, and (over UDP) asks the server to answer, which proves UDP works.
    private func sendReport(path: MediaPathKind) {
        var blocks: [RTCPReportBlock] = []
        for ssrc in speakers.keys.sorted() {
            if let speaker = speakers[ssrc] { blocks.append(speaker.statistics.reportBlock()) }
        }
        let report = RTCPPacket.receiverReport(ssrc: offer.ssrc, reports: blocks).bytes()
        guard let protected = try? uplink.protect(report, rtcp: true) else { return }
        transmit(protected, path: path)
    }

    private func transmit(_ bytes: [UInt8], path: MediaPathKind) {
        switch path {
        case .udp: if !options.blockUDP, let server { socket.send(bytes, to: server) }
        case .websocket: sendWebSocket(bytes)
        }
    }

    /// One frame of microphone; false when a live device has none ready.
    private func fillMicrophone(_ frame: inout [Int16]) -> Bool {
        if case .live(let feed) = options.source {
            return frame.withUnsafeMutableBufferPointer { feed.capture($0) }
        }
        if tone != nil {
            tone!.fill(&frame)
            return true
        }
        for index in frame.indices {
            frame[index] = loopSamples[loopPosition]
            loopPosition = (loopPosition + 1) % loopSamples.count
        }
        return true
    }

    private func sendFrame(_ frame: [Int16], buffer: UnsafeMutableRawBufferPointer) {
        guard let encoder else { return }
        let path = path ?? .udp
        timestamp &+= RTPAudioProfile.samplesPerFrame
        guard let payload = try? encoder.encode(frame) else { return }
        // One or two bytes: DTX silence, not worth sending; the timestamp still advances (RFC 7587 §4.2).
        guard payload.count > 2 else { return }
        sequence &+= 1
        let level = RTPAudioLevel(level: AudioLevel.dBov(frame), voice: true)
        let packet = RTPHeader(
            payloadType: UInt8(offer.payloadType), sequenceNumber: sequence, timestamp: timestamp, ssrc: offer.ssrc
        ).packet(extensionElements: [.audioLevel(level)], payload: payload)
        guard let protected = try? uplink.protect(packet) else { return }
        transmit(protected, path: path)
        packetsSent += 1
    }

    private func applyPendingKeys() {
        let keys = pendingKeys.withLock { keys -> [(key: SRTPKey, epoch: Int)] in
            defer { keys.removeAll() }
            return keys
        }
        for (key, epoch) in keys {
            guard let session = try? SRTPSession(key: key, direction: .inbound) else { continue }
            // The newest key first; the previous one stays for packets already on their way.
            roomSessions.insert((epoch, session), at: 0)
            roomSessions = Array(roomSessions.prefix(2))
        }
        guard !keys.isEmpty, !unopened.isEmpty else { return }
        let waiting = unopened
        unopened.removeAll()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1600, alignment: 16)
        defer { buffer.deallocate() }
        for bytes in waiting where bytes.count <= buffer.count {
            buffer.copyBytes(from: bytes)
            handle(buffer, length: bytes.count, viaUDP: false, retry: true)
        }
    }

    private func handle(
        _ buffer: UnsafeMutableRawBufferPointer, length: Int, viaUDP: Bool, retry: Bool = false, arrival: Int64? = nil
    ) {
        let packet = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
        if RTCPPacket.isRTCP(packet) {
            for (_, session) in roomSessions {
                guard let plain = try? session.unprotectRTCP(buffer, length: length) else { continue }
                if viaUDP, path == nil { choose(.udp) }
                let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[0..<plain]))
                if let packets = try? RTCPPacket.parseCompound(bytes) {
                    for case .receiverReport(_, let reports) in packets {
                        for report in reports where report.ssrc == offer.ssrc {
                            try? encoder?.setExpectedLoss(percent: report.lossPercent)
                        }
                    }
                }
                return
            }
            return
        }
        guard length >= RTPHeader.fixedLength, packet[1] & 0x7F == UInt8(offer.payloadType) else { return }
        var plainLength: Int?
        for (_, session) in roomSessions {
            if let plain = try? session.unprotect(buffer, length: length) {
                plainLength = plain
                break
            }
        }
        guard let plainLength else {
            if !retry {
                if unopened.count >= 16 { unopened.removeFirst() }
                unopened.append(Array(packet))
            }
            return
        }
        guard let header = try? RTPHeader.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<plainLength])) else {
            return
        }
        let payload = Array(UnsafeRawBufferPointer(rebasing: buffer[header.payloadRange]))
        let speaker: Speaker
        if let existing = speakers[header.ssrc] {
            speaker = existing
        } else {
            guard let created = try? Speaker() else { return }
            speakers[header.ssrc] = created
            speaker = created
        }
        let now = arrival ?? Self.microseconds()
        speaker.lastArrival = now
        _ = speaker.statistics.record(
            ssrc: header.ssrc, sequence: header.sequenceNumber, timestamp: header.timestamp, arrival: now * 48 / 1000)
        speaker.buffer.insert(
            sequence: header.sequenceNumber, timestamp: header.timestamp, ssrc: header.ssrc, arrival: now,
            payload: payload)
    }

    /// Decodes each speaker's next frame into its own buffer and mixes them into `mixed`, each at its local
    /// volume; returns how long the packets played had been due (the least), in µs.
    ///
    /// One speaker at no more than full volume cannot overflow, so that frame is written as it was decoded
    /// (times the volume) instead of through the mixer's soft clipper, which would bend every peak above
    /// -6 dBFS of a lone loud voice. The soft clipper is for sums.
    private func playOut(at now: Int64, mixer: inout Mixer, into mixed: inout [Int16]) -> Int64? {
        let version = volumesVersion.load(ordering: .acquiring)
        if version != appliedVolumesVersion {
            appliedVolumesVersion = version
            volumes = sharedVolumes.withLock { $0 }
        }
        var leastSlack: Int64?
        var sounding = 0
        var lone: (speaker: Speaker, gain: Float)?
        for (ssrc, speaker) in speakers {
            let decision = speaker.buffer.nextFrame(at: now)
            if case .packet = decision {
                let statistics = speaker.buffer.statistics
                leastSlack = min(leastSlack ?? .max, statistics.playoutDelay - statistics.targetDelay)
            }
            let produced: Bool = speaker.frame.withUnsafeMutableBufferPointer { frame in
                switch decision {
                case .packet(let bytes):
                    return bytes.withUnsafeBytes { (try? speaker.decoder.decode($0, into: frame)) != nil }
                case .fecFrom(let bytes):
                    return bytes.withUnsafeBytes {
                        (try? speaker.decoder.recover(fromNextPacket: $0, into: frame)) != nil
                    }
                case .conceal:
                    return (try? speaker.decoder.conceal(into: frame)) != nil
                case .silence:
                    return false
                }
            }
            guard produced else { continue }
            let gain = volumes.gain(ssrc: ssrc)
            sounding += 1
            // The first sounding speaker waits: it goes into the mixer only if another one sounds too.
            if sounding == 1 {
                lone = (speaker, gain)
                continue
            }
            if sounding == 2, let lone { mixer.add(lone.speaker.frame, gain: lone.gain) }
            mixer.add(speaker.frame, gain: gain)
        }
        if sounding == 1, let lone, lone.gain <= 1 {
            lone.speaker.frame.withUnsafeBufferPointer { frame in
                for index in mixed.indices {
                    mixed[index] = lone.gain == 1 ? frame[index] : Int16((Float(frame[index]) * lone.gain).rounded())
                }
            }
        } else {
            if sounding == 1, let lone { mixer.add(lone.speaker.frame, gain: lone.gain) }
            mixed.withUnsafeMutableBufferPointer { mixer.render(into: $0) }
        }
        if options.record { recorded.withLock { $0.append(contentsOf: mixed) } }
        if let output = options.output { mixed.withUnsafeBufferPointer { output.playback($0) } }
        return leastSlack
    }

    private func report() {
        // A source silent for 30 s is gone (it left, or came back with a new SSRC): forget its state.
        let now = Self.microseconds()
        speakers = speakers.filter { now - $0.value.lastArrival < 30_000_000 }
        let list = speakers.keys.sorted().compactMap { ssrc -> SpeakerStats? in
            guard let speaker = speakers[ssrc] else { return nil }
            let stats = speaker.buffer.statistics
            return SpeakerStats(
                ssrc: ssrc, received: stats.received, lost: stats.lost, recoveredByFEC: stats.recoveredByFEC,
                concealed: stats.concealed, jitterMilliseconds: Double(stats.jitter) / 1000,
                playoutDelayMilliseconds: Double(stats.playoutDelay) / 1000)
        }
        onEvent(.stats(path: path, speakers: list, packetsSent: packetsSent))
    }

    /// Names this thread as the kernel shows it (`ps -L`, profilers); Foundation's `Thread.name` does not.
    static func nameThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    static func microseconds() -> Int64 {
        Int64(DispatchTime.now().uptimeNanoseconds / 1000)
    }

    static func microseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }
}
