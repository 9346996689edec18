import AudioCore
import Testing

@testable import ClientAudio

@Suite struct PlaybackQueueTests {
    let frame = [Int16](repeating: 7, count: AudioFormat.samplesPerFrame)

    func push(_ queue: PlaybackQueue, _ ring: SampleRing) {
        frame.withUnsafeBufferPointer { queue.push($0, into: ring) }
    }

    func drain(_ ring: SampleRing, _ count: Int) {
        var scratch = [Int16](repeating: 0, count: count)
        _ = scratch.withUnsafeMutableBufferPointer { ring.read(into: $0) }
    }

    @Test func aDryLoudspeakerGetsOnePeriodAhead() {
        let ring = SampleRing(capacity: 9_600)
        let queue = PlaybackQueue()
        push(queue, ring)
        #expect(ring.availableToRead == AudioFormat.samplesPerPeriod + AudioFormat.samplesPerFrame)
    }

    @Test func oneStandingPeriodIsKept() {
        let ring = SampleRing(capacity: 9_600)
        let queue = PlaybackQueue()
        for _ in 0..<(3 * PlaybackQueue.window) {
            push(queue, ring)
            drain(ring, AudioFormat.samplesPerFrame)
        }
        #expect(ring.availableToRead == AudioFormat.samplesPerPeriod)
    }

    @Test func aStandingSurplusIsTrimmedAfterAWindow() {
        let ring = SampleRing(capacity: 9_600)
        let queue = PlaybackQueue()
        _ = ring.writeSilence(count: 3 * AudioFormat.samplesPerPeriod)
        var levels: [Int] = []
        for _ in 0..<(2 * PlaybackQueue.window) {
            push(queue, ring)
            drain(ring, AudioFormat.samplesPerFrame)
            levels.append(ring.availableToRead)
        }
        // Three periods stand until the first window ends, then two, then one; never less.
        #expect(levels[PlaybackQueue.window - 2] == 3 * AudioFormat.samplesPerPeriod)
        #expect(levels[PlaybackQueue.window - 1] == 2 * AudioFormat.samplesPerPeriod)
        #expect(levels.last == AudioFormat.samplesPerPeriod)
    }
}

@Suite struct CaptureQueueTests {
    func take(_ queue: CaptureQueue, _ ring: SampleRing) -> Bool {
        var frame = [Int16](repeating: 0, count: AudioFormat.samplesPerFrame)
        return frame.withUnsafeMutableBufferPointer { queue.take(from: ring, into: $0) }
    }

    func write(_ ring: SampleRing, periods: Int) {
        _ = ring.writeSilence(count: periods * AudioFormat.samplesPerPeriod)
    }

    @Test func aStandingPeriodIsDroppedAfterAWindow() {
        let ring = SampleRing(capacity: 9_600)
        let queue = CaptureQueue()
        write(ring, periods: 1)
        var left: [Int] = []
        for _ in 0..<(2 * CaptureQueue.window) {
            write(ring, periods: 2)
            #expect(take(queue, ring))
            left.append(ring.availableToRead)
        }
        #expect(left[CaptureQueue.window - 2] == AudioFormat.samplesPerPeriod)
        #expect(left.last == 0)
    }

    /// Takes `count` frames with the device's two periods written before each tick; what stays after each.
    func steady(_ queue: CaptureQueue, _ ring: SampleRing, ticks count: Int) -> [Int] {
        (0..<count).map { _ in
            write(ring, periods: 2)
            #expect(take(queue, ring))
            return ring.availableToRead
        }
    }

    @Test func aShortTakeKeepsTheSparePeriod() {
        let ring = SampleRing(capacity: 9_600)
        let queue = CaptureQueue()
        #expect(steady(queue, ring, ticks: CaptureQueue.window).allSatisfy { $0 == 0 })
        // The device's write came after the tick once: the take finds one period.
        write(ring, periods: 1)
        #expect(!take(queue, ring))
        let left = steady(queue, ring, ticks: 3 * CaptureQueue.window)
        #expect(left.allSatisfy { $0 == AudioFormat.samplesPerPeriod })
        // Ten seconds after the short take the spare period goes too.
        let later = steady(queue, ring, ticks: CaptureQueue.holdAfterShortfall)
        #expect(later.last == 0)
    }

    @Test func aShortTakeWhileTheDeviceStartsKeepsNothing() {
        let ring = SampleRing(capacity: 9_600)
        let queue = CaptureQueue()
        write(ring, periods: 2)
        #expect(take(queue, ring))
        write(ring, periods: 1)
        #expect(!take(queue, ring))
        let left = steady(queue, ring, ticks: 2 * CaptureQueue.window)
        #expect(left.first == AudioFormat.samplesPerPeriod)
        #expect(left.last == 0)
    }

    @Test func aStalledDeviceCatchingUpLeavesAtMostOneSparePeriod() {
        let ring = SampleRing(capacity: 9_600)
        let queue = CaptureQueue()
        _ = steady(queue, ring, ticks: CaptureQueue.window)
        // The device stalls past a tick, then writes the three periods it owes at once.
        write(ring, periods: 1)
        #expect(!take(queue, ring))
        write(ring, periods: 3)
        #expect(take(queue, ring))
        #expect(ring.availableToRead == 2 * AudioFormat.samplesPerPeriod)
        let left = steady(queue, ring, ticks: 2 * CaptureQueue.window)
        #expect(left.first == 2 * AudioFormat.samplesPerPeriod)
        #expect(left.last == AudioFormat.samplesPerPeriod)
    }

    @Test func aSurplusBeyondTwoFramesGoesAtOnce() {
        let ring = SampleRing(capacity: 9_600)
        let queue = CaptureQueue()
        write(ring, periods: 7)
        #expect(take(queue, ring))
        #expect(ring.availableToRead == AudioFormat.samplesPerFrame)
    }
}
