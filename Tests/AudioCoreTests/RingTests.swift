import Foundation
import Testing

@testable import AudioCore

@Suite struct RingTests {
    @Test func formatConstantsAgree() {
        #expect(AudioFormat.samplesPerFrame == AudioFormat.samples(milliseconds: 20))
        #expect(AudioFormat.samplesPerPeriod == AudioFormat.samples(milliseconds: 10))
        #expect(AudioFormat.samplesPerFrame == 2 * AudioFormat.samplesPerPeriod)
        #expect(AudioFormat.milliseconds(samples: 960) == 20)
        #expect(AudioFormat.microseconds(samples: 960) == AudioFormat.frameMicroseconds)
        #expect(AudioFormat.samples(microseconds: 20_000) == 960)
        #expect(AudioFormat.byteCount(samples: 960) == 1920)
        #expect(Int(AudioFormat.rtpTimestampStep) == AudioFormat.samplesPerFrame)
    }

    @Test func sampleRingWrapsAndReportsFill() {
        let ring = SampleRing(capacity: 5)
        #expect(ring.write([1, 2, 3]) == 3)
        var out = [Int16](repeating: 0, count: 2)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 2)
        #expect(out == [1, 2])
        #expect(ring.write([4, 5, 6, 7, 8]) == 4)
        #expect(ring.availableToRead == 5)
        #expect(ring.availableToWrite == 0)
        #expect(ring.write([9]) == 0)
        out = [Int16](repeating: 0, count: 8)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 5)
        #expect(out == [3, 4, 5, 6, 7, 0, 0, 0])
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 0)
    }

    @Test func sampleRingSilenceAndDiscard() {
        let ring = SampleRing(capacity: 4)
        #expect(ring.write([5, 6]) == 2)
        #expect(ring.writeSilence(count: 5) == 2)
        #expect(ring.discard(count: 1) == 1)
        var out = [Int16](repeating: 9, count: 4)
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 3)
        #expect(out == [6, 0, 0, 9])
    }

    /// A producer and a consumer thread move a numbered sequence through a small ring in odd-sized chunks; every
    /// sample must arrive once and in order.
    @Test func sampleRingTwoThreadStress() {
        let total = 400_000
        let ring = SampleRing(capacity: 1_000)
        let producer = Thread {
            var chunk = [Int16](repeating: 0, count: 97)
            var next = 0
            var size = 1
            while next < total {
                size = size % 97 + 1
                let count = min(size, total - next)
                for index in 0..<count {
                    chunk[index] = Int16(truncatingIfNeeded: next + index)
                }
                var offset = 0
                while offset < count {
                    let written = chunk.withUnsafeBufferPointer {
                        ring.write(UnsafeBufferPointer(rebasing: $0[offset..<count]))
                    }
                    if written == 0 { sched_yield() }
                    offset += written
                }
                next += count
            }
        }
        producer.start()
        var chunk = [Int16](repeating: 0, count: 61)
        var received = 0
        var outOfOrder = 0
        var size = 1
        while received < total {
            size = size % 61 + 1
            let count = chunk.withUnsafeMutableBufferPointer {
                ring.read(into: UnsafeMutableBufferPointer(rebasing: $0[0..<size]))
            }
            if count == 0 { sched_yield() }
            for index in 0..<count where chunk[index] != Int16(truncatingIfNeeded: received + index) {
                outOfOrder += 1
            }
            received += count
        }
        #expect(received == total)
        #expect(outOfOrder == 0)
        #expect(ring.availableToRead == 0)
    }
}
