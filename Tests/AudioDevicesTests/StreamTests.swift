import AudioDevices
import CAllocationCounter
import Foundation
import RoomTesting
import Synchronization
import Testing

/// A capture device that fails like an unplugged one after a number of periods, without pacing.
final class FlakyInput: AudioInput {
    let name = "flaky"
    private var reads = 0
    private let failAfter: Int?
    private let pauseCountingBeforeThrowing: Bool

    init(failAfter: Int?, pauseCountingBeforeThrowing: Bool = false) {
        self.failAfter = failAfter
        self.pauseCountingBeforeThrowing = pauseCountingBeforeThrowing
    }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        if let failAfter, reads >= failAfter {
            if pauseCountingBeforeThrowing { clubroom_allocation_counting_end() }
            throw .disconnected(device: name, code: -ENODEV)
        }
        reads += 1
        buffer.update(repeating: 1)
        return 0
    }
}

/// Hands out devices in a scripted order: `nil` stands for a failed open.
final class ScriptedOpener: Sendable {
    private let script: Mutex<[Int?]>
    private let pauseCountingBeforeThrowing: Bool

    init(_ script: [Int?], pauseCountingBeforeThrowing: Bool = false) {
        self.script = Mutex(script)
        self.pauseCountingBeforeThrowing = pauseCountingBeforeThrowing
    }

    /// Each entry is a device that fails after that many periods, `Int.max` for one that never fails, or
    /// `nil` for an open that fails.
    func open() throws(AudioDeviceError) -> any AudioInput {
        let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let failAfter = next else { throw .notFound(device: "flaky", code: -ENOENT) }
        return FlakyInput(
            failAfter: failAfter == Int.max ? nil : failAfter, pauseCountingBeforeThrowing: pauseCountingBeforeThrowing)
    }
}

/// A capture device that keeps a 10 ms pace with `usleep` and says whether it suits real-time priority.
final class PacedInput: AudioInput {
    let name = "paced"
    let suitsRealTimePriority: Bool

    init(suitsRealTimePriority: Bool) { self.suitsRealTimePriority = suitsRealTimePriority }

    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioDeviceError) -> Int {
        usleep(10_000)
        buffer.update(repeating: 0)
        return 0
    }
}

@Suite struct StreamTests {
    /// Whether this process may run a thread at `SCHED_FIFO` (root, or an RLIMIT_RTPRIO allowance).
    static func realTimeAllowed() -> Bool {
        let allowed = Mutex(false)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var parameters = sched_param(sched_priority: 10)
            allowed.withLock { $0 = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0 }
            done.signal()
        }
        thread.start()
        done.wait()
        return allowed.withLock { $0 }
    }

    @Test func realTimePriorityIsUsedOnlyWhereTheDeviceSuitsIt() throws {
        let allowed = Self.realTimeAllowed()
        for suits in [true, false] {
            let ring = TestRing(capacity: 48_000)
            let stream = AudioStream.capture(
                device: "paced", open: { () throws(AudioDeviceError) in PacedInput(suitsRealTimePriority: suits) },
                into: ring, onStatus: { _ in })
            stream.start()
            #expect(waitUntil(limit: 10) { stream.statistics.periods >= 3 })
            #expect(stream.runsAtRealTimePriority == (suits && allowed), "suits \(suits), allowed \(allowed)")
            stream.stop()
        }
        #expect(ToneInput(pacing: .realTime).suitsRealTimePriority)
        #expect(!ToneInput(pacing: .unpaced).suitsRealTimePriority)
        #expect(!(try WAVFileOutput(path: "/dev/null", pacing: .unpaced)).suitsRealTimePriority)
    }

    @Test func realTimeIsNeverAskedForWhenTheOptionsSayNo() throws {
        let ring = TestRing(capacity: 48_000)
        let stream = AudioStream.capture(
            device: "paced", open: { () throws(AudioDeviceError) in PacedInput(suitsRealTimePriority: true) },
            into: ring, options: StreamOptions(realTimePriority: false), onStatus: { _ in })
        stream.start()
        #expect(waitUntil(limit: 10) { stream.statistics.periods >= 3 })
        #expect(!stream.runsAtRealTimePriority)
        stream.stop()
    }

    @Test func aLostDeviceIsReportedAndReopenedWithBackoff() throws {
        let opener = ScriptedOpener([5, nil, nil, Int.max])
        let ring = TestRing(capacity: 480 * 10_000)
        let log = StatusLog()
        let stream = AudioStream.capture(
            device: "flaky", open: opener.open, into: ring, options: StreamOptions(realTimePriority: false),
            onStatus: log.record)
        stream.start()
        let start = ContinuousClock.now
        #expect(
            waitUntil {
                stream.poll(now: start)
                return !log.all.isEmpty
            })
        #expect(stream.statistics.periods == 5)
        // Attempts at +250 ms (fails, next in 500 ms), +750 ms (fails, next in 1 s), +1750 ms (succeeds).
        for offset in [0, 100, 250, 500, 700, 750, 1_000, 1_749, 1_750] {
            stream.poll(now: start + .milliseconds(offset))
        }
        let lost = AudioDeviceError.disconnected(device: "flaky", code: -ENODEV)
        let missing = AudioDeviceError.notFound(device: "flaky", code: -ENOENT)
        #expect(
            log.all == [
                .lost(.capture, device: "flaky", error: lost),
                .reopenFailed(.capture, device: "flaky", error: missing, retryIn: .milliseconds(500)),
                .reopenFailed(.capture, device: "flaky", error: missing, retryIn: .seconds(1)),
                .reopened(.capture, device: "flaky"),
            ])
        #expect(waitUntil { stream.statistics.periods >= 50 })
        stream.stop()
        let statistics = stream.statistics
        #expect(statistics.deviceLosses == 1)
        #expect(statistics.reopenAttempts == 3)
        #expect(!stream.isUsingFallback)
        // The device's periods (ones) reached the ring, and silence filled the time it was away.
        let samples = ring.drain()
        #expect(samples.prefix(5 * 480).allSatisfy { $0 == 1 })
        #expect(samples.contains(0))
        #expect(samples.filter { $0 == 1 }.count == (statistics.periods - statistics.droppedPeriods) * 480)
    }

    @Test func noDeviceAtAllIsReportedOnceAndReplacedBySilence() throws {
        let opener = ScriptedOpener([])
        let ring = TestRing(capacity: 480 * 100)
        let log = StatusLog()
        let stream = AudioStream.capture(
            device: "flaky", open: opener.open, into: ring, options: StreamOptions(realTimePriority: false),
            onStatus: log.record)
        stream.start()
        #expect(waitUntil { stream.statistics.periods >= 3 })
        for offset in [0, 1_000, 60_000] { stream.poll(now: .now + .milliseconds(offset)) }
        stream.stop()
        let missing = AudioDeviceError.notFound(device: "flaky", code: -ENOENT)
        #expect(log.all == [.unavailable(.capture, device: "flaky", error: missing, fallback: "null")])
        #expect(log.all.first?.message.contains("--input NAME") == true)
        #expect(stream.isUsingFallback)
        #expect(stream.statistics.reopenAttempts == 0)
        #expect(ring.drain().allSatisfy { $0 == 0 })
    }

    @Test func playbackWithoutADeviceKeepsDrainingItsSource() throws {
        let ring = TestRing(capacity: 480 * 10)
        #expect(ring.write(Signals.tone(frequency: 440, count: 480 * 10)) == 4_800)
        let log = StatusLog()
        let stream = AudioStream.playback(
            alsaDevice: "clubroom-no-such-pcm", from: ring, options: StreamOptions(realTimePriority: false),
            onStatus: log.record)
        stream.start()
        #expect(waitUntil { ring.count == 0 })
        stream.stop()
        #expect(stream.isUsingFallback)
        #expect(log.all.count == 1)
        #expect(log.all.first?.message.contains("--output NAME") == true)
    }

    /// A speaker's microphone and loudspeaker on one thread: the microphone sets the pace, and a loudspeaker that
    /// cannot be opened falls back to a silent one that follows it instead of keeping time of its own, which would
    /// halve the pace.
    @Test func aDuplexKeepsTheMicrophonesPaceWhenTheLoudspeakerIsMissing() throws {
        let captured = TestRing(capacity: 480 * 1_000)
        let played = TestRing(capacity: 480 * 10)
        #expect(played.write(Signals.tone(frequency: 440, count: 480 * 10)) == 4_800)
        let log = StatusLog()
        let options = StreamOptions(realTimePriority: false)
        let capture = AudioStream.capture(
            device: "paced", open: { () throws(AudioDeviceError) in PacedInput(suitsRealTimePriority: true) },
            into: captured, options: options, onStatus: log.record)
        let playback = AudioStream.playback(
            alsaDevice: "clubroom-no-such-pcm", from: played, options: options, onStatus: log.record)
        let duplex = AudioDuplex(capture: capture, playback: playback)
        duplex.start()
        #expect(waitUntil { capture.statistics.periods >= 20 })
        duplex.stop()
        #expect(abs(capture.statistics.periods - playback.statistics.periods) <= 1)
        #expect(played.count == 0)
        #expect(playback.isUsingFallback && !capture.isUsingFallback)
        #expect(log.all.count == 1)
        #expect(log.all.first?.message.hasPrefix("No speaker (“clubroom-no-such-pcm” not found)") == true)
    }

    @Test func statusMessagesReadAsSentences() {
        let gone = AudioDeviceError.disconnected(device: "hw:1", code: -ENODEV)
        #expect(
            DeviceStatus.lost(.capture, device: "hw:1", error: gone).message
                == "Microphone “hw:1” stopped working (audio device “hw:1” went away (No such device)); "
                + "trying to reopen it.")
        #expect(
            DeviceStatus.reopenFailed(.playback, device: "hw:1", error: gone, retryIn: .milliseconds(500)).message
                == "Speaker “hw:1” is still unavailable; trying again in 0.5 s.")
        #expect(DeviceStatus.reopened(.playback, device: "hw:1").message == "Speaker “hw:1” is back.")
    }

    @Test func backoffDoublesUpToItsMaximum() {
        let backoff = ReopenBackoff(initial: .milliseconds(250), maximum: .seconds(8))
        #expect(
            (0...7).map { backoff.delay(afterFailures: $0) } == [
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
                .seconds(8), .seconds(8),
            ])
        #expect(backoff.delay(afterFailures: 1_000) == .seconds(8))
    }
}
