import AudioCore
import AudioDevices
import AudioEngine
import Foundation
import MediaClient
import RoomClient
import RoomProtocol
import Synchronization

/// What the room's sound tells the screen.
public enum RoomAudioReport: Sendable, Equatable {
    /// Device trouble in plain words, for the status line.
    case status(String)
    /// The microphone's level (0–100), or nil when the microphone is closed.
    case microphone(level: Int?)
}

/// How the room screen's sound is set up (`--input`, `--output`, `--echo-cancel`).
public struct RoomAudioSettings: Sendable, Equatable {
    /// The microphone, opened only while the person's role may publish.
    public var input: DeviceSpec
    /// The loudspeaker, opened on joining.
    public var output: DeviceSpec
    /// Whether to cancel the loudspeaker's echo in the microphone.
    public var echoCancellation: Bool
    /// Where each speaker's local volume is kept (`VolumeStore`); nil keeps volumes for this session only.
    public var volumesPath: String?

    /// Settings for these devices; volumes are kept in `VolumeStore.defaultPath()` unless told otherwise.
    public init(
        input: DeviceSpec, output: DeviceSpec, echoCancellation: Bool,
        volumesPath: String? = VolumeStore.defaultPath()
    ) {
        self.input = input
        self.output = output
        self.echoCancellation = echoCancellation
        self.volumesPath = volumesPath
    }
}

/// The room screen's sound: the device threads of AudioDevices connected to the media plane (`ClientMedia`)
/// through its `AudioFeed` hooks. The media thread hands each 20 ms mix to the playback ring and takes each
/// 20 ms microphone frame from the capture ring, cleaned by AudioEngine's send pipeline (voice processing,
/// echo cancellation, level, talking controls); the device threads only move periods in and out of the rings.
///
/// The loudspeaker opens at ``start()``; the microphone opens only through ``setCapturing(_:)``, which the
/// screen calls while the person's role may publish, so an audience member's microphone is never opened.
/// A control thread reports device trouble and the microphone's level through `report`.
public final class RoomAudio: Sendable {
    private let settings: RoomAudioSettings
    private let devices: RoomAudioDevices
    private let report: @Sendable (RoomAudioReport) -> Void
    private let talk = TalkSwitch(TalkControl(muted: true))
    private let playbackRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
    private let lastPlayed = FrameBox()
    private let playbackQueue = PlaybackQueue()
    private let micLevel = Atomic<Int>(-1)
    /// How long the newest captured period had waited when the media thread last took a frame, in µs (-1:
    /// unknown). Written and read on the media thread.
    private let captureWait = Atomic<Int64>(-1)
    private let captureOpens = Atomic<Int>(0)
    private let state = Mutex(State())

    private struct State: @unchecked Sendable {
        // `@unchecked` for the streams and the capture's pipeline; the struct only lives inside the mutex.
        var session: RoomSession?
        var media: ClientMedia?
        var playback: AudioStream?
        var capture: Capture?
        var control: Thread?
        var volumes: VolumeStore?
        var stopping = false
    }

    /// Creates the sound; nothing is opened until ``start()``. `devices` opens the microphone and loudspeaker
    /// (by default the ones `settings` name).
    public init(
        settings: RoomAudioSettings, devices: RoomAudioDevices? = nil,
        report: @escaping @Sendable (RoomAudioReport) -> Void
    ) {
        self.settings = settings
        self.devices = devices ?? RoomAudioDevices(settings)
        self.report = report
    }

    /// How many times the microphone has been opened, for tests.
    public var microphoneOpenings: Int { captureOpens.load(ordering: .relaxed) }

    /// The session whose media this sound plays and sends.
    public func attach(_ session: RoomSession) {
        state.withLock { $0.session = session }
    }

    /// Opens the loudspeaker (or, when it cannot be opened, says so once and plays to `null`) and starts the
    /// control thread.
    public func start() {
        loadVolumes()
        let stream = AudioStream.playback(
            device: settings.output.description, open: devices.openOutput,
            from: RingReader(playbackRing), onStatus: { [report] in report(.status($0.message)) })
        let started = state.withLock { state -> Bool in
            guard state.playback == nil, !state.stopping else { return false }
            state.playback = stream
            let thread = Thread { [self] in runControl() }
            thread.name = "clubroom-room-audio"
            state.control = thread
            return true
        }
        guard started else { return }
        stream.start()
        state.withLock { $0.control }?.start()
    }

    /// Opens (true) or closes (false) the microphone: open while the person's role may publish.
    public func setCapturing(_ capturing: Bool) {
        if capturing {
            // Already open (only the mute changed): keep it, rather than build a second pipeline to throw away.
            guard state.withLock({ $0.capture == nil && !$0.stopping }) else { return }
            let input = settings.input
            var configuration = SendPipeline.Configuration.suggested(for: input)
            configuration.echoCancellation = settings.echoCancellation
            guard let pipeline = try? SendPipeline(configuration: configuration, talk: talk) else {
                report(.status("Your microphone cannot be used: the voice processing could not start."))
                return
            }
            let ring = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
            let writer = RingWriter(ring)
            let stream = AudioStream.capture(
                device: input.description, open: devices.openInput,
                into: writer, onStatus: { [report] in report(.status($0.message)) })
            let capture = Capture(stream: stream, ring: ring, lastWrite: writer.lastWrite, pipeline: pipeline)
            let opened = state.withLock { state -> Bool in
                guard state.capture == nil, !state.stopping else { return false }
                state.capture = capture
                return true
            }
            guard opened else { return }
            captureOpens.add(1, ordering: .relaxed)
            stream.start()
        } else {
            let capture = state.withLock { state -> Capture? in
                defer { state.capture = nil }
                return state.capture
            }
            capture?.stream.stop()
            micLevel.store(-1, ordering: .relaxed)
        }
    }

    /// Mutes or unmutes the microphone (the server's mute for this person).
    public func setMuted(_ muted: Bool) { talk.setMuted(muted) }

    /// Media traffic from the session (its loop thread).
    public func handle(_ media: SessionMedia) {
        switch media {
        case .packet(let bytes):
            state.withLock { $0.media }?.receivedOverWebSocket(bytes)
        case .signal(.mediaKey(let key, let epoch)):
            state.withLock { $0.media }?.newRoomKey(key, epoch: epoch)
        case .signal(.media(let offer)):
            startMedia(offer)
        case .signal(.mediaSources(let sources)):
            state.withLock { $0.media }?.setSources(sources)
        case .signal(.mediaPath):
            break
        }
    }

    /// Every speaker's local volume in percent by identity, as loaded at ``start()`` and changed since
    /// (100 % is not listed).
    public var volumes: [String: Int] { state.withLock { $0.volumes }?.all ?? [:] }

    /// Sets how loud `peer` sounds (0–200 %), saves it for the next session and applies it from the next mix.
    /// A volume that cannot be saved still applies now; the trouble is reported as a status line.
    public func setVolume(_ percent: Int, for peer: String) {
        let (store, media) = state.withLock { ($0.volumes, $0.media) }
        guard let store else { return }
        do {
            try store.setVolume(percent, for: peer)
        } catch {
            report(.status("This volume is for this session only: \(error)."))
        }
        media?.setVolumes(store.all)
    }

    /// Loads the kept volumes once. A file that cannot be read is said in one line; volumes then start at
    /// 100 % and are kept in memory only, so the file is left for the person to fix.
    private func loadVolumes() {
        guard state.withLock({ $0.volumes == nil }) else { return }
        let store: VolumeStore?
        do {
            store = try VolumeStore(path: settings.volumesPath)
        } catch {
            report(.status("Volumes start at 100 % and are not saved this session: \(error)."))
            store = try? VolumeStore(path: nil)
        }
        state.withLock { $0.volumes = $0.volumes ?? store }
    }

    /// Stops the media, closes both devices and ends the control thread.
    public func stop() {
        let taken = state.withLock { state -> State in
            let taken = state
            state = State()
            state.stopping = true
            return taken
        }
        taken.media?.stop()
        taken.capture?.stream.stop()
        taken.playback?.stop()
    }

    private func startMedia(_ offer: MediaOffer) {
        let (old, session) = state.withLock { state in
            defer { state.media = nil }
            return (state.media, state.session)
        }
        old?.stop()
        let feed = AudioFeed(
            capture: { [self] frame in captureFrame(frame) }, playback: { [self] frame in playFrame(frame) },
            captureWait: { [self] in
                let wait = captureWait.load(ordering: .relaxed)
                return wait < 0 ? nil : wait
            })
        do {
            let media = try ClientMedia(
                offer: offer, options: ClientMedia.Options(source: .live(feed), output: feed),
                sendWebSocket: { bytes in session?.sendBinary(bytes) },
                sendControl: { text in session?.sendRaw(text) }, onEvent: { _ in })
            media.setVolumes(volumes)
            let kept = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.media = media
                return true
            }
            if kept { media.start() }
        } catch {
            report(.status("Sound could not start: \(error). You can still see the room."))
        }
    }

    // MARK: The media thread.

    private func playFrame(_ frame: UnsafeBufferPointer<Int16>) {
        lastPlayed.store(frame)
        playbackQueue.push(frame, into: playbackRing)
    }

    private func captureFrame(_ frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        guard let capture = state.withLock({ $0.capture }) else { return false }
        guard capture.queue.take(from: capture.ring, into: frame) else { return false }
        let now = MonotonicClock.microseconds()
        let written = capture.lastWrite.time
        captureWait.store(written > 0 ? max(0, now - written) : -1, ordering: .relaxed)
        let open = lastPlayed.withFrame { played in
            capture.pipeline.prepare(frame, played: settings.echoCancellation ? played : nil, at: now / 1000)
        }
        micLevel.store(AudioLevel.uiLevel(dBov: capture.pipeline.lastLevel), ordering: .relaxed)
        return open
    }

    // MARK: The control thread.

    /// How often the control thread polls the devices and the level, in microseconds.
    static let controlInterval: UInt32 = 100_000
    /// The least time between two reports of xruns on one device, in microseconds.
    static let xrunReportInterval: Int64 = 10_000_000

    private func runControl() {
        setThreadName("clubroom-audio")
        var reported: [DeviceDirection: (count: Int, at: Int64)] = [:]
        var lastLevel = Int.min
        while true {
            let (streams, stopping) = state.withLock { state in
                ([state.capture?.stream, state.playback].compactMap { $0 }, state.stopping)
            }
            if stopping { return }
            let now = MonotonicClock.microseconds()
            for stream in streams {
                stream.poll()
                let xruns = stream.statistics.xruns
                let last = reported[stream.direction] ?? (0, Int64.min / 2)
                if xruns > last.count && now - last.at >= Self.xrunReportInterval {
                    report(
                        .status(
                            EngineStatus.xruns(stream.direction, device: stream.deviceName, count: xruns - last.count)
                                .message))
                    reported[stream.direction] = (xruns, now)
                }
            }
            let level = micLevel.load(ordering: .relaxed)
            if level != lastLevel {
                lastLevel = level
                report(.microphone(level: level < 0 ? nil : level))
            }
            usleep(Self.controlInterval)
        }
    }
}

/// An open microphone: its device stream, the ring it fills, and the pipeline that cleans its frames.
private final class Capture: @unchecked Sendable {
    // `@unchecked`: the pipeline is only used on the media thread (the feed's capture side); the stream and
    // the ring are safe to share.
    let stream: AudioStream
    let ring: SampleRing
    let lastWrite: WriteStamp
    let pipeline: SendPipeline
    let queue = CaptureQueue()

    init(stream: AudioStream, ring: SampleRing, lastWrite: WriteStamp, pipeline: SendPipeline) {
        self.stream = stream
        self.ring = ring
        self.lastWrite = lastWrite
        self.pipeline = pipeline
    }
}

/// The last frame played, as the echo canceller's reference.
private final class FrameBox: @unchecked Sendable {
    // `@unchecked`: both the feed's playback side (which stores) and its capture side (which reads) run on the
    // one media thread.
    private let frame = UnsafeMutableBufferPointer<Int16>.allocate(capacity: AudioFormat.samplesPerFrame)

    init() { frame.initialize(repeating: 0) }
    deinit { frame.deallocate() }

    func store(_ samples: UnsafeBufferPointer<Int16>) {
        guard samples.count == frame.count else { return }
        frame.baseAddress!.update(from: samples.baseAddress!, count: frame.count)
    }

    func withFrame<Result>(_ body: (UnsafeBufferPointer<Int16>) -> Result) -> Result {
        body(UnsafeBufferPointer(frame))
    }
}

/// When the capture thread last wrote a period, in `MonotonicClock` µs (0: never).
private final class WriteStamp: Sendable {
    private let stamp = Atomic<Int64>(0)
    var time: Int64 { stamp.load(ordering: .acquiring) }
    func mark() { stamp.store(MonotonicClock.microseconds(), ordering: .releasing) }
}

/// The capture device thread's end of a ring; stamps each write (a clock read and an atomic store, safe on the
/// audio thread).
private final class RingWriter: SampleSink {
    let ring: SampleRing
    let lastWrite = WriteStamp()
    init(_ ring: SampleRing) { self.ring = ring }
    func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        let written = ring.write(samples)
        lastWrite.mark()
        return written
    }
}

/// The playback device thread's end of a ring.
private final class RingReader: SampleSource {
    let ring: SampleRing
    init(_ ring: SampleRing) { self.ring = ring }
    func read(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int { ring.read(into: buffer) }
}
