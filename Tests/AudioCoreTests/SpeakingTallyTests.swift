import Testing

@testable import AudioCore

/// `SpeakingTally`: each person's speaking time and turns, from talk spurts or reports of who is talking.
@Suite struct SpeakingTallyTests {
    typealias Entry = SpeakingTally<String>.Entry

    @Test func spurtsAddUpAndEachIsATurn() {
        var tally = SpeakingTally<String>()
        tally.start("ana", at: 1_000)
        tally.stop("ana", at: 3_200)
        tally.start("ana", at: 5_000)
        tally.stop("ana", at: 5_800)
        #expect(tally.entry(for: "ana", at: 9_000) == Entry(milliseconds: 3_000, turns: 2, talkingSince: nil))
        #expect(tally.entry(for: "ana", at: 9_000)?.seconds == 3.0)
    }

    @Test func theCurrentTurnCountsUpToTheMomentAsked() {
        var tally = SpeakingTally<String>()
        tally.start("ana", at: 0)
        tally.stop("ana", at: 1_000)
        tally.start("ana", at: 2_000)
        #expect(tally.entry(for: "ana", at: 2_500) == Entry(milliseconds: 1_500, turns: 2, talkingSince: 2_000))
        #expect(tally.entry(for: "ana", at: 2_500)?.isTalking == true)
        #expect(tally.entry(for: "ana", at: 4_000) == Entry(milliseconds: 3_000, turns: 2, talkingSince: 2_000))
    }

    @Test func startingTwiceOrStoppingTwiceChangesNothing() {
        var tally = SpeakingTally<String>()
        tally.stop("ana", at: 0)
        #expect(tally.entry(for: "ana", at: 0) == nil)
        tally.start("ana", at: 100)
        tally.start("ana", at: 400)
        tally.stop("ana", at: 600)
        tally.stop("ana", at: 900)
        #expect(tally.entry(for: "ana", at: 1_000) == Entry(milliseconds: 500, turns: 1, talkingSince: nil))
    }

    @Test func aPauseWithinTheHoldIsPartOfTheTurnAndCountsAsSpeaking() {
        var tally = SpeakingTally<String>(hold: 500)
        tally.start("ana", at: 0)
        tally.stop("ana", at: 1_000)
        // 500 ms of pause: the same turn, the pause counted.
        tally.start("ana", at: 1_500)
        #expect(tally.entry(for: "ana", at: 1_600) == Entry(milliseconds: 1_600, turns: 1, talkingSince: 0))
        tally.stop("ana", at: 2_000)
        // 501 ms of pause: a new turn, the pause not counted.
        tally.start("ana", at: 2_501)
        tally.stop("ana", at: 2_601)
        #expect(tally.entry(for: "ana", at: 3_000) == Entry(milliseconds: 2_100, turns: 2, talkingSince: nil))
    }

    @Test func withoutAHoldEveryPauseMakesANewTurn() {
        var tally = SpeakingTally<String>()
        tally.start("ana", at: 0)
        tally.stop("ana", at: 100)
        tally.start("ana", at: 101)
        tally.stop("ana", at: 200)
        #expect(tally.entry(for: "ana", at: 300) == Entry(milliseconds: 199, turns: 2, talkingSince: nil))
    }

    @Test func reportsOfWhoIsTalkingStartAndStopSpurts() {
        var tally = SpeakingTally<String>()
        tally.update(talking: ["ana"], at: 0)
        tally.update(talking: ["ana", "bo"], at: 250)
        tally.update(talking: ["bo"], at: 1_000)
        tally.update(talking: [], at: 1_250)
        tally.update(talking: ["ana"], at: 2_000)
        #expect(
            tally.entries(at: 2_500) == [
                "ana": Entry(milliseconds: 1_500, turns: 2, talkingSince: 2_000),
                "bo": Entry(milliseconds: 1_000, turns: 1, talkingSince: nil),
            ])
    }

    @Test func aPersonWhoComesBackContinuesTheirTally() {
        var tally = SpeakingTally<String>(hold: 500)
        tally.start("ana@example.org", at: 0)
        // The connection drops while Ana talks: her spurt ends where the server last saw her.
        tally.stop("ana@example.org", at: 2_000)
        // She is back (a new connection, the same identity) and talks again.
        tally.start("ana@example.org", at: 10_000)
        tally.stop("ana@example.org", at: 11_000)
        #expect(
            tally.entry(for: "ana@example.org", at: 12_000)
                == Entry(milliseconds: 3_000, turns: 2, talkingSince: nil))
    }

    @Test func stopAllEndsEveryoneTalking() {
        var tally = SpeakingTally<String>()
        tally.start("ana", at: 0)
        tally.start("bo", at: 500)
        tally.stopAll(at: 1_000)
        #expect(
            tally.entries(at: 5_000) == [
                "ana": Entry(milliseconds: 1_000, turns: 1, talkingSince: nil),
                "bo": Entry(milliseconds: 500, turns: 1, talkingSince: nil),
            ])
    }

    @Test func timeGoingBackwardsCountsAsNoTime() {
        var tally = SpeakingTally<String>(hold: 500)
        tally.start("ana", at: 1_000)
        tally.stop("ana", at: 900)
        #expect(tally.entry(for: "ana", at: 900) == Entry(milliseconds: 0, turns: 1, talkingSince: nil))
        tally.start("ana", at: 800)
        #expect(tally.entry(for: "ana", at: 700) == Entry(milliseconds: 0, turns: 1, talkingSince: 1_000))
    }
}

extension SpeakingTallyTests {
    @Test func rankedListsMostSpeakingTimeFirstThenByKey() {
        var tally = SpeakingTally<String>()
        tally.start("cy", at: 0)
        tally.stop("cy", at: 100)
        tally.start("bo", at: 0)
        tally.stop("bo", at: 300)
        tally.start("ana", at: 200)
        tally.stop("ana", at: 300)
        #expect(tally.ranked(at: 1_000).map(\.key) == ["bo", "ana", "cy"])
        #expect(tally.ranked(at: 1_000).first?.entry == Entry(milliseconds: 300, turns: 1, talkingSince: nil))
    }
}

extension SpeakingTallyTests {
    @Test func aTallyMadeFromAnothersRecordsGoesOnExactlyAsIt() {
        var tally = SpeakingTally<String>(hold: 500)
        tally.start("ana", at: 0)
        tally.stop("ana", at: 1_000)
        tally.start("bo", at: 800)
        var copy = SpeakingTally<String>(hold: 500, records: tally.records)
        #expect(copy.records == tally.records)
        for other in [0, 1] {
            var going = other == 0 ? tally : copy
            going.start("ana", at: 1_400)
            going.stop("bo", at: 2_000)
            going.stop("ana", at: 2_000)
            if other == 0 { tally = going } else { copy = going }
        }
        #expect(copy.entries(at: 3_000) == tally.entries(at: 3_000))
        #expect(copy.entry(for: "ana", at: 3_000) == Entry(milliseconds: 2_000, turns: 1, talkingSince: nil))
    }
}
