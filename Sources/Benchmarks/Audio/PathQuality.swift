import AudioCodec
import AudioCore
import ClientAudio
import Foundation
import Platform
import RoomClient
import ServerBenchmarks
import Synchronization

/// Speech through the whole path (client, server, client) beside libopus alone with the same settings and the
/// same lost frames, for `bench/quality`'s PESQ comparison.
///
/// A room server runs in this process on loopback. The speaker is a client as the product makes one (a
/// `RoomSession` and its media through a `ClientMediaSlot`: the send path with Opus, DTX, FEC switched on by the loss
/// its listeners report, RTP, SRTP, UDP); its microphone hands the speech to the media thread frame by frame, as
/// a device ring does, and with voice processing the send path cleans it as it does a person's microphone. The listener is another such
/// client, behind an ``ImpairingRelay`` that drops the seeded share of the server's RTP packets, chosen by
/// sequence number; it records what it mixes. The frames the relay dropped are then lost in the libopus-alone
/// run too. Runs in real time.
public enum PathQuality {
    /// What came out of each path, 48 kHz mono, the same length as the speech.
    public struct Result: Sendable, Equatable {
        /// Through the client, the server and the listening client.
        public var path: [Int16]
        /// Through one libopus encoder and decoder: a lost frame is rebuilt from the next packet's FEC when
        /// that one arrived, and concealed otherwise; DTX frames are not sent, as over RTP.
        public var opusAlone: [Int16]
        /// Frames of the speech (after the lead-in) whose packets the relay dropped.
        public var lostFrames: Int
        /// Frames of the speech.
        public var frames: Int
        /// The listener's figures for the speaker over the whole run (lead-in included).
        public var receiver: SpeakerStats?
        /// The Opus (or RED) payload the server sent the listener for the speech (after the lead-in), in kbit/s
        /// of speech: the datagrams' bytes less the RTP header, level extension and SRTP tag (30 bytes each).
        public var payloadKilobitsPerSecond: Double = 0
        /// libopus alone as a sender repeating frames would use it, on the same lost frames: with one earlier
        /// frame repeated, then with two; FEC off, a lost frame played from the first later packet that repeats it, concealed when none arrived within
        /// as many packets. What redundancy can give on this loss, without the network, the jitter buffer or the
        /// machine's timing.
        public var redundantAlone: [[Int16]] = []
    }

    /// Sends `speech` (48 kHz mono) through both paths with `lossPercent` random loss from `seed`, each packet
    /// of the server path delayed by `baseDelayMilliseconds` plus up to `jitterMilliseconds` more (so packets
    /// overtake each other). `voiceProcessing` cleans the speech as on a person's microphone, in the server path
    /// only.
    public static func run(
        speech: [Int16], lossPercent: Double, seed: UInt64, voiceProcessing: Bool, leadInSeconds: Int = 3,
        baseDelayMilliseconds: Double = 0, jitterMilliseconds: Double = 0, meanBurst: Double = 1,
        redundancy: Bool = true
    ) throws -> Result {
        // Both paths first say `leadInSeconds` of the same speech under the same loss, as a session would
        // have before the moment measured: the loss has been reported back to the speaker (which turns FEC on)
        // and the encoders and the jitter buffer are in their steady state.
        let frame = AudioFormat.samplesPerFrame
        let leadFrames = speech.isEmpty ? 0 : leadInSeconds * 1000 / AudioFormat.frameMilliseconds
        var signal = (0..<(leadFrames * frame)).map { speech[$0 % speech.count] }
        signal += speech
        let frameCount = (signal.count + frame - 1) / frame
        signal += [Int16](repeating: 0, count: frameCount * frame - signal.count)

        var link = LinkImpairment(
            lossPercent: lossPercent, baseDelayMilliseconds: baseDelayMilliseconds,
            jitterMilliseconds: jitterMilliseconds, seed: seed)
        link.meanBurst = meanBurst
        let room = try BenchServer(room: "bench", media: true)
        defer { room.shutdown() }
        let microphone = SpeechFeed(signal: signal)
        let listener = try MediaClientRig(
            room: room, identity: "listener", role: "audience", relay: link,
            options: ClientMedia.Options(record: true, redundancy: redundancy))
        defer { listener.close() }
        let speaker = try MediaClientRig(
            room: room, identity: "speaker", role: "speaker", relay: nil,
            options: ClientMedia.Options(
                source: .live(AudioFeed(capture: { microphone.fill($0) })),
                sending: SendPipeline.Configuration(voiceProcessing: voiceProcessing), redundancy: redundancy))
        defer { speaker.close() }
        try listener.client.join()
        try speaker.client.join()
        try speaker.client.unmute()
        try listener.waitForPath()
        try speaker.waitForPath()

        microphone.start()
        let seconds = Double(frameCount) * Double(AudioFormat.frameMilliseconds) / 1000
        MonotonicClock.sleep(
            microseconds: Int64((seconds + 0.6 + (baseDelayMilliseconds + jitterMilliseconds) / 1000) * 1_000_000))
        let heard = listener.stop()
        let records = listener.client.relay?.records ?? []
        guard let first = records.first else {
            throw PathBenchmarkError("no packet of the speaker reached the listener's relay")
        }
        // The speaker's first frame is always sent (Opus goes into DTX only after a run of quiet frames), so the
        // first packet's RTP timestamp is frame 0's.
        let lost = Set(
            records.filter { $0.decision == .drop }.map { Int(($0.timestamp &- first.timestamp) / 960) })
        let payloadBytes = records.filter { Int(($0.timestamp &- first.timestamp) / 960) >= leadFrames }
            .reduce(0) { $0 + max(0, $1.length - 30) }
        let speechSeconds = Double(frameCount - leadFrames) * Double(AudioFormat.frameMilliseconds) / 1000

        var settings = OpusEncoder.Configuration()
        settings.expectedLossPercent = Int(lossPercent.rounded(.up))
        let opus = try opusAlone(speech: signal, frames: frameCount, lost: lost, settings: settings)
        let redundant = try [1, 2].map { repeats in
            let heard = try opusAlone(
                speech: signal, frames: frameCount, lost: lost, settings: OpusEncoder.Configuration(), repeats: repeats)
            return Array(heard.dropFirst(leadFrames * frame).prefix(speech.count))
        }
        // The lead-in is a copy of the speech's start: a shift of its length lines that copy up with the speech
        // itself, nearly as well as the true shift. The path's true delay (network, jitter buffer, the moment
        // between the listener's start and the speaker's) is far shorter than a lead-in, so only shorter shifts
        // are tried.
        let delay = wholeFrameDelay(
            of: heard, against: opus, below: leadFrames > 0 ? leadFrames * frame : heard.count)
        var path = Array(heard.dropFirst(delay + leadFrames * frame).prefix(speech.count))
        path += [Int16](repeating: 0, count: max(0, speech.count - path.count))
        return Result(
            path: path, opusAlone: Array(opus.dropFirst(leadFrames * frame).prefix(speech.count)),
            lostFrames: lost.filter { $0 >= leadFrames }.count, frames: frameCount - leadFrames,
            receiver: listener.lastStats,
            payloadKilobitsPerSecond: speechSeconds > 0 ? Double(payloadBytes) * 8 / speechSeconds / 1000 : 0,
            redundantAlone: redundant)
    }

    /// The shift, in whole frames and below `limit` samples, at which `delayed` best matches `reference` (largest
    /// correlation). The listener mixes whole decoded frames from the start of its recording, so the shift is
    /// whole frames.
    static func wholeFrameDelay(of delayed: [Int16], against reference: [Int16], below limit: Int) -> Int {
        let frame = AudioFormat.samplesPerFrame
        var best = (shift: 0, correlation: -Double.infinity)
        var shift = 0
        while shift < min(limit, delayed.count) {
            let count = min(reference.count, delayed.count - shift)
            var sum = 0.0
            reference.withUnsafeBufferPointer { reference in
                delayed.withUnsafeBufferPointer { delayed in
                    for index in 0..<count {
                        sum += Double(reference[index]) * Double(delayed[index + shift])
                    }
                }
            }
            if sum > best.correlation { best = (shift, sum) }
            shift += frame
        }
        return best.shift
    }

    /// libopus alone: one encoder and one decoder, `lost` frames lost, DTX frames not sent. With `repeats`, each
    /// packet also carries the `repeats` frames before it (RFC 2198), so a lost frame is decoded whole from any
    /// of the next `repeats` packets that arrived; FEC then comes from the next packet's own frame only.
    static func opusAlone(
        speech: [Int16], frames: Int, lost: Set<Int>, settings: OpusEncoder.Configuration, repeats: Int = 0
    ) throws -> [Int16] {
        let encoder = try OpusEncoder(configuration: settings)
        let decoder = try OpusDecoder()
        let packets: [[UInt8]] = try (0..<frames).map { index in
            var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
            let start = index * AudioFormat.samplesPerFrame
            let end = min(speech.count, start + AudioFormat.samplesPerFrame)
            if end > start { frame.replaceSubrange(0..<(end - start), with: speech[start..<end]) }
            return try encoder.encode(frame)
        }
        var output: [Int16] = []
        output.reserveCapacity(frames * AudioFormat.samplesPerFrame)
        // As over RTP, DTX frames (one or two bytes) are not sent: the decoder conceals them like lost ones.
        func arrives(_ index: Int) -> Bool { !lost.contains(index) && packets[index].count > 2 }
        func repeated(_ index: Int) -> Bool {
            packets[index].count > 2 && (0...repeats).contains { index + $0 < frames && arrives(index + $0) }
        }
        for index in 0..<frames {
            if repeated(index) {
                output += try decoder.decode(packets[index]).samples
            } else if index + 1 < frames, arrives(index + 1) {
                var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
                _ = try frame.withUnsafeMutableBufferPointer { target throws(AudioCodecError) in
                    try packets[index + 1].withUnsafeBytes { bytes in
                        Swift.Result { () throws(AudioCodecError) in
                            try decoder.recover(fromNextPacket: bytes, into: target)
                        }
                    }.get()
                }
                output += frame
            } else {
                output += try decoder.decode(nil).samples
            }
        }
        return output
    }
}

/// The speaker's microphone in the quality run: silent (nothing to send) until started, then the signal frame
/// by frame on the media thread, then silent again.
final class SpeechFeed: Sendable {
    private let state: Mutex<(position: Int, started: Bool)> = Mutex((0, false))
    private let signal: [Int16]

    init(signal: [Int16]) {
        self.signal = signal
    }

    func start() { state.withLock { $0.started = true } }

    func fill(_ frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        let start = state.withLock { state -> Int? in
            guard state.started, state.position < signal.count else { return nil }
            defer { state.position += frame.count }
            return state.position
        }
        guard let start else { return false }
        for index in frame.indices {
            frame[index] = start + index < signal.count ? signal[start + index] : 0
        }
        return true
    }
}

/// A client as a bot runs one: a session whose media goes through a `ClientMediaSlot`.
final class MediaClientRig: Sendable {
    let client: BenchClient
    private let mediaSlot: ClientMediaSlot
    private let path = DispatchSemaphore(value: 0)
    private let stats = Locked<SpeakerStats?>(nil)

    init(
        room: BenchServer, identity: String, role: String, relay: LinkImpairment?, options: ClientMedia.Options
    ) throws {
        let path = path
        let stats = stats
        let mediaSlot = ClientMediaSlot(
            options: options,
            onEvent: { event in
                switch event {
                case .path: path.signal()
                case .stats(_, let speakers, _):
                    if let first = speakers.first { stats.withLock { $0 = first } }
                case .heard, .packet: break
                }
            },
            onFailure: { _ in })
        self.mediaSlot = mediaSlot
        client = try BenchClient(room: room, identity: identity, role: role, relay: relay) { mediaSlot.handle($0) }
        mediaSlot.attach(client.session)
    }

    /// Waits until the media path is chosen (UDP answered, or the fallback).
    func waitForPath() throws {
        guard path.wait(timeout: .now() + 10) == .success else {
            throw PathBenchmarkError("\(client.identity)'s media did not start within 10 s")
        }
    }

    /// The listener's last figures for its first speaker.
    var lastStats: SpeakerStats? { stats.withLock { $0 } }

    /// Stops the media and returns what it recorded.
    func stop() -> [Int16] { mediaSlot.close() }

    func close() {
        _ = stop()
        client.close()
    }
}
