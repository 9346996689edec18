import AudioCore
import Dispatch
import Foundation
import Platform
import Synchronization

/// What happened to a stream's device, in words a person can read (`message`). Delivered by `poll`, on the
/// thread that calls it, never on the audio thread.
public enum DeviceStatus: Sendable, Equatable {
    /// The device could not be opened when the stream started; it runs on the silent `fallback` instead and
    /// does not try again.
    case unavailable(DeviceDirection, device: String, error: AudioDeviceError, fallback: String)
    /// The device stopped working; the stream keeps time on silence and reopens it with backoff.
    case lost(DeviceDirection, device: String, error: AudioDeviceError)
    /// Reopening failed; the next try is after `retryIn`.
    case reopenFailed(DeviceDirection, device: String, error: AudioDeviceError, retryIn: Duration)
    /// The device works again.
    case reopened(DeviceDirection, device: String)
    /// The device ran out of audio (playback) or overflowed (capture) `count` more times: sound had gaps. Said by
    /// whoever watches the stream's statistics (the client's control thread, at most every 10 s).
    case xruns(DeviceDirection, device: String, count: Int)

    /// One sentence for the status line.
    public var message: String {
        switch self {
        case .unavailable(let direction, _, let error, let fallback):
            let option = direction == .capture ? "--input" : "--output"
            let what = direction == .capture ? "microphone" : "speaker"
            // The advice comes before the details, so that a notice cut to the screen's width keeps it.
            return "No \(what) (\(error.briefDescription)); using “\(fallback)”. Choose one with \(option) NAME "
                + "(see clubroom devices). Details: \(error)."
        case .lost(let direction, let device, let error):
            return "\(Self.noun(direction)) “\(device)” stopped working (\(error)); trying to reopen it."
        case .reopenFailed(let direction, let device, _, let retryIn):
            let seconds = Double(retryIn.components.seconds) + Double(retryIn.components.attoseconds) / 1e18
            return "\(Self.noun(direction)) “\(device)” is still unavailable; trying again in "
                + "\(seconds.formatted(.number.precision(.fractionLength(0...1)))) s."
        case .reopened(let direction, let device):
            return "\(Self.noun(direction)) “\(device)” is back."
        case .xruns(let direction, let device, let count):
            let times = count == 1 ? "once" : "\(count) times"
            let effect = direction == .capture ? "some of your voice was lost" : "what you hear had gaps"
            return "\(Self.noun(direction)) “\(device)” could not keep up \(times) (\(effect)); the machine may be too "
                + "busy."
        }
    }

    private static func noun(_ direction: DeviceDirection) -> String {
        direction == .capture ? "Microphone" : "Speaker"
    }
}

/// How long a stream waits between attempts to reopen a lost device: `initial`, doubling up to `maximum`.
public struct ReopenBackoff: Sendable, Equatable {
    /// Wait before the first attempt.
    public var initial: Duration
    /// The longest wait between attempts.
    public var maximum: Duration

    /// Creates a backoff; the defaults retry quickly at first and settle at one try every 8 s.
    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(8)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after `failures` failed attempts.
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initial
        for _ in 0..<min(failures, 32) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}

/// Counts of what a stream has done, read at any time without disturbing the audio thread.
public struct StreamStatistics: Sendable, Equatable {
    /// Periods moved between the device and the ring.
    public var periods = 0
    /// Overruns (capture) or underruns (playback) the device had and recovered from.
    public var xruns = 0
    /// Capture periods that did not fit in the sink (the reader is behind); their samples were dropped.
    public var droppedPeriods = 0
    /// Playback periods the source could not fill; the gap was played as silence.
    public var starvedPeriods = 0
    /// Times the device stopped working.
    public var deviceLosses = 0
    /// Attempts to reopen a lost device.
    public var reopenAttempts = 0
}

/// Options for the thread behind a stream.
public struct StreamOptions: Sendable {
    /// Ask for real-time scheduling (`SCHED_FIFO`) for the audio thread; where that is not allowed the thread
    /// runs at normal priority. It is used only while the device suits it (`suitsRealTimePriority`): ALSA
    /// hardware and paced virtual devices do; unpaced virtual devices, which would starve the machine, and a
    /// sound server's plugins (`pulse`, `pipewire`, `jack`), whose server keeps the pace, do not.
    public var realTimePriority: Bool
    /// How lost devices are retried.
    public var backoff: ReopenBackoff
    /// Called once on the audio thread just before its first period, for instrumentation (naming the thread
    /// for a profiler, counting allocations in tests). Must not block.
    public var onAudioThreadStart: (@Sendable () -> Void)?
    /// Samples moved per period: how often the audio thread wakes. 480 (10 ms) by default; open an ALSA device
    /// with the same period (`ALSAOptions.periodMilliseconds`) so that each transfer is one wake-up.
    public var periodSamples: Int

    /// Creates options; every parameter has the default for a session.
    public init(
        realTimePriority: Bool = true, backoff: ReopenBackoff = ReopenBackoff(),
        onAudioThreadStart: (@Sendable () -> Void)? = nil, periodSamples: Int = AudioFormat.samplesPerPeriod
    ) {
        self.realTimePriority = realTimePriority
        self.backoff = backoff
        self.onAudioThreadStart = onAudioThreadStart
        self.periodSamples = max(1, periodSamples)
    }
}

/// Moves audio between one device and a lock-free ring on a thread of its own: captured periods into a
/// `SampleSink`, or periods from a `SampleSource` to a loudspeaker.
///
/// The audio thread only reads or writes the device and the ring: after `start` it does not allocate, log or
/// take a lock. Xruns are recovered by the device and counted. When the device fails, the audio thread marks
/// it lost (an atomic) and keeps time on silence; `poll`, called regularly by the session's control loop,
/// reports the loss, reopens the device with backoff and hands it back. A device that cannot be opened at
/// `start` is reported once and replaced by a silent virtual device for the rest of the stream.
public final class AudioStream: Sendable {
    /// Whether this stream captures or plays.
    public let direction: DeviceDirection
    /// The name of the device asked for.
    public let deviceName: String
    fileprivate let core: StreamCore
    /// The options the stream was made with.
    public var options: StreamOptions { core.options }

    /// A stream that captures from the input `open` returns into `sink`.
    public static func capture(
        device: String, open: @escaping @Sendable () throws(AudioDeviceError) -> any AudioInput,
        into sink: any SampleSink, options: StreamOptions = StreamOptions(),
        onStatus: @escaping @Sendable (DeviceStatus) -> Void
    ) -> AudioStream {
        AudioStream(
            direction: .capture, device: device,
            core: StreamCore(
                direction: .capture, device: device, opener: .input(open), sink: sink, source: nil, options: options,
                onStatus: onStatus))
    }

    /// A stream that plays what `source` holds on the output `open` returns.
    public static func playback(
        device: String, open: @escaping @Sendable () throws(AudioDeviceError) -> any AudioOutput,
        from source: any SampleSource, options: StreamOptions = StreamOptions(),
        onStatus: @escaping @Sendable (DeviceStatus) -> Void
    ) -> AudioStream {
        AudioStream(
            direction: .playback, device: device,
            core: StreamCore(
                direction: .playback, device: device, opener: .output(open), sink: nil, source: source,
                options: options, onStatus: onStatus))
    }

    /// A stream that captures from the ALSA PCM `device` (`default` and so on) into `sink`.
    public static func capture(
        alsaDevice device: String, alsaOptions: ALSAOptions = ALSAOptions(), into sink: any SampleSink,
        options: StreamOptions = StreamOptions(), onStatus: @escaping @Sendable (DeviceStatus) -> Void
    ) -> AudioStream {
        capture(
            device: device, open: { () throws(AudioDeviceError) in try ALSAInput(name: device, options: alsaOptions) },
            into: sink, options: options, onStatus: onStatus)
    }

    /// A stream that plays what `source` holds on the ALSA PCM `device`.
    public static func playback(
        alsaDevice device: String, alsaOptions: ALSAOptions = ALSAOptions(), from source: any SampleSource,
        options: StreamOptions = StreamOptions(), onStatus: @escaping @Sendable (DeviceStatus) -> Void
    ) -> AudioStream {
        playback(
            device: device,
            open: { () throws(AudioDeviceError) in try ALSAOutput(name: device, options: alsaOptions) },
            from: source, options: options, onStatus: onStatus)
    }

    private init(direction: DeviceDirection, device: String, core: StreamCore) {
        self.direction = direction
        self.deviceName = device
        self.core = core
    }

    deinit {
        // The audio thread holds the core, not this object; without this it would run on after the last user.
        core.stop()
    }

    /// Opens the device (or, failing that, reports it and opens the silent fallback) and starts the audio
    /// thread. Calling it again does nothing.
    public func start() {
        core.start()
    }

    /// Reports what happened to the device since the last call and reopens a lost device when its backoff has
    /// passed. Call it from the control loop (every 100 ms or so); the status callback runs here.
    public func poll(now: ContinuousClock.Instant = .now) {
        core.poll(now: now)
    }

    /// Stops the audio thread, waits for it to finish its period, and closes the device.
    public func stop() {
        core.stop()
    }

    /// What the stream has done so far.
    public var statistics: StreamStatistics { core.statistics }

    /// Whether the stream runs on the silent fallback because the device could not be opened.
    public var isUsingFallback: Bool { core.isUsingFallback }

    /// Whether the audio thread runs at real-time priority: asked for in the options, suited to the device
    /// (not a sound server's plugin), and allowed by the system.
    public var runsAtRealTimePriority: Bool { core.realTime.load(ordering: .relaxed) }
}

/// The state shared between the control thread and the audio thread.
///
/// `@unchecked Sendable` because of `endpoint`, `buffer` and `lastError`, which are not protected by a lock:
/// ownership of them passes between the two threads through the atomic `phase`. While the phase is
/// `running` only the audio thread touches them; it sets `lost` with release ordering after its last use,
/// and from then until the control thread stores `running` (again with release ordering, read with acquire
/// ordering) only the control thread does. Everything else is atomic or inside the `control` mutex, which
/// the audio thread never takes.
private final class StreamCore: @unchecked Sendable {
    enum Opener {
        case input(@Sendable () throws(AudioDeviceError) -> any AudioInput)
        case output(@Sendable () throws(AudioDeviceError) -> any AudioOutput)
    }

    enum Endpoint {
        case input(any AudioInput)
        case output(any AudioOutput)
    }

    /// The phase values; raw integers because they live in an `Atomic`.
    enum Phase {
        static let idle = 0
        static let running = 1
        static let lost = 2
    }

    struct Control {
        var started = false
        var stopped = false
        var usingFallback = false
        var lossReported = false
        var failures = 0
        var nextAttempt: ContinuousClock.Instant?
    }

    let direction: DeviceDirection
    let device: String
    let opener: Opener
    let sink: (any SampleSink)?
    let source: (any SampleSource)?
    let options: StreamOptions
    let onStatus: @Sendable (DeviceStatus) -> Void

    let phase = Atomic<Int>(Phase.idle)
    let stopRequested = Atomic<Bool>(false)
    let periods = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let starved = Atomic<Int>(0)
    let losses = Atomic<Int>(0)
    let reopenAttempts = Atomic<Int>(0)
    let control = Mutex(Control())
    let finished = DispatchSemaphore(value: 0)

    var endpoint: Endpoint?
    var lastError: AudioDeviceError?
    /// Whether the audio thread runs at real-time priority now.
    let realTime = Atomic<Bool>(false)
    let buffer: UnsafeMutableBufferPointer<Int16>

    init(
        direction: DeviceDirection, device: String, opener: Opener, sink: (any SampleSink)?,
        source: (any SampleSource)?, options: StreamOptions, onStatus: @escaping @Sendable (DeviceStatus) -> Void
    ) {
        self.direction = direction
        self.device = device
        self.opener = opener
        self.sink = sink
        self.source = source
        self.options = options
        self.onStatus = onStatus
        buffer = .allocate(capacity: options.periodSamples)
        buffer.initialize(repeating: 0)
    }

    deinit {
        buffer.deallocate()
    }

    var statistics: StreamStatistics {
        StreamStatistics(
            periods: periods.load(ordering: .relaxed), xruns: xruns.load(ordering: .relaxed),
            droppedPeriods: dropped.load(ordering: .relaxed), starvedPeriods: starved.load(ordering: .relaxed),
            deviceLosses: losses.load(ordering: .relaxed), reopenAttempts: reopenAttempts.load(ordering: .relaxed))
    }

    var isUsingFallback: Bool { control.withLock { $0.usingFallback } }

    private func open() throws(AudioDeviceError) -> Endpoint {
        switch opener {
        case .input(let open): return .input(try open())
        case .output(let open): return .output(try open())
        }
    }

    // MARK: Control thread.

    func start() {
        guard openForStart(driven: false) else { return }
        let thread = Thread { [self] in
            nameCurrentThread("clubroom-\(direction.rawValue)")
            // Made before the audio thread's work starts: making the array allocates.
            let loop = PeriodThread(cores: [self], realTimePriority: options.realTimePriority)
            options.onAudioThreadStart?()
            runThread(loop)
        }
        thread.name = "clubroom-\(direction.rawValue)"
        thread.stackSize = 1 << 20
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Opens the device (or the fallback) for the first start; false when already started. The thread that runs
    /// the periods is the caller's to start. A `driven` stream's fallback does not keep time: another stream on
    /// its thread does.
    func openForStart(driven: Bool) -> Bool {
        var report: DeviceStatus?
        let shouldStart = control.withLock { control -> Bool in
            guard !control.started else { return false }
            control.started = true
            do throws(AudioDeviceError) {
                endpoint = try open()
            } catch {
                // Fallbacks keep the pace of hardware, so the rest of the pipeline runs as it would.
                switch direction {
                case .capture: endpoint = .input(SilenceInput(name: "null"))
                case .playback: endpoint = .output(NullOutput(name: "null", pacing: driven ? .driven : .realTime))
                }
                control.usingFallback = true
                report = .unavailable(direction, device: device, error: error, fallback: "null")
            }
            return true
        }
        if let report { onStatus(report) }
        guard shouldStart else { return false }
        // The runtime creates some metadata lazily, with malloc, the first time an operation runs (the tuple
        // `add` returns, for one); running each counter operation here keeps that off the audio thread.
        periods.add(0, ordering: .relaxed)
        phase.store(Phase.running, ordering: .releasing)
        return true
    }

    func poll(now: ContinuousClock.Instant) {
        guard phase.load(ordering: .acquiring) == Phase.lost else { return }
        var reports: [DeviceStatus] = []
        control.withLock { control in
            guard !control.stopped else { return }
            if !control.lossReported {
                control.lossReported = true
                control.failures = 0
                control.nextAttempt = now + options.backoff.delay(afterFailures: 0)
                losses.add(1, ordering: .relaxed)
                // The audio thread let go of the device when it marked it lost; closing it is this thread's job.
                endpoint = nil
                reports.append(
                    .lost(direction, device: device, error: lastError ?? .disconnected(device: device, code: 0)))
            }
            guard let attempt = control.nextAttempt, now >= attempt else { return }
            reopenAttempts.add(1, ordering: .relaxed)
            do throws(AudioDeviceError) {
                endpoint = try open()
                control.lossReported = false
                control.nextAttempt = nil
                lastError = nil
                phase.store(Phase.running, ordering: .releasing)
                reports.append(.reopened(direction, device: device))
            } catch {
                control.failures += 1
                let delay = options.backoff.delay(afterFailures: control.failures)
                control.nextAttempt = now + delay
                reports.append(.reopenFailed(direction, device: device, error: error, retryIn: delay))
            }
        }
        for report in reports { onStatus(report) }
    }

    func stop() {
        let wasRunning = control.withLock { control -> Bool in
            defer { control.stopped = true }
            return control.started && !control.stopped
        }
        guard wasRunning else { return }
        stopRequested.store(true, ordering: .releasing)
        finished.wait()
        endpoint = nil
    }

    // MARK: Audio thread: no allocation, logging or locks below this line.
    //
    // Buffers are handled through pointers rather than slices: in unoptimised builds slicing goes through
    // generic collection code whose witness tables the runtime creates, with malloc, on first use.

    /// The idle clock: without a device, the rest of the pipeline still expects the pace of one.
    lazy var idleClock = PeriodClock(periodNanoseconds: AudioFormat.nanoseconds(samples: Int64(buffer.count)))

    /// Runs one period: on the device while it works, else on silence, waiting for the idle clock when `paced`
    /// (a stream that another device on its thread paces does not wait).
    func runOnePeriod(paced: Bool) {
        if phase.load(ordering: .acquiring) == Phase.running {
            if !runDevicePeriod() {
                idleClock.reset()
                phase.store(Phase.lost, ordering: .releasing)
            }
        } else {
            if paced { idleClock.wait() }
            runIdlePeriod()
        }
    }

    /// Whether the device in use suits a real-time thread (a lost device's idle clock does).
    var suitsRealTime: Bool {
        guard phase.load(ordering: .acquiring) == Phase.running, let endpoint else { return true }
        switch endpoint {
        case .input(let input): return input.suitsRealTimePriority
        case .output(let output): return output.suitsRealTimePriority
        }
    }

    /// Runs one period on the device; false when the device failed (the error is in `lastError`).
    ///
    /// A function of its own so that the audio thread's reference to the device ends when it returns, before
    /// the phase says `lost`: the control thread then holds the last one, and the device closes there.
    private func runDevicePeriod() -> Bool {
        guard let endpoint else { return false }
        do throws(AudioDeviceError) {
            try runPeriod(endpoint)
            periods.add(1, ordering: .relaxed)
            return true
        } catch {
            lastError = error
            return false
        }
    }

    private func runPeriod(_ endpoint: Endpoint) throws(AudioDeviceError) {
        switch endpoint {
        case .input(let input):
            let recovered = try input.read(into: buffer)
            if recovered > 0 { xruns.add(recovered, ordering: .relaxed) }
            if let sink, sink.write(UnsafeBufferPointer(buffer)) < buffer.count {
                dropped.add(1, ordering: .relaxed)
            }
        case .output(let output):
            fillFromSource()
            let recovered = try output.write(UnsafeBufferPointer(buffer))
            if recovered > 0 { xruns.add(recovered, ordering: .relaxed) }
        }
    }

    private func runIdlePeriod() {
        switch direction {
        case .capture:
            buffer.baseAddress!.update(repeating: 0, count: buffer.count)
            _ = sink?.write(UnsafeBufferPointer(buffer))
        case .playback:
            // Draining keeps the ring from backing up while the speaker is gone.
            fillFromSource()
        }
    }

    private func fillFromSource() {
        let got = source?.read(into: buffer) ?? 0
        if got < buffer.count {
            (buffer.baseAddress! + got).update(repeating: 0, count: buffer.count - got)
            starved.add(1, ordering: .relaxed)
        }
    }
}

/// The loop of one audio thread over the streams it serves: each period, one period of each stream in order;
/// the first stream sets the pace (its device blocks, or its idle clock waits), the others follow without
/// waiting. Asks for real-time priority while every device suits it. Runs until any of the streams is asked to
/// stop, then tells each it has finished.
private struct PeriodThread {
    let cores: [StreamCore]
    let realTimePriority: Bool
    /// What the thread last asked of the scheduler.
    var realTimeWanted = false

    init(cores: [StreamCore], realTimePriority: Bool) {
        self.cores = cores
        self.realTimePriority = realTimePriority
    }

    /// Switches this thread to real-time priority (`SCHED_FIFO`) or back to normal when that changes: a device
    /// reopened may be of another kind. Where real-time scheduling is not allowed the thread stays normal.
    mutating func setRealTime(_ wanted: Bool) {
        guard wanted != realTimeWanted else { return }
        realTimeWanted = wanted
        var parameters = sched_param(sched_priority: wanted ? 10 : 0)
        let applied = pthread_setschedparam(pthread_self(), wanted ? SCHED_FIFO : SCHED_OTHER, &parameters) == 0
        var index = 0
        while index < cores.count {
            cores[index].realTime.store(wanted && applied, ordering: .relaxed)
            index += 1
        }
    }
}

/// Runs `thread`'s loop on the calling thread. Audio thread: no allocation, logging or locks.
private func runThread(_ thread: PeriodThread) {
    var thread = thread
    let cores = thread.cores
    // Index loops over the array: in unoptimised builds its generic algorithms allocate.
    let count = cores.count
    while true {
        var stopping = false
        var suits = thread.realTimePriority
        var index = 0
        while index < count {
            let core = cores[index]
            if core.stopRequested.load(ordering: .acquiring) { stopping = true }
            if suits && !core.suitsRealTime { suits = false }
            index += 1
        }
        if stopping { break }
        thread.setRealTime(suits)
        index = 0
        while index < count {
            cores[index].runOnePeriod(paced: index == 0)
            index += 1
        }
    }
    var index = 0
    while index < count {
        cores[index].finished.signal()
        index += 1
    }
}

/// A microphone and a loudspeaker served by one audio thread instead of two: each period, a blocking read of
/// the microphone (which sets the pace), then a write of the loudspeaker's period, which its buffer takes at
/// once. What a speaker's client runs: both devices need 10 ms periods, and one thread wakes half as often as
/// two. Open the loudspeaker of a virtual pair with `Pacing.driven`, so that only the microphone keeps time.
///
/// Each stream keeps its own statistics, status and reopening (`poll` each as usual); stopping either stops both.
public final class AudioDuplex: Sendable {
    /// The microphone's stream.
    public let capture: AudioStream
    /// The loudspeaker's stream.
    public let playback: AudioStream
    private let options: StreamOptions
    private let started = Mutex(false)

    /// Serves `capture` and `playback` (made with `AudioStream.capture` and `.playback`, not started) on one
    /// thread; the capture stream's options name and instrument it.
    public init(capture: AudioStream, playback: AudioStream) {
        precondition(capture.direction == .capture && playback.direction == .playback)
        self.capture = capture
        self.playback = playback
        options = capture.options
    }

    /// Opens both devices (each falls back to silence on its own, and says so) and starts the thread. Calling it
    /// again does nothing.
    public func start() {
        guard
            started.withLock({ started in
                defer { started = true }
                return !started
            })
        else { return }
        let cores = [capture.core, playback.core]
        guard capture.core.openForStart(driven: false), playback.core.openForStart(driven: true) else { return }
        let options = options
        let loop = PeriodThread(cores: cores, realTimePriority: options.realTimePriority)
        let thread = Thread {
            nameCurrentThread("clubroom-duplex")
            options.onAudioThreadStart?()
            runThread(loop)
        }
        thread.name = "clubroom-duplex"
        thread.stackSize = 1 << 20
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Stops the thread, waits for it to finish its period, and closes both devices.
    public func stop() {
        capture.stop()
        playback.stop()
    }
}
