import Testing

@testable import RoomCore

@Suite struct ReactionTests {
    @Test func everySpellingNamesItsReaction() {
        for reaction in Reaction.allCases {
            #expect(Reaction(parsing: reaction.emoji) == reaction)
            #expect(Reaction(parsing: reaction.ascii) == reaction)
            #expect(Reaction(parsing: reaction.word) == reaction)
            #expect(Reaction(parsing: reaction.rawValue) == reaction)
        }
        #expect(Reaction(parsing: " CLAP ") == .clap)
        #expect(Reaction(parsing: "[clap]") == .clap)
        #expect(Reaction(parsing: "+1") == .thumbsUp)
        #expect(Reaction(parsing: "haha") == .laugh)
        #expect(Reaction(parsing: "<3") == .heart)
        #expect(Reaction(parsing: "❤") == .heart)
        #expect(Reaction(parsing: "o/") == .wave)
        #expect(Reaction(parsing: "🎉") == nil)
        #expect(Reaction(parsing: "") == nil)
        #expect(Reaction.allCases.map { $0.symbol(ascii: true) } == ["[clap]", "+1", "haha", "<3", "o/"])
        #expect(Reaction.allCases.map { $0.symbol(ascii: false) } == ["👏", "👍", "😂", "❤️", "✋"])
    }

    @Test func aBurstGoesOutAtMostOncePerInterval() {
        var gate = ReactionGate()
        #expect(gate.burst(at: 0) == nil)
        #expect(gate.offer(.clap, from: "ana", at: 100) == nil)
        #expect(gate.nextBurstAt == 0)
        #expect(
            gate.burst(at: 100)
                == ReactionBurst(counts: [.init(.clap, 1)], senders: [.init("ana", .clap)]))
        #expect(gate.burst(at: 100) == nil)
        // Within the interval, reactions gather into one burst.
        #expect(gate.offer(.clap, from: "bo", at: 200) == nil)
        #expect(gate.offer(.heart, from: "chen", at: 300) == nil)
        #expect(gate.offer(.clap, from: "dara", at: 400) == nil)
        #expect(gate.nextBurstAt == 100 + ReactionGate.interval)
        #expect(gate.burst(at: 100 + ReactionGate.interval - 1) == nil)
        let burst = gate.burst(at: 100 + ReactionGate.interval)
        #expect(
            burst
                == ReactionBurst(
                    counts: [.init(.clap, 2), .init(.heart, 1)],
                    senders: [.init("bo", .clap), .init("chen", .heart), .init("dara", .clap)]))
        #expect(gate.nextBurstAt == nil)
    }

    @Test func aBigRoomsApplauseIsCountedAndNamesOnlyAFew() {
        var gate = ReactionGate()
        for index in 0..<1000 {
            #expect(gate.offer(.clap, from: PeerID("p\(index)"), at: 5) == nil)
        }
        let burst = gate.burst(at: 10)
        #expect(burst?.counts == [.init(.clap, 1000)])
        #expect(burst?.senders.map(\.peer) == ["p0", "p1", "p2", "p3", "p4"])
        #expect(burst?.sentences { $0.rawValue } == ["1000 people clapped."])
    }

    @Test func aPersonPastTheLimitIsRefusedUntilTheWindowMoves() {
        var gate = ReactionGate()
        for index in 0..<ReactionGate.perPersonLimit {
            #expect(gate.offer(.clap, from: "ana", at: Timestamp(index)) == nil)
        }
        #expect(gate.offer(.heart, from: "ana", at: 1_000) == .tooFast)
        #expect(
            ReactionRefusal.tooFast.message == "You are sending reactions too fast; wait a few seconds and try again.")
        // Someone else is not held back by Ana's rate.
        #expect(gate.offer(.heart, from: "bo", at: 1_000) == nil)
        // The refused reaction is not in the burst; Ana's one mark is her last accepted reaction; she counts once.
        #expect(
            gate.burst(at: 1_000)
                == ReactionBurst(
                    counts: [.init(.clap, 1), .init(.heart, 1)], senders: [.init("ana", .clap), .init("bo", .heart)]))
        // Once the first reaction leaves the window, one more is allowed.
        #expect(gate.offer(.laugh, from: "ana", at: ReactionGate.perPersonWindow - 1) == .tooFast)
        #expect(gate.offer(.laugh, from: "ana", at: ReactionGate.perPersonWindow) == nil)
        #expect(gate.offer(.laugh, from: "ana", at: ReactionGate.perPersonWindow) == .tooFast)
    }

    @Test func plainSentencesNameAFewAndCountMany() {
        let names: [PeerID: String] = ["ana": "Ana", "bo": "Bo", "chen": "Chen"]
        func say(_ burst: ReactionBurst) -> [String] { burst.sentences { names[$0] ?? $0.rawValue } }
        #expect(say(ReactionBurst(counts: [.init(.clap, 1)], senders: [.init("ana", .clap)])) == ["Ana clapped."])
        #expect(
            say(ReactionBurst(counts: [.init(.laugh, 2)], senders: [.init("ana", .laugh), .init("bo", .laugh)]))
                == ["Ana and Bo laughed."])
        #expect(
            say(
                ReactionBurst(
                    counts: [.init(.clap, 3), .init(.thumbsUp, 1)],
                    senders: [.init("ana", .clap), .init("bo", .clap), .init("chen", .thumbsUp)]))
                == ["3 people clapped.", "Chen gave a thumbs up."])
    }

    @Test func aMarkIsShownThenExpires() {
        var shown = ShownReactions()
        #expect(shown.isEmpty)
        shown.show(ReactionBurst(counts: [.init(.clap, 1)], senders: [.init("ana", .clap)]), at: 1_000)
        #expect(shown.mark(for: "ana", at: 1_000) == .clap)
        #expect(shown.mark(for: "bo", at: 1_000) == nil)
        #expect(shown.nextExpiry == 1_000 + ShownReactions.lifetime)
        #expect(shown.expire(at: 1_000 + ShownReactions.lifetime - 1) == false)
        #expect(shown.mark(for: "ana", at: 1_000 + ShownReactions.lifetime - 1) == .clap)
        #expect(shown.mark(for: "ana", at: 1_000 + ShownReactions.lifetime) == nil)
        #expect(shown.expire(at: 1_000 + ShownReactions.lifetime) == true)
        #expect(shown.isEmpty)
        #expect(shown.nextExpiry == nil)
    }
}
