import RoomProtocol
import Testing

@Suite struct LeakyBucketTests {
    @Test func burstThenSustainedRate() {
        var bucket = LeakyBucket(capacity: 3, drainPerSecond: 2)
        var answers: [Bool] = []
        for time: Int64 in [0, 0, 0, 0, 0, 499, 500, 500, 10_000] {
            answers.append(bucket.allow(nowMilliseconds: time))
        }
        #expect(answers == [true, true, true, false, false, false, true, false, true])
        #expect(bucket.level == 1)
    }

    @Test func refusedMessagesCostNothingAndTimeNeverRunsBackwards() {
        var bucket = LeakyBucket(capacity: 2, drainPerSecond: 1)
        let first = bucket.allow(cost: 2, nowMilliseconds: 1000)
        #expect(first)
        var refused = 0
        for _ in 0..<100 where !bucket.allow(nowMilliseconds: 1000) { refused += 1 }
        #expect(refused == 100)
        #expect(bucket.level == 2)
        let earlier = bucket.allow(nowMilliseconds: 0)
        #expect(!earlier)
        let later = bucket.allow(nowMilliseconds: 2000)
        #expect(later)
        let tooBig = bucket.allow(cost: 3, nowMilliseconds: 100_000)
        #expect(!tooBig)
    }
}
