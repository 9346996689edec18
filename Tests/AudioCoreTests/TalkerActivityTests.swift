import Testing

@testable import AudioCore

/// `TalkerActivity`: who is talking among the speakers a client hears, from each packet's level and voice flag.
@Suite struct TalkerActivityTests {
    /// Records a packet of `key` every 20 ms from `start` for `count` packets.
    func speak(
        _ activity: inout TalkerActivity<String>, _ key: String, from start: Int64, packets count: Int,
        dBov: UInt8 = 20, voice: Bool = true
    ) {
        for index in 0..<count {
            activity.record(key, dBov: dBov, voice: voice, at: start + Int64(index) * 20)
        }
    }

    @Test func theFirstVoicedPacketStartsATalkSpurtAtOnce() {
        var activity = TalkerActivity<String>()
        activity.record("ana", dBov: 20, voice: true, at: 1_000)
        // 20 dBov is UI level 67, shown in steps of 5.
        #expect(activity.poll(at: 1_000) == ["ana": HeardTalker(level: 65, talkingSince: 1_000)])
        #expect(activity.poll(at: 1_001) == nil)
    }

    @Test func everyoneTalkingIsReportedTogether() {
        var activity = TalkerActivity<String>()
        speak(&activity, "ana", from: 0, packets: 10)
        speak(&activity, "bo", from: 100, packets: 5, dBov: 30)
        let report = activity.poll(at: 180)
        #expect(report?["ana"] == HeardTalker(level: 65, talkingSince: 0))
        #expect(report?["bo"] == HeardTalker(level: 50, talkingSince: 100))
    }

    @Test func aShortPauseKeepsTheSpurtAndALongOneEndsIt() {
        var activity = TalkerActivity<String>()
        speak(&activity, "ana", from: 0, packets: 10)
        _ = activity.poll(at: 180)
        // 300 ms without a packet (DTX between words): still the same spurt, nothing new to say.
        speak(&activity, "ana", from: 480, packets: 5)
        #expect(activity.poll(at: 560) == nil)
        #expect(activity.talkers(at: 560)["ana"]?.talkingSince == 0)
        // More than the 500 ms hold after the last voiced packet (at 560): the spurt is over, said at once.
        #expect(activity.poll(at: 1_061) == ["ana": HeardTalker(level: 0, talkingSince: nil)])
        // The next voiced packet starts a new spurt.
        activity.record("ana", dBov: 20, voice: true, at: 1_500)
        #expect(activity.poll(at: 1_500) == ["ana": HeardTalker(level: 65, talkingSince: 1_500)])
    }

    @Test func packetsWithoutVoiceOrBelowTheNoiseFloorAreNotTalking() {
        var activity = TalkerActivity<String>()
        speak(&activity, "ana", from: 0, packets: 10, voice: false)
        speak(&activity, "bo", from: 0, packets: 10, dBov: 55)
        #expect(
            activity.poll(at: 200) == [
                "ana": HeardTalker(level: 0, talkingSince: nil), "bo": HeardTalker(level: 0, talkingSince: nil),
            ])
    }

    @Test func levelChangesAloneAreReportedAtMostEveryHundredMilliseconds() {
        var activity = TalkerActivity<String>()
        speak(&activity, "ana", from: 0, packets: 3, dBov: 20)
        #expect(activity.poll(at: 40)?["ana"]?.level == 65)
        speak(&activity, "ana", from: 60, packets: 3, dBov: 10)
        // Louder now, but only 80 ms after the last report.
        #expect(activity.poll(at: 120) == nil)
        #expect(activity.poll(at: 140) == ["ana": HeardTalker(level: 85, talkingSince: 0)])
    }

    @Test func withoutLevelsOnlyStartsAndStopsAreReported() {
        var configuration = TalkerActivity<String>.Configuration()
        configuration.reportsLevels = false
        var activity = TalkerActivity<String>(configuration: configuration)
        speak(&activity, "ana", from: 0, packets: 3, dBov: 20)
        // The start is reported at once, with the level.
        #expect(activity.poll(at: 40) == ["ana": HeardTalker(level: 65, talkingSince: 0)])
        // Louder, and long after the last report: a level alone says nothing.
        speak(&activity, "ana", from: 60, packets: 10, dBov: 10)
        #expect(activity.poll(at: 240) == nil)
        #expect(activity.talkers(at: 240)["ana"] == HeardTalker(level: 85, talkingSince: 0))
        // Someone else starting is reported, with everyone's level as it is now.
        speak(&activity, "bo", from: 260, packets: 1, dBov: 30)
        #expect(
            activity.poll(at: 260) == [
                "ana": HeardTalker(level: 85, talkingSince: 0), "bo": HeardTalker(level: 50, talkingSince: 260),
            ])
        // Ana's hold runs out 500 ms after her last packet (at 240): reported at once.
        #expect(activity.poll(at: 740) == nil)
        #expect(activity.poll(at: 741)?["ana"] == HeardTalker(level: 0, talkingSince: nil))
    }

    @Test func aSpeakerInPlaceOfAnotherIsReportedAtOnce() {
        var activity = TalkerActivity<String>()
        speak(&activity, "ana", from: 0, packets: 3)
        #expect(activity.poll(at: 40)?.count == 1)
        // Ana leaves and Bo's first packet is quiet: as many speakers as before, none talking, but not the same
        // ones, said without waiting for the level interval.
        activity.remove("ana")
        speak(&activity, "bo", from: 60, packets: 1, voice: false)
        #expect(activity.poll(at: 60) == ["bo": HeardTalker(level: 0, talkingSince: nil)])
    }

    @Test func aSpeakerWhoLeftIsForgotten() {
        var activity = TalkerActivity<String>()
        speak(&activity, "ana", from: 0, packets: 3)
        _ = activity.poll(at: 40)
        activity.remove("ana")
        #expect(activity.poll(at: 60) == [:])
    }
}
