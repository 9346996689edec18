import Foundation
import Platform
import Synchronization

/// The loop of one audio thread over the streams it serves: each period, one period of each stream in order;
/// the first stream sets the pace (its device blocks, or its idle clock waits), the others follow without
/// waiting. Asks for real-time priority while every device suits it. Runs until any of the streams is asked to
/// stop, then tells each it has finished.
struct PeriodThread {
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

/// Starts a thread named `audio-NAME` that runs `loop` after the first core's `onAudioThreadStart`.
func startAudioThread(_ loop: PeriodThread, name: String) {
    let options = loop.cores[0].options
    startThread(named: "audio-\(name)", stackSize: 1 << 20) {
        options.onAudioThreadStart?()
        runThread(loop)
    }
}

/// Runs `thread`'s loop on the calling thread. Audio thread: no allocation, logging or locks.
func runThread(_ thread: PeriodThread) {
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
        startAudioThread(PeriodThread(cores: cores, realTimePriority: options.realTimePriority), name: "duplex")
    }

    /// Stops the thread, waits for it to finish its period, and closes both devices.
    public func stop() {
        capture.stop()
        playback.stop()
    }
}
