import AudioCodec
import AudioCore
import MediaWire

/// One speaker as a client hears them, over the last `audio_stats` period and since the start.
public struct SpeakerStats: Sendable, Equatable {
    public var ssrc: UInt32
    /// Who sends it (from `media_sources`); nil until the server has said.
    public var peer: String?
    public var received: Int
    public var lost: Int
    public var recoveredByFEC: Int
    /// Lost packets whose frame came in a later packet's RFC 2198 redundancy.
    public var recoveredByRED: Int = 0
    public var concealed: Int
    /// Interarrival jitter in milliseconds.
    public var jitterMilliseconds: Double
    /// How long packets wait in the jitter buffer, in milliseconds.
    public var playoutDelayMilliseconds: Double
}

/// One speaker a client hears, as the screen shows them: who, how loud, and whether and since when they are
/// talking, from the RFC 6464 level and voice flag of every packet received (not from the server's reports,
/// which come at most every 250 ms).
public struct HeardSpeaker: Sendable, Equatable {
    /// The speaker's stream.
    public var ssrc: UInt32
    /// Who sends it (from `media_sources`); nil until the server has said.
    public var peer: String?
    /// The UI level (0–100, in steps of 5) of their last packets; 0 while not talking.
    public var level: Int
    /// When their talk spurt began (the arrival of its first voiced packet), in `MonotonicClock` milliseconds;
    /// nil while not talking.
    public var talkingSince: Int64?
}

/// The receiving half of a client's media, on the media thread: one jitter buffer and Opus decoder per speaker
/// (made on the speaker's first packet, forgotten after 30 s of silence), the levels of what is heard, and the
/// mix of each tick's frames at each speaker's local volume.
final class Receiver {
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

    /// A speaker silent this long (µs) is gone (they left, or came back with a new SSRC).
    static let forgetAfter: Int64 = 30_000_000

    private final class Speaker {
        var buffer = JitterBuffer<[UInt8]>(configuration: Receiver.jitter)
        let decoder: OpusDecoder
        /// This speaker's frame for the current tick (decoded, recovered or concealed).
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var statistics = RTPReceiveStatistics(minSequential: 0)
        var lastArrival: Int64 = 0
        /// How many earlier frames the speaker's packets repeat, which sets how long the buffer waits under loss.
        var repeats = RepeatDepth()
        init() throws(AudioCodecError) { decoder = try OpusDecoder() }
    }

    private let payloadType: UInt8
    /// The payload type of RFC 2198 redundancy when this client takes it (it said so in `media_path`); nil
    /// otherwise, and then such packets are dropped as any other unknown payload type.
    private let redPayloadType: UInt8?
    private let audioLevelID: UInt8
    private var speakers: [UInt32: Speaker] = [:]
    /// Who is talking, by SSRC; nil when nobody asked to know.
    private var talkers: TalkerActivity<UInt32>?
    /// The speakers of the last report of who is talking, with the names it gave them.
    private var reported: [UInt32: String?] = [:]
    private var mixer = Mixer()

    /// A receiver of the room's stream of `payloadType`, reading levels from extension `audioLevelID`; with
    /// `tracksTalkers`, it follows who is talking (``heard(at:names:)``), and with `talkerLevels` reports level
    /// changes too, not only who starts and stops.
    init(
        payloadType: UInt8, redPayloadType: UInt8? = nil, audioLevelID: UInt8, tracksTalkers: Bool,
        talkerLevels: Bool = true
    ) {
        self.payloadType = payloadType
        self.redPayloadType = redPayloadType
        self.audioLevelID = audioLevelID
        var configuration = TalkerActivity<UInt32>.Configuration()
        configuration.reportsLevels = talkerLevels
        talkers = tracksTalkers ? TalkerActivity(configuration: configuration) : nil
    }

    /// Files one decrypted RTP packet that arrived at `arrival` (µs) in its speaker's jitter buffer. A RED
    /// packet files its primary frame, then each earlier frame it repeats at the place of that frame's own
    /// packet (one frame back per 960 of timestamp offset), which fills it only if that packet is missing; a RED
    /// payload that does not parse is a dropped packet. When this client takes RED, the buffer waits under loss
    /// long enough for the packet that repeats a lost frame last, by how many frames the speaker repeats
    /// (``RepeatDepth``; one frame more per frame repeated beyond the first), no longer.
    func insert(_ packet: UnsafeRawBufferPointer, arrival: Int64) {
        guard var header = try? RTPHeader.parse(packet) else { return }
        var primary = header.payloadRange
        var red: REDPayload?
        if let redPayloadType {
            // The server sends what it forwards to those who take RED under the odd SSRC beside the speaker's.
            header.ssrc &= ~1
            if header.payloadType == redPayloadType {
                guard
                    let parsed = try? REDPayload.parse(
                        UnsafeRawBufferPointer(rebasing: packet[header.payloadRange]), redPayloadType: redPayloadType),
                    parsed.primary.payloadType == payloadType
                else { return }
                red = parsed
                let start = header.payloadRange.lowerBound
                primary = (start + parsed.primary.range.lowerBound)..<(start + parsed.primary.range.upperBound)
            } else if header.payloadType != payloadType {
                return
            }
        } else if header.payloadType != payloadType {
            return
        }
        let speaker: Speaker
        if let existing = speakers[header.ssrc] {
            speaker = existing
        } else {
            guard let created = try? Speaker() else { return }
            speakers[header.ssrc] = created
            speaker = created
        }
        speaker.lastArrival = arrival
        _ = speaker.statistics.record(
            ssrc: header.ssrc, sequence: header.sequenceNumber, timestamp: header.timestamp,
            arrival: arrival * 48 / 1000)
        speaker.buffer.insert(
            sequence: header.sequenceNumber, timestamp: header.timestamp, ssrc: header.ssrc, arrival: arrival,
            payload: Array(UnsafeRawBufferPointer(rebasing: packet[primary])))
        if redPayloadType != nil {
            let deepest = red.map { fileRedundancy($0, of: header, in: packet, for: speaker) } ?? 0
            speaker.repeats.observe(sequence: header.sequenceNumber, timestamp: header.timestamp, repeats: deepest)
            speaker.buffer.setLossDelay(
                Self.jitter.lossDelay + Int64(max(0, speaker.repeats.frames - 1)) * AudioFormat.frameMicroseconds)
        }
        if talkers != nil,
            let level = try? RTPOneByteExtension.audioLevel(in: packet, header: header, id: audioLevelID)
        {
            talkers?.record(header.ssrc, dBov: level.level, voice: level.voice, at: arrival / 1000)
        }
    }

    /// Files the earlier frames a RED packet repeats; returns how many frames back the deepest one goes.
    private func fileRedundancy(
        _ red: REDPayload, of header: RTPHeader, in packet: UnsafeRawBufferPointer, for speaker: Speaker
    ) -> Int {
        var deepest: UInt16 = 0
        for index in 0..<red.redundantCount {
            let block = red.redundant(index)
            let step = UInt32(AudioFormat.rtpTimestampStep)
            let offset = UInt32(block.timestampOffset)
            guard block.payloadType == payloadType, offset % step == 0, !block.range.isEmpty else { continue }
            let back = UInt16(offset / step)
            deepest = max(deepest, back)
            let start = header.payloadRange.lowerBound
            speaker.buffer.insertRedundant(
                sequence: header.sequenceNumber &- back, timestamp: header.timestamp &- offset, ssrc: header.ssrc,
                payload: Array(
                    UnsafeRawBufferPointer(
                        rebasing: packet[(start + block.range.lowerBound)..<(start + block.range.upperBound)])))
        }
        return Int(deepest)
    }

    /// Decodes each speaker's next frame and mixes them into `mixed`, each at its local volume from `volumes`;
    /// returns how long the packets played had been due (the least over the speakers), in µs, or nil when none
    /// was played.
    ///
    /// One speaker at no more than full volume cannot overflow, so that frame is written as it was decoded
    /// (times the volume) instead of through the mixer's soft clipper, which would bend every peak above
    /// -6 dBFS of a lone loud voice. The soft clipper is for sums.
    func playOut(at now: Int64, volumes: SpeakerVolumes, into mixed: UnsafeMutableBufferPointer<Int16>) -> Int64? {
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
            mixer.render(into: mixed)
        }
        return leastSlack
    }

    /// Who is talking at `now` (µs), when it changed since the last call (see `TalkerActivity.poll`), or when a
    /// speaker in the last report got a name since (the server's `media_sources` can come after their first
    /// packets); nil when nothing changed or talkers are not tracked.
    func heard(at now: Int64, names: SpeakerVolumes) -> [HeardSpeaker]? {
        let time = now / 1000
        var polled = talkers?.poll(at: time)
        if polled == nil, reported.contains(where: { names.sources[$0.key] != $0.value }) {
            polled = talkers?.talkers(at: time)
        }
        guard let report = polled else { return nil }
        reported = Dictionary(uniqueKeysWithValues: report.keys.map { ($0, names.sources[$0]) })
        return report.keys.sorted().map { ssrc in
            let talker = report[ssrc]!
            return HeardSpeaker(
                ssrc: ssrc, peer: names.sources[ssrc], level: talker.level, talkingSince: talker.talkingSince)
        }
    }

    /// A receiver report block per speaker, in SSRC order, for RTCP, and the runs of loss of those that lost
    /// packets since the last report.
    func report() -> (blocks: [RTCPReportBlock], runs: [RTCPLossRuns]) {
        let order = speakers.keys.sorted()
        return (
            order.compactMap { speakers[$0]?.statistics.reportBlock() },
            order.compactMap { speakers[$0]?.statistics.takeLossRuns() }
        )
    }

    /// Forgets speakers silent for 30 s, then returns every speaker's figures, in SSRC order, named by `names`.
    func statistics(at now: Int64, names: SpeakerVolumes) -> [SpeakerStats] {
        for (ssrc, speaker) in speakers where now - speaker.lastArrival >= Self.forgetAfter {
            speakers[ssrc] = nil
            talkers?.remove(ssrc)
        }
        return speakers.keys.sorted().compactMap { ssrc -> SpeakerStats? in
            guard let speaker = speakers[ssrc] else { return nil }
            let stats = speaker.buffer.statistics
            return SpeakerStats(
                ssrc: ssrc, peer: names.sources[ssrc], received: stats.received, lost: stats.lost,
                recoveredByFEC: stats.recoveredByFEC, recoveredByRED: stats.recoveredByRED,
                concealed: stats.concealed, jitterMilliseconds: Double(stats.jitter) / 1000,
                playoutDelayMilliseconds: Double(stats.playoutDelay) / 1000)
        }
    }
}
