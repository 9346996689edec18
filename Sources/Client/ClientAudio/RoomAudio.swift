import AudioCodec
import AudioCore
import AudioDevices
import Foundation
import Platform
import RoomProtocol
import Synchronization

/// What the room's sound tells the screen.
public enum RoomAudioReport: Sendable, Equatable {
    /// Device trouble in plain words, for the status line.
    case status(String)
    /// The microphone's level (0–100), or nil when the microphone is closed.
    case microphone(level: Int?)
    /// Whether the microphone runs on silence because the one asked for could not be opened or stopped working
    /// (true), or a microphone is open and working (false). Said each time the microphone opens, and when it is
    /// lost or comes back.
    case microphoneMissing(Bool)
    /// The file played into the room and how far it is, about once a second while it plays.
    case playing(NowPlaying)
    /// The file played to its end (not when it was stopped).
    case playEnded(title: String)
}

/// How the room screen's sound is set up (`--input`, `--output`, `--echo-cancel`).
public struct RoomAudioSettings: Sendable, Equatable {
    /// The microphone, opened only while the person's role may publish (or for a preview).
    public var input: DeviceSpec
    /// The loudspeaker, opened on joining.
    public var output: DeviceSpec
    /// Whether to cancel the loudspeaker's echo in the microphone.
    public var echoCancellation: Bool
    /// Noise suppression, gain control and voice detection on the microphone; nil: as suits the input (on for a
    /// person's microphone, off for a file or a tone).
    public var voiceProcessing: Bool?
    /// Where each speaker's local volume is kept (`SavedVolumes`); nil keeps volumes for this session only.
    public var volumesPath: String?
    /// Whether levels are reported as they change, for a front end that draws them: the microphone's
    /// (`.microphone`), and those of the speakers heard (`speakers` is then also called when only a level moved,
    /// not only when someone starts or stops talking). Line mode draws no level bar: without the reports its
    /// thread is not woken up to ten times a second while people talk.
    public var reportsLevel = true

    /// Settings for these devices; volumes are kept in `SavedVolumes.defaultPath()` unless told otherwise.
    public init(
        input: DeviceSpec, output: DeviceSpec, echoCancellation: Bool, voiceProcessing: Bool? = nil,
        volumesPath: String? = SavedVolumes.defaultPath()
    ) {
        self.input = input
        self.output = output
        self.echoCancellation = echoCancellation
        self.voiceProcessing = voiceProcessing
        self.volumesPath = volumesPath
    }

    /// The send path these settings ask for.
    var sending: SendPipeline.Configuration {
        var configuration = SendPipeline.Configuration.suggested(for: input)
        configuration.echoCancellation = echoCancellation
        if let voiceProcessing { configuration.voiceProcessing = voiceProcessing }
        return configuration
    }
}

/// The client's sound in a room, whole: the microphone and loudspeaker threads (AudioDevices' streams and the
/// lock-free rings they fill and drain), the media thread (`ClientMedia`: the send path, SRTP, jitter buffers,
/// decoders and mix) for each connection's offer, a control thread that watches the devices, and the local
/// volumes. The runtime drives it with a few calls:
///
/// - ``start()`` and ``stop()``: listen to the room (the loudspeaker opens) and leave it;
/// - ``setCapturing(_:)``: open the microphone while the person's role may publish, close it otherwise, so an
///   audience member's microphone is never opened; ``setMuted(_:)`` decides whether it is sent;
/// - ``setVolume(_:for:)``: how loud each peer sounds, kept across sessions;
/// - ``startPreview(_:)`` and ``stopPreview()``: the microphone's live level before speaking, or why it cannot
///   open;
/// - `report` says device trouble in words and the microphone's level; `speakers` (when given) hears who is
///   talking among the speakers heard, from every packet's level, as soon as they start.
public final class RoomAudio: MediaReceiver {
    /// The devices' period while the microphone is open: short, for a low mouth-to-ear delay in conversation.
    public static let speakingPeriod = AudioFormat.periodMilliseconds
    /// The loudspeaker's period while the microphone is closed: someone who only listens hears the room a little
    /// later, for fewer wake-ups.
    public static let listeningPeriod = 40

    private let settings: RoomAudioSettings
    private let devices: RoomAudioDevices
    private let report: @Sendable (RoomAudioReport) -> Void
    private let talk = TalkSwitch(muted: true)
    private let player: FilePlayer
    private let rings = DeviceRings()
    private let mediaSlot: ClientMediaSlot
    private let captureOpens = Atomic<Int>(0)
    private let state = Mutex(State())
    /// Serialises the changes of devices, which wait for audio threads to finish their period.
    private let changes = Mutex(())

    /// How the devices run.
    enum Mode: Sendable, Equatable {
        /// Nothing open.
        case off
        /// The loudspeaker alone, on long periods.
        case listening
        /// The loudspeaker on long periods and, on a thread of its own, the microphone for a preview.
        case previewing
        /// Microphone and loudspeaker on short periods, served by one thread (`AudioDuplex`).
        case speaking
    }

    private struct State: @unchecked Sendable {
        // `@unchecked` for the streams and the thread; the struct only lives inside the mutex.
        var mode = Mode.off
        var playback: AudioStream?
        var capture: AudioStream?
        var duplex: AudioDuplex?
        var started = false
        /// Whether the microphone is open for speaking (the role may publish).
        var capturing = false
        /// Who is shown the microphone's preview.
        var preview: (@Sendable (MicrophonePreview) -> Void)?
        var volumes: SavedVolumes?
        var stopping = false
        /// Each device's failure to open as last told, so that the same failure when the device is opened again
        /// (a role change reopens both) is not told twice: told once per change of the device's state, and
        /// forgotten once the device opens or comes back.
        var failureTold: [DeviceDirection: String] = [:]

        /// The mode the calls so far ask for.
        var wanted: Mode {
            guard started, !stopping else { return .off }
            if capturing { return .speaking }
            return preview == nil ? .listening : .previewing
        }
    }

    /// Creates the sound; nothing is opened until ``start()``. `devices` opens the microphone and loudspeaker
    /// (by default the ones `settings` name). `report` and `speakers` are called on the sound's own threads.
    public init(
        settings: RoomAudioSettings, devices: RoomAudioDevices? = nil,
        report: @escaping @Sendable (RoomAudioReport) -> Void,
        speakers: (@Sendable ([HeardSpeaker]) -> Void)? = nil
    ) {
        self.settings = settings
        self.devices = devices ?? RoomAudioDevices(settings)
        self.report = report
        let rings = rings
        let player = FilePlayer(onFinish: { title in report(.playEnded(title: title)) })
        self.player = player
        let feed = AudioFeed(
            capture: { rings.captureFrame($0) }, playback: { rings.playFrame($0) },
            captureWait: { rings.lastCaptureWait })
        mediaSlot = ClientMediaSlot(
            options: ClientMedia.Options(
                source: .live(feed), sending: settings.sending, talk: talk, output: feed,
                tracksTalkers: speakers != nil, talkerLevels: settings.reportsLevel, player: player),
            onEvent: { event in
                if case .heard(let heard) = event { speakers?(heard) }
            },
            onFailure: { problem in report(.status("Sound could not start: \(problem). You can still see the room.")) })
    }

    /// The microphone speaking would use, as it was chosen (`--input`).
    public var microphoneName: String { settings.input.description }

    /// How many times the microphone has been opened, for tests.
    public var microphoneOpenings: Int { captureOpens.load(ordering: .relaxed) }

    /// How the devices run now, for tests.
    var mode: Mode { state.withLock { $0.mode } }

    /// The control connection that media travels on when UDP does not get through.
    public func attach(_ channel: MediaChannel) {
        mediaSlot.attach(channel)
    }

    /// A media message from the server (`media`, `media_key`, `media_sources`).
    public func handle(_ signal: MediaSignal) {
        mediaSlot.handle(signal)
    }

    /// A binary WebSocket message from the server: media on the fallback path.
    public func receivedOverWebSocket(_ bytes: [UInt8]) {
        mediaSlot.receivedOverWebSocket(bytes)
    }

    /// Starts listening: opens the loudspeaker (or, when it cannot be opened, says so once and plays to `null`)
    /// and the control thread.
    public func start() {
        loadVolumes()
        let started = state.withLock { state -> Bool in
            guard !state.started, !state.stopping else { return false }
            state.started = true
            return true
        }
        guard started else { return }
        changeDevices()
        startThread(named: "clubroom-audio") { [self] in runControl() }
    }

    /// Opens the file at `path` and plays it into the room beside the microphone (docs/audio-engine.md); a file
    /// that cannot be played is refused before anything plays.
    public func play(_ path: String) throws(SoundFileError) -> NowPlaying {
        try player.play(path)
    }

    /// Stops the file playing, if one plays.
    public func stopPlaying() {
        player.stop()
    }

    /// Opens (true) or closes (false) the microphone for speaking: open while the person's role may publish.
    /// Closing it stops a file playing too.
    public func setCapturing(_ capturing: Bool) {
        if !capturing { player.stop() }
        state.withLock { $0.capturing = capturing }
        changeDevices()
    }

    /// Mutes or unmutes the microphone (the server's mute for this person).
    public func setMuted(_ muted: Bool) { talk.setMuted(muted) }

    /// Shows `handler` the microphone's live level (opening it for the preview if it is not open for speaking),
    /// or why it cannot be opened, until ``stopPreview()``. Nothing is sent because of a preview.
    public func startPreview(_ handler: @escaping @Sendable (MicrophonePreview) -> Void) {
        state.withLock { $0.preview = handler }
        changeDevices()
    }

    /// Ends the preview; the microphone closes unless it is open for speaking.
    public func stopPreview() {
        state.withLock { $0.preview = nil }
        changeDevices()
    }

    /// Every speaker's local volume in percent by identity, as loaded at ``start()`` and changed since
    /// (100 % is not listed).
    public var volumes: [String: Int] { state.withLock { $0.volumes }?.all ?? [:] }

    /// Sets how loud `peer` sounds (0–200 %), saves it for the next session and applies it from the next mix.
    /// A volume that cannot be saved still applies now; the trouble is reported as a status line.
    public func setVolume(_ percent: Int, for peer: String) {
        guard let store = state.withLock({ $0.volumes }) else { return }
        do {
            try store.setVolume(percent, for: peer)
        } catch {
            report(.status("This volume is for this session only: \(error)."))
        }
        mediaSlot.setVolumes(store.all)
    }

    /// Stops the media, closes both devices and ends the control thread.
    public func stop() {
        state.withLock { $0.stopping = true }
        mediaSlot.close()
        changeDevices()
    }

    /// Loads the kept volumes once. A file that cannot be read is said in one line; volumes then start at
    /// 100 % and are kept in memory only, so the file is left for the person to fix.
    private func loadVolumes() {
        guard state.withLock({ $0.volumes == nil }) else { return }
        let store: SavedVolumes?
        do {
            store = try SavedVolumes(path: settings.volumesPath)
        } catch {
            report(.status("Volumes start at 100 % and are not saved this session: \(error)."))
            store = try? SavedVolumes(path: nil)
        }
        state.withLock { $0.volumes = $0.volumes ?? store }
        mediaSlot.setVolumes(store?.all ?? [:])
    }

    // MARK: The devices

    /// Brings the devices to the mode the calls so far ask for: stops what runs, then opens what the new mode
    /// needs. Only a change of mode touches the devices (a mute, or a second call to open the microphone, does
    /// not); each change reopens the loudspeaker, which skips a moment of sound.
    private func changeDevices() {
        changes.withLock { _ in
            let (wanted, current) = state.withLock { ($0.wanted, $0.mode) }
            guard wanted != current else { return }
            let old = state.withLock { state -> (AudioStream?, AudioStream?, AudioDuplex?) in
                defer {
                    state.playback = nil
                    state.capture = nil
                    state.duplex = nil
                }
                return (state.playback, state.capture, state.duplex)
            }
            rings.setMicrophone(nil, sending: false)
            old.2?.stop()
            old.1?.stop()
            old.0?.stop()
            // What was queued for the old loudspeaker's periods would stay as delay on the new one.
            rings.dropQueuedPlayback()
            var playback: AudioStream?
            var capture: (stream: AudioStream, sink: RingSink)?
            var duplex: AudioDuplex?
            switch wanted {
            case .off:
                break
            case .listening:
                playback = playbackStream(period: Self.listeningPeriod, pacing: .realTime)
            case .previewing:
                playback = playbackStream(period: Self.listeningPeriod, pacing: .realTime)
                capture = captureStream()
            case .speaking:
                playback = playbackStream(period: Self.speakingPeriod, pacing: .driven)
                capture = captureStream()
                duplex = AudioDuplex(capture: capture!.stream, playback: playback!)
            }
            if let playback { rings.setPlaybackPeriod(playback.options.periodSamples) }
            mediaSlot.setListenOnly(wanted != .speaking)
            state.withLock { state in
                state.mode = wanted
                state.playback = playback
                state.capture = capture?.stream
                state.duplex = duplex
            }
            if let capture {
                rings.setMicrophone(capture.sink, sending: wanted == .speaking)
                captureOpens.add(1, ordering: .relaxed)
            }
            if let duplex {
                duplex.start()
            } else {
                playback?.start()
                capture?.stream.start()
            }
            // A loudspeaker that opened makes its next failure news again.
            if let playback, !playback.isUsingFallback { state.withLock { $0.failureTold[.playback] = nil } }
            if let capture {
                let missing = capture.stream.isUsingFallback
                if !missing { state.withLock { $0.failureTold[.capture] = nil } }
                report(.microphoneMissing(missing))
            }
        }
    }

    private func playbackStream(period: Int, pacing: Pacing) -> AudioStream {
        let request = DeviceRequest(periodMilliseconds: period, pacing: pacing)
        return AudioStream.playback(
            device: settings.output.description,
            open: { [devices] () throws(AudioDeviceError) in try devices.openOutput(request) },
            from: RingSource(rings.playback),
            options: StreamOptions(periodSamples: AudioFormat.samples(milliseconds: period)),
            onStatus: { [self] status in speakerStatus(status) })
    }

    private func captureStream() -> (stream: AudioStream, sink: RingSink) {
        let request = DeviceRequest(periodMilliseconds: Self.speakingPeriod, pacing: .realTime)
        let sink = RingSink(SampleRing(capacity: AudioFormat.samples(milliseconds: 200)))
        let stream = AudioStream.capture(
            device: settings.input.description,
            open: { [devices] () throws(AudioDeviceError) in try devices.openInput(request) }, into: sink,
            options: StreamOptions(periodSamples: AudioFormat.samples(milliseconds: Self.speakingPeriod)),
            onStatus: { [self] status in microphoneStatus(status) })
        return (stream, sink)
    }

    private func microphoneStatus(_ status: DeviceStatus) {
        guard case .unavailable = status else {
            if case .reopened = status { state.withLock { $0.failureTold[.capture] = nil } }
            report(.status(status.message))
            if case .lost = status { report(.microphoneMissing(true)) }
            if case .reopened = status { report(.microphoneMissing(false)) }
            return
        }
        let (told, preview) = state.withLock { state in
            defer { state.failureTold[.capture] = status.message }
            return (state.failureTold[.capture] == status.message, state.preview)
        }
        if !told { report(.status(status.message)) }
        preview?(.unavailable(status.message))
    }

    /// The loudspeaker's news: a failure to open is told once until the loudspeaker opens or comes back (every
    /// role change reopens it on another period).
    private func speakerStatus(_ status: DeviceStatus) {
        guard case .unavailable = status else {
            if case .reopened = status { state.withLock { $0.failureTold[.playback] = nil } }
            report(.status(status.message))
            return
        }
        let told = state.withLock { state in
            defer { state.failureTold[.playback] = status.message }
            return state.failureTold[.playback] == status.message
        }
        if !told { report(.status(status.message)) }
    }

    // MARK: The control thread

    /// How often the control thread polls the devices and the level while a level is shown (the microphone open
    /// for speaking with a front end that draws its level, or a preview), in microseconds.
    static let controlInterval: Int64 = 100_000
    /// How often it polls the devices otherwise: enough to notice a device that went away.
    static let listeningControlInterval: Int64 = 500_000

    /// The control thread's sleep between two looks: short only while a level it reads is shown. Line mode
    /// speaking shows none, so its control thread wakes twice a second, not ten times.
    static func controlInterval(mode: Mode, reportsLevel: Bool, previewing: Bool) -> Int64 {
        let showsLevel = previewing || (mode == .speaking && reportsLevel)
        return showsLevel ? controlInterval : listeningControlInterval
    }
    /// The least time between two reports of xruns on one device, in microseconds.
    static let xrunReportInterval: Int64 = 10_000_000

    /// The UI level (0–100) shown for a microphone level in -dBov, in steps of 5.
    static func shownLevel(_ dBov: UInt8) -> Int {
        (AudioLevel.uiLevel(dBov: dBov) + 2) / 5 * 5
    }

    private func runControl() {
        var reported: [DeviceDirection: (count: Int, at: Int64)] = [:]
        var levelReported = false
        var lastLevel: Int?
        var lastPreview: Int?
        var lastPlaying: NowPlaying?
        while true {
            let (streams, mode, preview, stopping) = state.withLock { state in
                ([state.capture, state.playback].compactMap { $0 }, state.mode, state.preview, state.stopping)
            }
            if stopping { return }
            let now = MonotonicClock.microseconds()
            for stream in streams {
                stream.poll()
                let xruns = stream.statistics.xruns
                let last = reported[stream.direction] ?? (0, Int64.min / 2)
                if xruns > last.count && now - last.at >= Self.xrunReportInterval {
                    let status = DeviceStatus.xruns(
                        stream.direction, device: stream.deviceName, count: xruns - last.count)
                    report(.status(status.message))
                    reported[stream.direction] = (xruns, now)
                }
            }
            // Speaking: the send path's level, after voice processing, in the steps of 5 every level bar shows (so
            // that wobbles too small to see wake nobody); nil while the microphone is closed.
            let speaking = mode == .speaking
            let level = speaking ? mediaSlot.media?.microphoneLevel.map { Self.shownLevel($0) } : nil
            if settings.reportsLevel, !levelReported || level != lastLevel {
                levelReported = true
                lastLevel = level
                report(.microphone(level: level))
            }
            // A preview: the same level while speaking; alone, the loudest frame captured since the last look.
            if let preview, let shown = speaking ? level : rings.drainForPreview(), shown != lastPreview {
                lastPreview = shown
                preview(.level(shown))
            }
            if preview == nil { lastPreview = nil }
            let playing = player.nowPlaying
            if let playing, playing != lastPlaying { report(.playing(playing)) }
            lastPlaying = playing
            MonotonicClock.sleep(
                microseconds: Self.controlInterval(
                    mode: mode, reportsLevel: settings.reportsLevel, previewing: preview != nil))
        }
    }
}
