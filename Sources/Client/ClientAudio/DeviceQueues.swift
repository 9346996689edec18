import AudioCore
import AudioDevices
import Platform
import Synchronization

/// How much mixed audio waits for the loudspeaker, kept as small as a late tick allows.
///
/// The media thread writes a 20 ms frame every tick; the playback thread reads a 10 ms period every 10 ms.
/// Whatever is queued when a frame is written is delay added to everything heard. One period queued ahead is
/// enough: a tick may then be late by the time to the device's next read without the device running dry.
/// When it does run (nearly) dry, one period of silence is queued ahead again; when the queue has stayed a
/// period above that for a second (an early start, a slow loudspeaker clock), one period of the next frame is
/// dropped, so neither late ticks nor clock drift build up delay. Used on the media thread only.
final class PlaybackQueue: @unchecked Sendable {
    // `@unchecked`: only the media thread (the feed's playback side) touches it.
    /// Ticks over which the lowest queue is watched before a standing surplus is dropped.
    static let window = 50

    /// The loudspeaker's period in samples: what is kept queued ahead.
    let period: Int
    /// The most that may be queued; beyond it a whole frame is dropped.
    let maximumQueued: Int
    private var lowest = Int.max
    private var ticks = 0

    /// A queue for a loudspeaker reading `period` samples at a time (10 ms by default); at most 80 ms, or two
    /// periods and a frame when that is more, may wait.
    init(period: Int = AudioFormat.samplesPerPeriod) {
        self.period = period
        maximumQueued = max(AudioFormat.samples(milliseconds: 80), 2 * period + AudioFormat.samplesPerFrame)
    }

    /// Queues `frame` (960 samples) on `ring`, the playback thread's.
    func push(_ frame: UnsafeBufferPointer<Int16>, into ring: SampleRing) {
        let queued = ring.availableToRead
        guard queued <= maximumQueued else { return }
        lowest = min(lowest, queued)
        ticks += 1
        var start = 0
        if queued < period / 2 {
            _ = ring.writeSilence(count: period)
            restartWindow()
        } else if ticks >= Self.window {
            if lowest >= 2 * period { start = min(period, frame.count) }
            restartWindow()
        }
        _ = ring.write(UnsafeBufferPointer(rebasing: frame[start...]))
    }

    private func restartWindow() {
        lowest = Int.max
        ticks = 0
    }
}

/// How the media thread takes the microphone's 20 ms frames from the capture ring, kept as fresh as the
/// device's pace allows.
///
/// The capture thread writes a 10 ms period every 10 ms; the media thread takes a frame every tick. What stays
/// in the ring after a take is delay added to everything sent. A surplus beyond two frames is dropped at once
/// (the microphone's clock runs faster than ours). When at least a period has stayed behind after every take
/// for a second, one period is dropped. A take that finds less than a frame (once the first second of takes
/// is over: a starting device is no sign of anything) means the device's writes can come after the tick; for
/// the next ten seconds one spare period is kept then, but never more: a stalled device that catches up with a
/// burst leaves two, and the second goes after a second like any other. Used on the media thread only.
final class CaptureQueue: @unchecked Sendable {
    // `@unchecked`: only the media thread (the feed's capture side) touches it.
    /// Ticks over which the lowest level is watched before a standing period is dropped.
    static let window = 50
    /// Ticks after a short take during which one spare period is kept.
    static let holdAfterShortfall = 500

    private var lowest = Int.max
    private var ticks = 0
    private var hold = 0
    private var takes = 0

    /// Reads the next frame into `frame` (960 samples); false when the ring does not hold a whole one.
    func take(from ring: SampleRing, into frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        let period = AudioFormat.samplesPerPeriod
        let surplus = ring.availableToRead - 2 * frame.count
        if surplus > 0 { _ = ring.discard(count: surplus) }
        let available = ring.availableToRead
        guard available >= frame.count else {
            if takes >= Self.window { hold = Self.holdAfterShortfall }
            lowest = Int.max
            ticks = 0
            return false
        }
        takes += 1
        hold = max(0, hold - 1)
        lowest = min(lowest, available)
        ticks += 1
        if ticks >= Self.window {
            let spare = hold > 0 ? period : 0
            if lowest >= frame.count + period + spare { _ = ring.discard(count: period) }
            lowest = Int.max
            ticks = 0
        }
        _ = ring.read(into: frame)
        return true
    }
}

/// The rings between the device threads and the rest: the loudspeaker's, and the open microphone's with the
/// queue that takes its frames. The microphone's ring has one reader at a time, the media thread while
/// speaking or the control thread for a preview alone; the lock that says which is held only for one take.
final class DeviceRings: Sendable {
    let playback = SampleRing(capacity: AudioFormat.samples(milliseconds: 400))
    private let playbackQueue = Mutex(PlaybackQueue())
    private let microphone = Mutex<(sink: RingSink?, sending: Bool, queue: CaptureQueue)>((nil, false, CaptureQueue()))
    /// How long the newest captured period had waited when the media thread last took a frame, in µs (-1:
    /// unknown).
    private let captureWait = Atomic<Int64>(-1)

    /// The open microphone's ring (nil: none), and whether the media thread sends it (else a preview reads it).
    func setMicrophone(_ sink: RingSink?, sending: Bool) {
        microphone.withLock { microphone in
            microphone.sink = sink
            microphone.sending = sending
            microphone.queue = CaptureQueue()
        }
    }

    /// Drops what waits for the loudspeaker. Only while no playback stream reads the ring: this thread is then
    /// its only reader.
    func dropQueuedPlayback() {
        _ = playback.discard(count: playback.availableToRead)
    }

    /// The loudspeaker reads periods of this many samples from now on.
    func setPlaybackPeriod(_ samples: Int) {
        playbackQueue.withLock { queue in
            if queue.period != samples { queue = PlaybackQueue(period: samples) }
        }
    }

    /// The media thread's mix for the loudspeaker.
    func playFrame(_ frame: UnsafeBufferPointer<Int16>) {
        playbackQueue.withLock { $0.push(frame, into: playback) }
    }

    /// The media thread's microphone frame, while speaking.
    func captureFrame(_ frame: UnsafeMutableBufferPointer<Int16>) -> Bool {
        let written = microphone.withLock { microphone -> Int64? in
            guard microphone.sending, let sink = microphone.sink else { return nil }
            guard microphone.queue.take(from: sink.ring, into: frame) else { return nil }
            return sink.lastWrite
        }
        guard let written else { return false }
        captureWait.store(written > 0 ? max(0, MonotonicClock.microseconds() - written) : -1, ordering: .relaxed)
        return true
    }

    var lastCaptureWait: Int64? {
        let wait = captureWait.load(ordering: .relaxed)
        return wait < 0 ? nil : wait
    }

    /// Empties the microphone's ring while nobody sends it and returns the UI level of the loudest 20 ms in it;
    /// nil when nothing was there.
    func drainForPreview() -> Int? {
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        return microphone.withLock { microphone -> Int? in
            guard !microphone.sending, let ring = microphone.sink?.ring else { return nil }
            var loudest: UInt8?
            while ring.availableToRead >= frame.count {
                let level = frame.withUnsafeMutableBufferPointer { frame -> UInt8 in
                    _ = ring.read(into: frame)
                    return AudioLevel.dBov(UnsafeBufferPointer(frame))
                }
                loudest = min(loudest ?? level, level)
            }
            return loudest.map { RoomAudio.shownLevel($0) }
        }
    }
}
