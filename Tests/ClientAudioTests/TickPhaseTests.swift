import Testing

@testable import ClientAudio

@Suite struct TickPhaseTests {
    @Test func slackHeldForASecondMovesTheNextTickEarlier() {
        var phase = TickPhase()
        let moves = (0..<TickPhase.window).map { _ in phase.observe(slack: 12_000) }
        #expect(moves.dropLast().allSatisfy { $0 == 0 })
        #expect(moves.last == 11_000)
        // The next window starts afresh.
        #expect(phase.observe(slack: 12_000) == 0)
    }

    @Test func theLeastSlackOfTheWindowCounts() {
        var phase = TickPhase()
        var moves: [Int64] = []
        for tick in 0..<TickPhase.window { moves.append(phase.observe(slack: tick == 7 ? 5_000 : 15_000)) }
        #expect(moves.last == 4_000)
    }

    @Test func littleSlackStaysWhereItIs() {
        var phase = TickPhase()
        let moves = (0..<(3 * TickPhase.window)).map { _ in phase.observe(slack: 3_000) }
        #expect(moves.allSatisfy { $0 == 0 })
    }

    @Test func ticksWithoutPacketsDoNotCount() {
        var phase = TickPhase()
        var moves: [Int64] = []
        for tick in 0..<(2 * TickPhase.window - 2) {
            moves.append(phase.observe(slack: tick.isMultiple(of: 2) ? 9_000 : nil))
        }
        #expect(moves.allSatisfy { $0 == 0 })
        #expect(phase.observe(slack: nil) == 0)
        #expect(phase.observe(slack: 9_000) == 8_000)
    }

    @Test func neverMovesByMoreThanAFrame() {
        var phase = TickPhase()
        let moves = (0..<TickPhase.window).map { _ in phase.observe(slack: 90_000) }
        #expect(moves.last == 19_000)
    }

    @Test func theMicrophonesPhaseKeepsTwoMillisecondsOfMargin() {
        var phase = TickPhase.capture
        let moves = (0..<TickPhase.window).map { _ in phase.observe(slack: 7_500) }
        #expect(moves.dropLast().allSatisfy { $0 == 0 })
        #expect(moves.last == 5_500)
        var close = TickPhase.capture
        #expect((0..<(2 * TickPhase.window)).allSatisfy { _ in close.observe(slack: 4_000) == 0 })
    }
}

@Suite struct TickScheduleTests {
    @Test func aSpeakerHearingNobodyFollowsTheMicrophone() {
        var schedule = TickSchedule()
        let moves = (0..<TickPhase.window).map { _ in schedule.earlier(playoutSlack: nil, captureWait: 8_000) }
        #expect(moves.dropLast().allSatisfy { $0 == 0 })
        #expect(moves.last == 6_000)
    }

    @Test func packetsPlayedSetThePhaseAndTheMicrophoneWaitsASecondAfterThem() {
        var schedule = TickSchedule()
        var moves = (0..<TickPhase.window).map { _ in schedule.earlier(playoutSlack: 10_000, captureWait: 8_000) }
        #expect(moves.dropLast().allSatisfy { $0 == 0 })
        #expect(moves.last == 9_000)
        // The speakers fall silent: for a second the microphone is not followed, then it is, from a new window.
        moves = (0..<(2 * TickPhase.window)).map { _ in schedule.earlier(playoutSlack: nil, captureWait: 8_000) }
        #expect(moves.dropLast().allSatisfy { $0 == 0 })
        #expect(moves.last == 6_000)
    }

    @Test func ticksWithoutAFrameTakenDoNotCount() {
        var schedule = TickSchedule()
        let moves = (0..<(3 * TickPhase.window)).map { _ in schedule.earlier(playoutSlack: nil, captureWait: nil) }
        #expect(moves.allSatisfy { $0 == 0 })
        #expect(schedule.earlier(playoutSlack: nil, captureWait: 9_000) == 0)
    }
}
