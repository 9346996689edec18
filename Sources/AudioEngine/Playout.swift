import AudioCodec
import AudioCore
import Synchronization

/// What the receive path knows about one remote speaker, for the `audio_stats` report and the UI.
public struct SpeakerStatistics: Sendable, Equatable {
    /// The speaker's identity, as the media layer named it.
    public var speaker: String
    /// Packets received.
    public var packetsReceived: Int
    /// Packets that never arrived in time (each was recovered by FEC or concealed).
    public var lost: Int
    /// Lost frames rebuilt from the next packet's in-band FEC.
    public var recoveredByFEC: Int
    /// Lost frames filled by packet-loss concealment.
    public var concealed: Int
    /// Packets that arrived after their frame had been played.
    public var late: Int
    /// Frames dropped to bring the delay back down after it grew.
    public var skipped: Int
    /// Packets that could not be decoded (concealed instead).
    public var malformed: Int
    /// RFC 3550 interarrival jitter, in milliseconds.
    public var jitterMilliseconds: Double
    /// How long after its earliest possible arrival the last frame played, in milliseconds.
    public var playoutDelayMilliseconds: Double
    /// The jitter buffer's current target delay, in milliseconds.
    public var targetDelayMilliseconds: Double
    /// The level of the last frame played, in -dBov (127 silence).
    public var level: UInt8
    /// The local volume in percent.
    public var volume: Int

    /// The last frame's level on the UI's 0–100 scale.
    public var uiLevel: Int { AudioLevel.uiLevel(dBov: level) }
}

/// The receive path: packets from any thread, one adaptive jitter buffer and Opus decoder per speaker, and
/// every 20 ms a decoded, level-measured, volume-scaled mix.
///
/// `enqueue` may be called from any thread; `render` from one thread at a time (the engine's playout thread, or
/// a benchmark driving it directly). Neither is a real-time thread: the playback device reads the mix from a
/// ring the engine fills.
public final class Playout: Sendable {
    /// A packet as the media layer hands it over.
    struct Inbound: Sendable {
        var speaker: String
        var ssrc: UInt32
        var sequence: UInt16
        var timestamp: UInt32
        var arrival: Int64
        var payload: [UInt8]
    }

    private enum Command: Sendable {
        case packet(Inbound)
        case remove(String)
    }

    private let inbox = Mutex<[Command]>([])
    private let state: Mutex<State>
    private let published = Mutex<[String: SpeakerStatistics]>([:])
    private let volumes: VolumeStore
    private let jitterConfiguration: JitterBufferConfiguration

    /// A receive path with per-speaker jitter buffers tuned by `jitter`, scaling speakers by `volumes`.
    public init(jitter: JitterBufferConfiguration = JitterBufferConfiguration(), volumes: VolumeStore) {
        self.volumes = volumes
        jitterConfiguration = jitter
        state = Mutex(State())
    }

    /// Files one received packet from `speaker`. Any thread. `arrival` is in microseconds on
    /// ``MonotonicClock``.
    public func enqueue(
        speaker: String, ssrc: UInt32, sequence: UInt16, timestamp: UInt32, payload: [UInt8], arrival: Int64
    ) {
        let packet = Inbound(
            speaker: speaker, ssrc: ssrc, sequence: sequence, timestamp: timestamp, arrival: arrival,
            payload: payload)
        inbox.withLock { inbox in
            // Nobody is playing (the engine was not started, or its playout thread is stuck): keep memory bounded.
            guard inbox.count < Self.inboxLimit else { return }
            inbox.append(.packet(packet))
        }
    }

    /// The most packets waiting for the playout thread, about 3 s of 20 speakers.
    static let inboxLimit = 3_000

    /// Forgets a speaker (left the room, or stopped speaking for good); its statistics go too.
    public func removeSpeaker(_ speaker: String) {
        inbox.withLock { $0.append(.remove(speaker)) }
    }

    /// The statistics of every speaker heard, as of the last `render`, sorted by speaker.
    public var statistics: [SpeakerStatistics] {
        published.withLock { Array($0.values) }.sorted { $0.speaker < $1.speaker }
    }

    /// Files the packets waiting, then plays one 20 ms frame per speaker at `now` (µs, monotonic) and writes
    /// their mix to `output` (960 samples).
    public func render(at now: Int64, into output: UnsafeMutableBufferPointer<Int16>) {
        var commands = inbox.withLock { inbox -> [Command] in
            let taken = inbox
            inbox.removeAll(keepingCapacity: true)
            return taken
        }
        state.withLock { state in
            for command in commands {
                switch command {
                case .packet(let packet):
                    state.insert(packet, configuration: jitterConfiguration)
                case .remove(let speaker):
                    state.speakers.removeAll { $0.id == speaker }
                }
            }
            commands.removeAll()
            state.render(at: now, volumes: volumes, into: output)
            publish(state)
        }
    }

    private func publish(_ state: State) {
        published.withLock { published in
            if published.count != state.speakers.count {
                published.removeAll(keepingCapacity: true)
            }
            for speaker in state.speakers {
                published[speaker.id] = speaker.statistics
            }
        }
    }

    /// Everything the playout thread owns.
    private struct State: @unchecked Sendable {
        // `@unchecked` because `Speaker` holds an `OpusDecoder` (a class with C state); `State` lives inside a
        // `Mutex` and only the thread holding it touches the decoders.
        var speakers: [Speaker] = []
        var mixer = Mixer()

        mutating func insert(_ packet: Inbound, configuration: JitterBufferConfiguration) {
            let index: Int
            if let found = speakers.firstIndex(where: { $0.id == packet.speaker }) {
                index = found
            } else {
                // A decoder that cannot be created (out of memory) means this speaker stays silent.
                guard let decoder = try? OpusDecoder() else { return }
                speakers.append(Speaker(id: packet.speaker, decoder: decoder, configuration: configuration))
                index = speakers.count - 1
            }
            speakers[index].jitter.insert(
                sequence: packet.sequence, timestamp: packet.timestamp, ssrc: packet.ssrc, arrival: packet.arrival,
                payload: packet.payload)
        }

        mutating func render(at now: Int64, volumes: VolumeStore, into output: UnsafeMutableBufferPointer<Int16>) {
            var sounding = 0
            var only = 0
            for index in speakers.indices {
                speakers[index].volume = volumes.volume(for: speakers[index].id)
                speakers[index].sounding = speakers[index].playFrame(at: now)
                if speakers[index].sounding {
                    sounding += 1
                    only = index
                }
            }
            // One speaker at no more than full volume cannot overflow: pass the frame through untouched instead
            // of through the mixer's soft clipper, which would bend its peaks above -6 dBFS for no reason.
            if sounding == 1 && speakers[only].volume <= VolumeStore.defaultVolume {
                let gain = Mixer.gain(percent: speakers[only].volume)
                speakers[only].frame.withUnsafeBufferPointer { frame in
                    for sample in 0..<min(frame.count, output.count) {
                        output[sample] = gain == 1 ? frame[sample] : Int16((Float(frame[sample]) * gain).rounded())
                    }
                }
                return
            }
            for index in speakers.indices where speakers[index].sounding {
                speakers[index].frame.withUnsafeBufferPointer { frame in
                    mixer.add(frame, gain: Mixer.gain(percent: speakers[index].volume))
                }
            }
            mixer.render(into: output)
        }
    }

    private struct Speaker {
        let id: String
        var jitter: JitterBuffer<[UInt8]>
        let decoder: OpusDecoder
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var level = AudioLevel.silence
        var volume = VolumeStore.defaultVolume
        var sounding = false
        var silentFrames = Speaker.comfortFrames

        /// How long concealment goes on into a silence: after that the speaker costs nothing until they speak.
        static let comfortFrames = 50

        init(id: String, decoder: OpusDecoder, configuration: JitterBufferConfiguration) {
            self.id = id
            self.decoder = decoder
            jitter = JitterBuffer(configuration: configuration)
        }

        /// Decodes, recovers or conceals this speaker's frame for the tick; false when the speaker is silent.
        mutating func playFrame(at now: Int64) -> Bool {
            let decision = jitter.nextFrame(at: now)
            let decoder = decoder
            let played = frame.withUnsafeMutableBufferPointer { frame -> Bool in
                // The frame buffer is always 960 samples, the only thing these calls check.
                switch decision {
                case .packet(let payload):
                    _ = payload.withUnsafeBytes { try? decoder.decode($0, into: frame) }
                case .fecFrom(let next):
                    _ = next.withUnsafeBytes { try? decoder.recover(fromNextPacket: $0, into: frame) }
                case .conceal:
                    try? decoder.conceal(into: frame)
                case .silence:
                    // Between talk spurts (DTX) the decoder keeps running its concealment for a while, as libopus
                    // expects for frames not sent: speech fades into comfort noise instead of stopping dead, and
                    // the next spurt starts from a decoder that has followed the silence.
                    guard silentFrames < Self.comfortFrames else { return false }
                    silentFrames += 1
                    try? decoder.conceal(into: frame)
                    return true
                }
                silentFrames = 0
                return true
            }
            level = played ? frame.withUnsafeBufferPointer { AudioLevel.dBov($0) } : AudioLevel.silence
            return played
        }

        var statistics: SpeakerStatistics {
            let counts = jitter.statistics
            return SpeakerStatistics(
                speaker: id, packetsReceived: counts.received, lost: counts.lost,
                recoveredByFEC: counts.recoveredByFEC, concealed: counts.concealed, late: counts.late,
                skipped: counts.skipped,
                malformed: decoder.malformedPacketCount, jitterMilliseconds: Double(counts.jitter) / 1000,
                playoutDelayMilliseconds: Double(counts.playoutDelay) / 1000,
                targetDelayMilliseconds: Double(counts.targetDelay) / 1000, level: level, volume: volume)
        }
    }
}
