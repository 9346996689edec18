import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// How the room takes reactions: anyone may send them, each person within a rate; they are gathered into at most
/// one unsequenced `reaction` per `ReactionGate.interval`, and the rest go out with the room's timed work (time
/// injected).
@Suite struct ReactionAnnouncementTests {
    func reaction(_ burst: ReactionBurst) -> Delivery {
        Delivery(to: .everyone, ServerMessage(.reaction(burst), seq: nil))
    }

    @Test func theFirstReactionGoesOutAtOnceAndTheNextAreGatheredUntilTheIntervalPassed() {
        var room = populatedRoom()
        let seq = room.seq
        #expect(room.nextTimedWork == nil)
        let first = room.handle(.react(.clap), from: "eli", now: 10_000)
        #expect(first.error == nil)
        #expect(
            first.deliveries == [reaction(ReactionBurst(counts: [.init(.clap, 1)], senders: [.init("eli", .clap)]))])
        // Ephemeral: no sequence number is used up, nothing is stored.
        #expect(room.seq == seq)
        #expect(first.changes.isEmpty)
        // Within the interval, nothing goes out; everyone's reactions wait together.
        #expect(room.handle(.react(.clap), from: "fay", now: 10_200).deliveries.isEmpty)
        #expect(room.handle(.react(.laugh), from: "ana", now: 10_300).deliveries.isEmpty)
        #expect(room.handle(.react(.clap), from: "chen", now: 10_400).deliveries.isEmpty)
        #expect(room.nextTimedWork == 10_000 + ReactionGate.interval)
        #expect(room.expireInvitations(now: 10_000 + ReactionGate.interval - 1).deliveries.isEmpty)
        #expect(
            room.expireInvitations(now: 10_000 + ReactionGate.interval).deliveries == [
                reaction(
                    ReactionBurst(
                        counts: [.init(.clap, 2), .init(.laugh, 1)],
                        senders: [.init("fay", .clap), .init("ana", .laugh), .init("chen", .clap)]))
            ])
        #expect(room.nextTimedWork == nil)
    }

    @Test func aPersonPastTheRateIsRefusedWithASentence() {
        var room = populatedRoom()
        for index in 0..<ReactionGate.perPersonLimit {
            #expect(room.handle(.react(.heart), from: "eli", now: Timestamp(1_000 + index)).error == nil)
        }
        let refused = room.handle(.react(.heart), from: "eli", id: .integer(7), now: 2_000)
        #expect(
            refused.error
                == ServerMessage(
                    .error(
                        code: .rateLimited,
                        message: "You are sending reactions too fast; wait a few seconds and try again.",
                        id: .integer(7)),
                    seq: nil))
        #expect(refused.deliveries.isEmpty)
        // Another person is not held back by Eli's rate, and Eli may react again once the window moved on.
        #expect(room.handle(.react(.heart), from: "fay", now: 2_000).error == nil)
        #expect(room.handle(.react(.heart), from: "eli", now: 1_000 + ReactionGate.perPersonWindow).error == nil)
    }

    /// The server's once-a-second work (`expireInvitations`) sends what the interval held back, in the room whose
    /// burst is due.
    @Test func theServersTimedWorkSendsTheGatheredReactions() {
        let test = RoomsUnderTest()
        test.join("ana", role: .host)
        test.join("eli")
        func reactions() -> [ReactionBurst] {
            test.published.events.compactMap { if case .reaction(let burst) = $0 { burst } else { nil } }
        }
        #expect(test.rooms.handle(.react(.clap), from: "eli", id: nil, in: "lobby", now: 10_000) == nil)
        #expect(reactions() == [ReactionBurst(counts: [.init(.clap, 1)], senders: [.init("eli", .clap)])])
        #expect(test.rooms.handle(.react(.heart), from: "ana", id: nil, in: "lobby", now: 10_200) == nil)
        test.rooms.expireInvitations(now: 10_500)
        #expect(reactions().count == 1)
        test.rooms.expireInvitations(now: 11_000)
        #expect(
            reactions().last == ReactionBurst(counts: [.init(.heart, 1)], senders: [.init("ana", .heart)]))
        #expect(test.committer.pending.isEmpty)
    }

    @Test func someoneNotInTheRoomCannotReact() {
        var room = populatedRoom()
        #expect(room.handle(.react(.clap), from: "zed", now: 1).error?.event.typeName == "error")
        #expect(room.reactions.nextBurstAt == nil)
    }
}
