import AudioCore
import CAllocationCounter
import Testing

/// `TalkerActivity` runs on a client's media thread for every packet heard and every tick: once each speaker
/// has been seen, recording packets and polling while nothing changed must not allocate.
///
/// Allocations on this thread are counted through the test binary's `malloc` (see `CAllocationCounter`).
@Suite struct TalkerActivityAllocationTests {
    @Test func recordingPacketsAndPollingWithoutChangeDoNotAllocate() {
        var activity = TalkerActivity<UInt32>()
        // Three speakers at steady levels, as the media layer keys them (by SSRC).
        let speakers: [(ssrc: UInt32, dBov: UInt8)] = [(11, 20), (22, 30), (33, 40)]
        var time: Int64 = 0
        func tick() -> Bool {
            time += 20
            var index = 0
            while index < speakers.count {
                activity.record(speakers[index].ssrc, dBov: speakers[index].dBov, voice: true, at: time)
                index += 1
            }
            return activity.poll(at: time) == nil
        }
        // Warm up: the first ticks report the three onsets and fill each speaker's window of levels.
        for _ in 0..<10 { _ = tick() }
        // Never freed: the counter must outlive every thread that may still add to it.
        let counter = UnsafeMutablePointer<CLong>.allocate(capacity: 1)
        counter.initialize(to: 0)
        var quiet = 0
        clubroom_allocation_counting_begin(counter)
        for _ in 0..<100 { if tick() { quiet += 1 } }
        clubroom_allocation_counting_end()
        #expect(quiet == 100)
        #expect(clubroom_allocation_counter_read(counter) == 0)
        // What it reports is unchanged by where it keeps the talkers.
        #expect(
            activity.talkers(at: time) == [
                11: HeardTalker(level: 65, talkingSince: 20), 22: HeardTalker(level: 50, talkingSince: 20),
                33: HeardTalker(level: 35, talkingSince: 20),
            ])
    }
}
