import AudioDevices
import CAllocationCounter
import Foundation
import Testing

/// Proves the audio threads' rule: after `start`, no heap allocation on them.
///
/// How: the test binary defines `malloc`, `calloc`, `realloc` and the aligned allocators (the
/// `CAllocationCounter` target), so every allocation in the process, from Swift, Foundation, glibc or
/// alsa-lib, passes through a wrapper before reaching glibc. The wrapper counts it when the calling thread
/// has switched counting on, with a thread-local flag. The streams' `onAudioThreadStart` hook switches it on
/// for the audio threads only, just before their first period, so the count is exactly the allocations the
/// audio threads made while running, whatever the other threads of the process do meanwhile. The first test
/// shows that the counter does see allocations, so a zero cannot come from a counter that is not there.
///
/// Each scenario runs twice and only the second run is counted: the Swift runtime creates some type metadata
/// and witness tables lazily, with malloc, the first time a piece of code runs in the process (many more in
/// debug builds, where generic code is not specialised). Those are one-off caches, not per-period costs; the
/// second run shows that the steady state allocates nothing.
///
/// The suite runs serially because the count is process-wide: no other counting thread may run meanwhile.
@Suite(.serialized) struct RealTimeTests {
    static let countOnThisThread: @Sendable () -> Void = { clubroom_allocation_counting_begin() }

    @Test func theCounterSeesAllocationsOnACountingThread() {
        let before = clubroom_allocation_count()
        clubroom_allocation_counting_begin()
        let array = [Int](repeating: 7, count: Int.random(in: 100...200))
        let text = String(repeating: "x", count: array.count)
        clubroom_allocation_counting_end()
        #expect(text.count == array.count)
        #expect(clubroom_allocation_count() - before >= 2)
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
        let options = StreamOptions(realTimePriority: false, onAudioThreadStart: Self.countOnThisThread)
        let log = StatusLog()
        let capture = AudioStream.capture(
            alsaDevice: "mic", alsaOptions: ALSAOptions(configuration: configuration), into: ring, options: options,
            onStatus: log.record)
        let playback = AudioStream.playback(
            alsaDevice: "speaker", alsaOptions: ALSAOptions(configuration: configuration), from: ring,
            options: options, onStatus: log.record)

        let before = clubroom_allocation_count()
        capture.start()
        playback.start()
        #expect(waitUntil { capture.statistics.periods >= 500 && playback.statistics.periods >= 500 })
        capture.stop()
        playback.stop()
        #expect(log.all.isEmpty)
        return clubroom_allocation_count() - before
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
        let ring = RecountingRing(capacity: 480 * 8)
        let options = StreamOptions(realTimePriority: false, onAudioThreadStart: Self.countOnThisThread)
        let log = StatusLog()
        // The input fails after 100 periods: the audio thread marks it lost and idles on its clock.
        let opener = ScriptedOpener([100, Int.max], pauseCountingBeforeThrowing: true)
        let capture = AudioStream.capture(
            device: "flaky", open: opener.open, into: ring, options: options, onStatus: log.record)
        let path = directory.file("out.wav")
        let playback = AudioStream.playback(
            device: path, open: { () throws(AudioDeviceError) in try WAVFileOutput(path: path, pacing: .unpaced) },
            from: ring, options: options, onStatus: log.record)

        let before = clubroom_allocation_count()
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
        return clubroom_allocation_count() - before
    }
}

/// A ring whose writer switches allocation counting (back) on for its thread on every write.
final class RecountingRing: TestRing, @unchecked Sendable {
    override func write(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        clubroom_allocation_counting_begin()
        return super.write(samples)
    }
}
