import AudioCodec
import AudioCore
import AudioDevices
import Dispatch
import Foundation
import Synchronization

/// Opens a microphone for the engine; the engine calls it again to reopen one that went away.
public typealias InputOpener = @Sendable () throws(AudioDeviceError) -> any AudioInput
/// Opens a loudspeaker for the engine; the engine calls it again to reopen one that went away.
public typealias OutputOpener = @Sendable () throws(AudioDeviceError) -> any AudioOutput

/// How an ``AudioEngine`` is set up. The defaults are a person's client: ALSA `default` both ways, voice
/// processing on, echo cancellation off, the microphone open (not muted), devices paced in real time.
public struct AudioEngineConfiguration: Sendable {
    /// The microphone (`--input`).
    public var input: DeviceSpec
    /// The loudspeaker (`--output`).
    public var output: DeviceSpec
    /// Opens the microphone instead of `input`, for benchmarks and tests with devices of their own.
    public var inputOpener: InputOpener?
    /// Opens the loudspeaker instead of `output`, for benchmarks and tests with devices of their own.
    public var outputOpener: OutputOpener?
    /// Voice processing, echo cancellation and encoder settings.
    public var send: SendPipeline.Configuration
    /// The talking controls at start: mode, mute, hold, threshold.
    public var talk: TalkControl
    /// The per-speaker jitter buffers' tuning.
    public var jitter: JitterBufferConfiguration
    /// Records what is heard, mixed, to this 48 kHz mono 16-bit WAV file (`clubroom bot --record`).
    public var recordPath: String?
    /// Whether virtual devices keep real time.
    public var pacing: Pacing
    /// How ALSA devices are opened.
    public var alsaOptions: ALSAOptions
    /// Options for the two real-time device threads (priority, reopen backoff, a start hook for tests).
    public var streamOptions: StreamOptions
    /// Samples of mixed audio kept queued for the loudspeaker beyond the period it is about to take. None by
    /// default: the playout thread renders the next frame as soon as the ring runs dry, and has a whole 10 ms
    /// period to do it before the loudspeaker's next read. When the loudspeaker does starve (a busy machine),
    /// the engine adds a period of lead, up to ``maximumPlaybackLead``.
    public var playbackLead: Int
    /// The most lead the engine grows to after starvation: two periods.
    public static let maximumPlaybackLead = 2 * AudioFormat.samplesPerPeriod

    /// The jitter buffers' default tuning: AudioCore's, with a 5 ms floor instead of 20 ms, raised to 25 ms for
    /// 10 s after a loss. The playout tick falls anywhere within a frame relative to arrivals, which already gives
    /// a packet 0–20 ms of slack; the floor only has to cover the sender's scheduling jitter, and the target still
    /// grows with real jitter. While packets are being lost, one frame more lets the next packet arrive in time
    /// for its FEC to rebuild the lost one.
    public static var defaultJitter: JitterBufferConfiguration {
        var configuration = JitterBufferConfiguration()
        configuration.minimumDelay = 5_000
        configuration.lossDelay = 25_000
        return configuration
    }

    /// Creates a configuration; every parameter has the default for a person's client.
    public init(
        input: DeviceSpec = .alsa("default"), output: DeviceSpec = .alsa("default"),
        inputOpener: InputOpener? = nil, outputOpener: OutputOpener? = nil,
        send: SendPipeline.Configuration = SendPipeline.Configuration(), talk: TalkControl = TalkControl(),
        jitter: JitterBufferConfiguration = AudioEngineConfiguration.defaultJitter, recordPath: String? = nil,
        pacing: Pacing = .realTime, alsaOptions: ALSAOptions = ALSAOptions(),
        streamOptions: StreamOptions = StreamOptions(), playbackLead: Int = 0
    ) {
        self.input = input
        self.output = output
        self.inputOpener = inputOpener
        self.outputOpener = outputOpener
        self.send = send
        self.talk = talk
        self.jitter = jitter
        self.recordPath = recordPath
        self.pacing = pacing
        self.alsaOptions = alsaOptions
        self.streamOptions = streamOptions
        self.playbackLead = max(0, playbackLead)
    }
}

/// The microphone's level as the last captured frame measured it, sent or not (for the UI's preview).
public struct MicrophoneLevel: Sendable, Equatable {
    /// -dBov: 0 loudest, 127 silence (RFC 6464).
    public var dBov: UInt8
    /// Whether voice activity detection heard speech.
    public var voice: Bool
    /// 0–100 for a level bar.
    public var uiLevel: Int { AudioLevel.uiLevel(dBov: dBov) }
}

/// The client's audio: microphone to Opus packets, and packets from any number of speakers to the
/// loudspeaker.
///
/// Threads (see docs/audio-engine.md): the capture and playback device threads (real time: they only move
/// 10 ms periods between the device and lock-free rings); the encoder thread (capture ring -> echo
/// cancellation, voice processing, level, talking controls, Opus -> `onEncoded`); the playout thread (packets ->
/// jitter buffers, decoders, mixer -> playback ring, echo reference, recording); and a control thread that
/// reports device trouble through `onStatus` and reopens lost devices.
///
/// A listener's engine only plays: ``start()`` opens the loudspeaker, and the microphone is opened by
/// ``startCapture()`` alone, which the session calls only when the person's role may publish.
public final class AudioEngine: Sendable {
    /// The setup this engine was created with.
    public let configuration: AudioEngineConfiguration
    /// Per-speaker local volumes.
    public let volumes: VolumeStore
    /// Mute, push-to-talk and voice-activated controls; safe from any thread.
    public let talk: TalkSwitch
    /// The receive path.
    public let playout: Playout

    private let onEncoded: @Sendable (EncodedAudio) -> Void
    private let onStatus: @Sendable (EngineStatus) -> Void
    private let playbackRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
    private let echoRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
    private let requestedLoss = Atomic<Int>(-1)
    private let micDBov = Atomic<UInt8>(AudioLevel.silence)
    private let micVoice = Atomic<Bool>(false)
    private let sent = Mutex(SendStatistics())
    private let recorder: Recorder?
    private let parts = Mutex(Parts())

    private struct Parts: @unchecked Sendable {
        // `@unchecked` for the streams' devices behind `AudioStream` (which is Sendable itself) and the workers;
        // the struct only lives inside the `parts` mutex.
        var playback: AudioStream?
        var capture: AudioStream?
        var playoutWorker: Worker?
        var encoderWorker: Worker?
        var controlWorker: Worker?
        var stopped = false
    }

    /// Creates an engine; nothing is opened until ``start()``.
    ///
    /// - Parameters:
    ///   - volumes: where per-speaker volumes are kept (in memory when not given).
    ///   - onEncoded: receives each packet to send, on the encoder thread; hand it to the media layer quickly.
    ///   - onStatus: receives device trouble in plain words, on the control thread.
    public init(
        configuration: AudioEngineConfiguration = AudioEngineConfiguration(), volumes: VolumeStore? = nil,
        onEncoded: @escaping @Sendable (EncodedAudio) -> Void = { _ in },
        onStatus: @escaping @Sendable (EngineStatus) -> Void = { _ in }
    ) throws(AudioEngineError) {
        self.configuration = configuration
        // A store without a file cannot fail.
        self.volumes = volumes ?? (try! VolumeStore(path: nil))
        talk = TalkSwitch(configuration.talk)
        playout = Playout(jitter: configuration.jitter, volumes: self.volumes)
        self.onEncoded = onEncoded
        self.onStatus = onStatus
        if let path = configuration.recordPath {
            do throws(AudioDeviceError) {
                recorder = Recorder(try WAVFileOutput(path: path, pacing: .unpaced))
            } catch {
                throw .recording(error)
            }
        } else {
            recorder = nil
        }
    }

    deinit {
        stop()
    }

    // MARK: Lifecycle.

    /// Starts listening: the playout thread, the loudspeaker and the control thread. A loudspeaker that cannot
    /// be opened is reported once through `onStatus` and replaced by a silent one, paced like hardware.
    /// Calling it again does nothing.
    public func start() throws(AudioEngineError) {
        let opener = try outputOpener()
        parts.withLock { parts in
            guard parts.playback == nil, !parts.stopped else { return }
            let source = RingSource(playbackRing, lead: configuration.playbackLead)
            let stream = AudioStream.playback(
                device: configuration.output.description, open: opener, from: source,
                options: configuration.streamOptions, onStatus: { [onStatus] in onStatus(.device($0)) })
            parts.playoutWorker = Worker.start(name: "clubroom-playout") { [self] worker in
                runPlayout(worker, stream: stream, source: source)
            }
            parts.playback = stream
            stream.start()
            parts.controlWorker = Worker.start(name: "clubroom-audio-control") { [self] worker in
                runControl(worker)
            }
        }
    }

    /// Starts speaking: opens the microphone and starts the encoder thread. Only for roles that may publish;
    /// a listener's engine never calls it, so its microphone is never opened. A microphone that cannot be
    /// opened is reported through `onStatus` and replaced by silence; a virtual one that cannot (a WAV file
    /// that does not read) is an error.
    public func startCapture() throws(AudioEngineError) {
        let opener = try inputOpener()
        let pipeline: SendPipeline
        do throws(AudioCodecError) {
            pipeline = try SendPipeline(configuration: configuration.send, talk: talk)
        } catch {
            throw .codec(error)
        }
        let box = PipelineBox(pipeline)
        parts.withLock { parts in
            guard parts.capture == nil, !parts.stopped else { return }
            let captureRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
            let sink = RingSink(captureRing)
            let stream = AudioStream.capture(
                device: configuration.input.description, open: opener, into: sink,
                options: configuration.streamOptions, onStatus: { [onStatus] in onStatus(.device($0)) })
            parts.capture = stream
            parts.encoderWorker = Worker.start(name: "clubroom-encoder") { [self] worker in
                runEncoder(worker, sink: sink, pipeline: box, stream: stream)
            }
            stream.start()
            if parts.controlWorker == nil {
                parts.controlWorker = Worker.start(name: "clubroom-audio-control") { [self] worker in
                    runControl(worker)
                }
            }
        }
    }

    /// Stops speaking: closes the microphone and stops the encoder thread (after a demotion, say).
    public func stopCapture() {
        let (stream, worker) = parts.withLock { parts in
            defer {
                parts.capture = nil
                parts.encoderWorker = nil
            }
            return (parts.capture, parts.encoderWorker)
        }
        stream?.stop()
        worker?.stop()
        micDBov.store(AudioLevel.silence, ordering: .relaxed)
    }

    /// Whether the microphone is open (``startCapture()`` was called and not stopped).
    public var isCapturing: Bool { parts.withLock { $0.capture != nil } }

    /// Stops everything and closes the devices and the recording. The engine cannot be started again. Call it
    /// when done: the engine's threads hold it until then.
    public func stop() {
        stopCapture()
        let taken = parts.withLock { parts -> Parts in
            let taken = parts
            parts = Parts()
            parts.stopped = true
            return taken
        }
        taken.controlWorker?.stop()
        taken.playback?.stop()
        taken.playoutWorker?.stop()
        // The playout thread, the recording's only writer, has ended.
        recorder?.output.close()
    }

    // MARK: Media layer.

    /// Files a packet from `speaker` (their identity; one jitter buffer and decoder each). Any thread.
    /// `arrival` is when it arrived in microseconds on ``MonotonicClock`` (now when not given).
    public func receive(
        speaker: String, ssrc: UInt32, sequence: UInt16, timestamp: UInt32, payload: [UInt8], arrival: Int64? = nil
    ) {
        playout.enqueue(
            speaker: speaker, ssrc: ssrc, sequence: sequence, timestamp: timestamp, payload: payload,
            arrival: arrival ?? MonotonicClock.microseconds())
    }

    /// Forgets a speaker who left.
    public func removeSpeaker(_ speaker: String) {
        playout.removeSpeaker(speaker)
    }

    /// Tells the encoder the loss receivers report, so it sizes its FEC. Any thread.
    public func setExpectedLoss(percent: Int) {
        requestedLoss.store(min(100, max(0, percent)), ordering: .relaxed)
    }

    // MARK: Controls and readings.

    /// Mutes or unmutes the microphone.
    public func setMuted(_ muted: Bool) { talk.setMuted(muted) }

    /// The talk key was pressed (push-to-talk latches the microphone open for its hold).
    public func talkKeyPressed() { talk.talkKeyPressed(at: MonotonicClock.microseconds() / 1000) }

    /// Chooses how the microphone opens when not muted.
    public func setTalkMode(_ mode: TalkMode) { talk.setMode(mode) }

    /// Sets a speaker's local volume (0–200 %) and saves it for next time.
    public func setVolume(_ percent: Int, for speaker: String) throws(VolumeStoreError) {
        try volumes.setVolume(percent, for: speaker)
    }

    /// The microphone's level, for the UI's meter.
    public var microphoneLevel: MicrophoneLevel {
        MicrophoneLevel(dBov: micDBov.load(ordering: .relaxed), voice: micVoice.load(ordering: .relaxed))
    }

    /// What the send path has done.
    public var sendStatistics: SendStatistics { sent.withLock { $0 } }

    /// Per-speaker statistics for `audio_stats`.
    public var speakerStatistics: [SpeakerStatistics] { playout.statistics }

    /// The device threads' counters (periods, xruns, drops, losses); nil for a stream not running.
    public var deviceStatistics: (capture: StreamStatistics?, playback: StreamStatistics?) {
        parts.withLock { ($0.capture?.statistics, $0.playback?.statistics) }
    }

    // MARK: Devices.

    private func inputOpener() throws(AudioEngineError) -> InputOpener {
        if let opener = configuration.inputOpener { return opener }
        let spec = configuration.input
        let pacing = configuration.pacing
        let options = configuration.alsaOptions
        if case .wav = spec {
            // A file that does not read is a mistake on the command line, not a missing sound card: say so now.
            do throws(AudioDeviceError) { _ = try spec.openInput(pacing: pacing) } catch { throw .device(error) }
        }
        return { () throws(AudioDeviceError) in try spec.openInput(pacing: pacing, alsaOptions: options) }
    }

    private func outputOpener() throws(AudioEngineError) -> OutputOpener {
        if let opener = configuration.outputOpener { return opener }
        let spec = configuration.output
        let pacing = configuration.pacing
        let options = configuration.alsaOptions
        return { () throws(AudioDeviceError) in try spec.openOutput(pacing: pacing, alsaOptions: options) }
    }

    // MARK: Threads.

    /// How long the encoder and playout threads wait for their device threads' signal before looking at their
    /// rings anyway (a device that stopped signalling, a request to stop).
    static let wakeupTimeout: DispatchTimeInterval = .milliseconds(20)

    private func runPlayout(_ worker: Worker, stream: AudioStream, source: RingSource) {
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        frame.initialize(repeating: 0)
        defer { frame.deallocate() }
        let echo = configuration.send.echoCancellation
        var lead = configuration.playbackLead
        var starvedSeen = 0
        var rendered = false
        while !worker.isStopping {
            let starved = stream.statistics.starvedPeriods
            if starved > starvedSeen {
                // Starvation before the first frame is the stream starting, not the thread being late.
                if rendered {
                    lead = min(AudioEngineConfiguration.maximumPlaybackLead, lead + AudioFormat.samplesPerPeriod)
                    source.lead.store(lead, ordering: .relaxed)
                }
                starvedSeen = starved
            }
            while playbackRing.availableToRead <= lead && playbackRing.availableToWrite >= frame.count {
                playout.render(at: MonotonicClock.microseconds(), into: frame)
                rendered = true
                playbackRing.write(UnsafeBufferPointer(frame))
                if echo { echoRing.write(UnsafeBufferPointer(frame)) }
                _ = try? recorder?.output.write(UnsafeBufferPointer(frame))
            }
            _ = source.wakeup.wait(timeout: .now() + Self.wakeupTimeout)
        }
    }

    private func runEncoder(_ worker: Worker, sink: RingSink, pipeline: PipelineBox, stream: AudioStream) {
        let ring = sink.ring
        let pipeline = pipeline.pipeline
        let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        let played = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)
        frame.initialize(repeating: 0)
        played.initialize(repeating: 0)
        defer {
            frame.deallocate()
            played.deallocate()
        }
        let echo = configuration.send.echoCancellation
        var droppedSeen = 0
        while !worker.isStopping {
            while ring.availableToRead >= frame.count {
                ring.read(into: frame)
                if echo {
                    // Keep the reference within 100 ms of the microphone; a surplus means playback ran ahead.
                    let surplus = echoRing.availableToRead - AudioFormat.samples(milliseconds: 100)
                    if surplus > 0 { echoRing.discard(count: surplus) }
                    if echoRing.availableToRead >= played.count {
                        echoRing.read(into: played)
                    } else {
                        played.update(repeating: 0)
                    }
                }
                let loss = requestedLoss.load(ordering: .relaxed)
                if loss >= 0 { pipeline.setExpectedLoss(percent: loss) }
                let packet = pipeline.process(
                    frame, played: echo ? UnsafeBufferPointer(played) : nil,
                    at: MonotonicClock.microseconds() / 1000)
                micDBov.store(pipeline.lastLevel, ordering: .relaxed)
                micVoice.store(pipeline.lastVoice, ordering: .relaxed)
                let dropped = stream.statistics.droppedPeriods
                if dropped > droppedSeen {
                    pipeline.countDroppedPeriods(dropped - droppedSeen)
                    droppedSeen = dropped
                }
                let statistics = pipeline.statistics
                sent.withLock { $0 = statistics }
                if let packet { onEncoded(packet) }
            }
            _ = sink.wakeup.wait(timeout: .now() + Self.wakeupTimeout)
        }
    }

    /// How often the control thread polls the devices, in microseconds.
    static let controlInterval: Int64 = 100_000
    /// The least time between two reports of xruns on one device, in microseconds.
    static let xrunReportInterval: Int64 = 10_000_000

    private func runControl(_ worker: Worker) {
        var reported: [DeviceDirection: (count: Int, at: Int64)] = [:]
        while !worker.isStopping {
            let streams = parts.withLock { [$0.capture, $0.playback].compactMap { $0 } }
            let now = MonotonicClock.microseconds()
            for stream in streams {
                stream.poll()
                let xruns = stream.statistics.xruns
                let last = reported[stream.direction] ?? (0, Int64.min / 2)
                if xruns > last.count && now - last.at >= Self.xrunReportInterval {
                    onStatus(.xruns(stream.direction, device: stream.deviceName, count: xruns - last.count))
                    reported[stream.direction] = (xruns, now)
                }
            }
            MonotonicClock.sleep(microseconds: Self.controlInterval)
        }
    }
}

/// Carries the send pipeline to the encoder thread, its only user from then on.
private final class PipelineBox: @unchecked Sendable {
    // `@unchecked`: created on the caller's thread and handed over once, before the encoder thread starts;
    // from then on only the encoder thread touches the pipeline.
    let pipeline: SendPipeline
    init(_ pipeline: SendPipeline) { self.pipeline = pipeline }
}

/// The recording of what is heard.
private final class Recorder: @unchecked Sendable {
    // `@unchecked`: only the playout thread writes to the file, and `stop` closes it after that thread ended.
    let output: WAVFileOutput
    init(_ output: WAVFileOutput) { self.output = output }
}

/// The capture device thread's end of the capture ring: it wakes the encoder thread once a frame is ready.
private final class RingSink: SampleSink {
    let ring: SampleRing
    /// Signalled when the ring holds a whole frame. Signalling never blocks or allocates; the encoder waits.
    let wakeup = DispatchSemaphore(value: 0)

    init(_ ring: SampleRing) { self.ring = ring }

    func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let written = ring.write(samples)
        if ring.availableToRead >= AudioFormat.samplesPerFrame { wakeup.signal() }
        return written
    }
}

/// The playback device thread's end of the playback ring: it wakes the playout thread when the ring is down to
/// the lead, so the next frame is mixed just in time.
private final class RingSource: SampleSource {
    let ring: SampleRing
    /// Signalled when the ring is down to `lead` samples. Signalling never blocks or allocates.
    let wakeup = DispatchSemaphore(value: 0)
    /// The playout thread's current lead, in samples.
    let lead: Atomic<Int>

    init(_ ring: SampleRing, lead: Int) {
        self.ring = ring
        self.lead = Atomic(lead)
    }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        let read = ring.read(into: buffer)
        if ring.availableToRead <= lead.load(ordering: .relaxed) { wakeup.signal() }
        return read
    }
}

/// A named thread that runs until asked to stop, and a way to wait for it.
final class Worker: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    private init() {}

    /// Starts `body` on a new thread; it should return soon after ``isStopping`` turns true.
    static func start(name: String, _ body: @escaping @Sendable (Worker) -> Void) -> Worker {
        let worker = Worker()
        let thread = Thread {
            body(worker)
            worker.finished.signal()
        }
        thread.name = name
        thread.start()
        return worker
    }

    /// Whether the thread has been asked to stop.
    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Asks the thread to stop and waits until it has.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }
}
