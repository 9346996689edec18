import AudioCodec
import CAllocationCounter
import RoomTesting
import Testing

/// The pointer-based codec calls may run on an audio thread: once warmed up they must not allocate.
///
/// Allocations on this thread are counted through the test binary's `malloc` (see `CAllocationCounter`).
/// Every call runs once before counting, because the Swift runtime creates some metadata lazily on first use.
@Suite struct AllocationTests {
    @Test func encodingDecodingAndProcessingDoNotAllocatePerFrame() throws {
        let encoder = try OpusEncoder()
        try encoder.setExpectedLoss(percent: 10)
        let decoder = try OpusDecoder()
        let processor = try VoiceProcessor()
        let canceller = try EchoCanceller(frameSamples: 960)
        let resampler = try Resampler(inputRate: 44_100, outputRate: 48_000)
        let speech = Signals.speechLike(count: 960 * 20)
        let input = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 960)
        let output = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 960)
        let resampled = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 1_200)
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: OpusEncoder.maxPacketBytes, alignment: 1)
        defer {
            input.deallocate()
            output.deallocate()
            resampled.deallocate()
            packet.deallocate()
        }
        // Never freed: the counter must outlive every thread that may still add to it.
        let counter = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        counter.initialize(to: 0)

        func frame(_ index: Int) throws {
            for sample in 0..<960 { input[sample] = speech[index * 960 + sample] }
            try canceller.cancel(
                captured: UnsafeBufferPointer(input), played: UnsafeBufferPointer(input), output: output)
            _ = try processor.process(input)
            let bytes = try encoder.encode(UnsafeBufferPointer(input), into: packet)
            let encoded = UnsafeRawBufferPointer(start: packet.baseAddress, count: bytes)
            _ = try decoder.recover(fromNextPacket: encoded, into: output)
            _ = try decoder.decode(encoded, into: output)
            try decoder.conceal(into: output)
            _ = try resampler.process(UnsafeBufferPointer(start: input.baseAddress, count: 882), into: resampled)
        }
        try frame(0)
        clubroom_allocation_counting_begin(counter)
        for index in 1..<20 { try frame(index) }
        clubroom_allocation_counting_end()
        #expect(clubroom_allocation_counter_read(counter) == 0)
    }
}
