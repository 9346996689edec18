import AudioCore
import AudioDevices
import CAllocationCounter
import Foundation
import Glibc
import RoomTesting
import Synchronization
import Testing

/// Proves the audio threads' rule: after `start`, no heap allocation on them.
///
/// How: the test binary defines `malloc`, `calloc`, `realloc` and the aligned allocators (the
/// `CAllocationCounter` target), so every allocation in the process, from Swift, Foundation, glibc or
/// alsa-lib, passes through a wrapper before reaching glibc. The wrapper counts it when the calling thread
/// has chosen a counter (a thread-local pointer). The streams' `onAudioThreadStart` hook chooses the test's
/// counter for the audio threads only, just before their first period, so the count is exactly the
/// allocations the audio threads made while running, whatever the other threads of the process (other tests
/// included) do meanwhile. The first test shows that the counter does see allocations, so a zero cannot come
/// from a counter that is not there.
///
/// Each scenario runs twice and only the second run is counted: the Swift runtime creates some type metadata
/// and witness tables lazily, with malloc, the first time a piece of code runs in the process (many more in
/// debug builds, where generic code is not specialised). Those are one-off caches, not per-period costs; the
/// second run shows that the steady state allocates nothing.
@Suite struct RealTimeTests {
    @Test func theCounterSeesAllocationsOnACountingThread() {
        let counter = AllocationCounter()
        counter.countOnThisThread()
        let array = [Int](repeating: 7, count: Int.random(in: 100...200))
        let text = String(repeating: "x", count: array.count)
        AllocationCounter.stopCountingOnThisThread()
        #expect(text.count == array.count)
        #expect(counter.count >= 2)
    }

    @Test func alsaStreamsDoNotAllocateOnTheirThreads() throws {
        _ = try runALSAStreams()
        #expect(try runALSAStreams() == 0)
    }

    /// Captures from and plays to ALSA `file` devices through a ring; returns the allocations counted.
    func runALSAStreams() throws -> Int {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try Signals.raw(Signals.tone(frequency: 440, count: 48_000)).write(
            to: URL(fileURLWithPath: directory.file("in.raw")))
        let configuration = """
            pcm.mic { type file; slave.pcm { type null }; file "\(directory.file("copy.raw"))"
                      infile "\(directory.file("in.raw"))"; format "raw" }
            pcm.speaker { type file; slave.pcm { type null }; file "\(directory.file("out.raw"))"; format "raw" }
            """
        let ring = TestRing(capacity: 480 * 8)
        let counter = AllocationCounter()
        let options = StreamOptions(realTimePriority: false, onAudioThreadStart: counter.countOnThisThread)
        let log = StatusLog()
        let capture = AudioStream.capture(
            alsaDevice: "mic", alsaOptions: ALSAOptions(configuration: configuration), into: ring, options: options,
            onStatus: log.record)
        let playback = AudioStream.playback(
            alsaDevice: "speaker", alsaOptions: ALSAOptions(configuration: configuration), from: ring,
            options: options, onStatus: log.record)

        capture.start()
        playback.start()
        #expect(waitUntil { capture.statistics.periods >= 500 && playback.statistics.periods >= 500 })
        capture.stop()
        playback.stop()
        #expect(log.all.isEmpty)
        return counter.count
    }

    @Test func virtualDevicesAndDeviceLossDoNotAllocateOnTheAudioThread() throws {
        _ = try runVirtualDevicesWithALoss()
        #expect(try runVirtualDevicesWithALoss() == 0)
    }

    /// Captures from a device that fails and comes back, playing into a WAV file; returns the allocations
    /// counted.
    func runVirtualDevicesWithALoss() throws -> Int {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // Swift Testing records a backtrace whenever an error is thrown (a runtime hook that allocates; a
        // program outside the test harness has none), so the failing device stops counting just before it
        // throws, and the ring starts it again on the audio thread's next write.
        let counter = AllocationCounter()
        let ring = RecountingRing(capacity: 480 * 8, counter: counter)
        let options = StreamOptions(realTimePriority: false, onAudioThreadStart: counter.countOnThisThread)
        let log = StatusLog()
        // The input fails after 100 periods: the audio thread marks it lost and idles on its clock.
        let opener = ScriptedOpener([100, Int.max], pauseCountingBeforeThrowing: true)
        let capture = AudioStream.capture(
            device: "flaky", open: opener.open, into: ring, options: options, onStatus: log.record)
        let path = directory.file("out.wav")
        let playback = AudioStream.playback(
            device: path, open: { () throws(AudioDeviceError) in try WAVFileOutput(path: path, pacing: .unpaced) },
            from: ring, options: options, onStatus: log.record)

        capture.start()
        playback.start()
        #expect(waitUntil { capture.statistics.periods >= 100 && playback.statistics.periods >= 500 })
        #expect(
            waitUntil {
                capture.poll(now: .now)
                return capture.statistics.deviceLosses == 1
            })
        // Let the lost capture thread idle a few periods on its clock before the device comes back.
        usleep(50_000)
        capture.poll(now: .now + .seconds(1))
        #expect(waitUntil { capture.statistics.periods >= 300 })
        capture.stop()
        playback.stop()
        #expect(log.all.count == 2)
        #expect(capture.statistics.deviceLosses == 1)
        return counter.count
    }
}

extension RealTimeTests {
    @Test func pacedVirtualDevicesThroughSampleRingsDoNotAllocate() throws {
        _ = try runPacedDevicesThroughRings()
        #expect(try runPacedDevicesThroughRings() == 0)
    }

    /// The room screen's sound on paced virtual devices (what bots, the demo and the benchmarks run): a tone
    /// microphone fills a `SampleRing` through the `RingSink` the client's sound uses, which stamps each write
    /// with the time; this thread, standing for the media thread, moves 20 ms frames from it into a second
    /// `SampleRing`, which a paced null loudspeaker plays through a `RingSource`. Returns the allocations counted
    /// on the two device threads.
    func runPacedDevicesThroughRings() throws -> Int {
        let counter = AllocationCounter()
        let options = StreamOptions(realTimePriority: false, onAudioThreadStart: counter.countOnThisThread)
        let log = StatusLog()
        let captureRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
        let playbackRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
        let writer = RingSink(captureRing)
        let capture = AudioStream.capture(
            device: "tone:440", open: { () throws(AudioDeviceError) in ToneInput(frequency: 440) }, into: writer,
            options: options, onStatus: log.record)
        let playback = AudioStream.playback(
            device: "null", open: { () throws(AudioDeviceError) in NullOutput() },
            from: RingSource(playbackRing), options: options, onStatus: log.record)

        capture.start()
        playback.start()
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        var moved = 0
        #expect(
            waitUntil {
                while captureRing.availableToRead >= frame.count, playbackRing.availableToWrite >= frame.count {
                    frame.withUnsafeMutableBufferPointer { _ = captureRing.read(into: $0) }
                    frame.withUnsafeBufferPointer { _ = playbackRing.write($0) }
                    moved += 1
                }
                return capture.statistics.periods >= 50 && playback.statistics.periods >= 50
            })
        capture.stop()
        playback.stop()
        #expect(log.all.isEmpty)
        #expect(moved >= 20)
        // Each period the stream moved was one write into the sink, and each write was stamped.
        #expect(writer.lastWrite > 0)
        return counter.count
    }
}

extension RealTimeTests {
    @Test func aDuplexStreamDoesNotAllocateOnItsThread() throws {
        _ = try runDuplex()
        #expect(try runDuplex() == 0)
    }

    /// A speaker's devices: a paced tone microphone and a loudspeaker driven by it, served by one thread through
    /// `SampleRing`s (this thread stands for the media thread between them). Returns the allocations counted on
    /// the duplex thread.
    func runDuplex() throws -> Int {
        let counter = AllocationCounter()
        let options = StreamOptions(realTimePriority: false, onAudioThreadStart: counter.countOnThisThread)
        let log = StatusLog()
        let captureRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
        let playbackRing = SampleRing(capacity: AudioFormat.samples(milliseconds: 200))
        let sink = RingSink(captureRing)
        let capture = AudioStream.capture(
            device: "tone:440", open: { () throws(AudioDeviceError) in ToneInput(frequency: 440) }, into: sink,
            options: options, onStatus: log.record)
        let playback = AudioStream.playback(
            device: "null", open: { () throws(AudioDeviceError) in NullOutput(pacing: .driven) },
            from: RingSource(playbackRing), options: options, onStatus: log.record)
        let duplex = AudioDuplex(capture: capture, playback: playback)
        duplex.start()
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        #expect(
            waitUntil {
                while captureRing.availableToRead >= frame.count, playbackRing.availableToWrite >= frame.count {
                    frame.withUnsafeMutableBufferPointer { _ = captureRing.read(into: $0) }
                    frame.withUnsafeBufferPointer { _ = playbackRing.write($0) }
                }
                return capture.statistics.periods >= 50
            })
        duplex.stop()
        #expect(log.all.isEmpty)
        // One thread, one period of each per period: the loudspeaker kept the microphone's pace exactly.
        #expect(abs(capture.statistics.periods - playback.statistics.periods) <= 1)
        #expect(sink.lastWrite > 0)
        return counter.count
    }
}

/// A ring whose writer switches allocation counting (back) on for its thread on every write.
final class RecountingRing: TestRing, @unchecked Sendable {
    let counter: AllocationCounter

    init(capacity: Int, counter: AllocationCounter) {
        self.counter = counter
        super.init(capacity: capacity)
    }

    override func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        counter.countOnThisThread()
        return super.write(samples)
    }
}

/// One test's allocation count, added to by the threads that chose it (see `CAllocationCounter`).
///
/// `@unchecked Sendable`: the storage is only read and written through the C side's atomic operations.
final class AllocationCounter: @unchecked Sendable {
    /// Never freed: a thread may still add to it while it ends, after the test has read the count.
    private let storage = UnsafeMutablePointer<CLong>.allocate(capacity: 1)

    init() { storage.initialize(to: 0) }

    /// Allocations counted so far.
    var count: Int { Int(clubroom_allocation_counter_read(storage)) }

    /// Adds the calling thread's allocations to this counter from now on.
    @Sendable func countOnThisThread() { clubroom_allocation_counting_begin(storage) }

    /// Stops counting the calling thread's allocations.
    static func stopCountingOnThisThread() { clubroom_allocation_counting_end() }
}
