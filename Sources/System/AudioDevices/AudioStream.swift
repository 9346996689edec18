import AudioCore
import Dispatch
import Foundation
import Platform
import Synchronization

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
    let core: StreamCore
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
final class StreamCore: @unchecked Sendable {
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
        // Made here, not on the audio thread: making the array allocates.
        startAudioThread(
            PeriodThread(cores: [self], realTimePriority: options.realTimePriority), name: direction.rawValue)
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
