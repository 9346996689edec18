import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// A request id takes effect at most once per identity: in the room alone, across a reconnect, and across a
/// checkpoint (in a cluster's copies of the room too: `AppliedRequestsAcrossCopiesTests`).
@Suite struct AppliedRequestsTests {
    func chats(_ room: RoomAuthority) -> [String] { room.chat.map(\.text) }

    @Test func aRepeatedIdIsAnsweredAlreadyAppliedAndChangesNothing() {
        var room = populatedRoom()
        let first = room.handle(.chat("once", to: .everyone), from: "eli", id: .string("k-1"), now: 10)
        #expect(first.error == nil)
        #expect(events(first).count == 1)
        let before = room.seq
        let again = room.handle(.chat("once", to: .everyone), from: "eli", id: .string("k-1"), now: 11)
        #expect(
            again.error?.event
                == .error(
                    code: .alreadyApplied,
                    message: "a request with this id took effect already; this repeat changed nothing",
                    id: .string("k-1")))
        #expect(again.deliveries.isEmpty && again.changes.isEmpty && again.closes.isEmpty)
        #expect(room.seq == before)
        #expect(chats(room) == ["once"])
        // The same id from another identity is another request.
        let other = room.handle(.chat("mine", to: .everyone), from: "fay", id: .string("k-1"), now: 12)
        #expect(other.error == nil)
        #expect(chats(room) == ["once", "mine"])
    }

    /// A copy of a refused request (a cluster node sends its requests again while Redis is away) arriving once the
    /// room has changed is answered with the first refusal and never takes effect: its requester was told it
    /// changed nothing.
    @Test func aRefusedIdIsAnsweredWithItsRefusalAgainAndNeverTakesEffectLater() {
        var room = populatedRoom()
        _ = room.handle(.raiseHand, from: "eli", id: .integer(1), now: 10)
        let refused = room.handle(.raiseHand, from: "eli", id: .integer(2), now: 11)
        #expect(refusal(refused)?.code == .conflict)
        _ = room.handle(.lowerHand, from: "eli", id: .integer(3), now: 12)
        let copy = room.handle(.raiseHand, from: "eli", id: .integer(2), now: 13)
        #expect(copy.error == refused.error)
        #expect(copy.deliveries.isEmpty && copy.changes.isEmpty)
        #expect(room.peers["eli"]?.handRaisedAt == nil)
        // A new id is a new request.
        #expect(room.handle(.raiseHand, from: "eli", id: .integer(4), now: 14).error == nil)
        #expect(room.peers["eli"]?.handRaisedAt == 14)
    }

    /// A copy of a request that reaches the room while its sender is out of it (a cluster node carried it from a
    /// connection the room had already let go) is refused "not in this room" and not noted under its id: sent
    /// again under the same id once its sender is back, it takes effect.
    @Test func aRequestFromSomeoneNotInTheRoomLeavesItsIdFree() {
        var room = populatedRoom()
        _ = room.leave("ana", reason: .disconnected, now: 10)
        let away = room.handle(.setTopic("Friday"), from: "ana", id: .integer(8), now: 11)
        #expect(refusal(away)?.code == .notFound)
        #expect(room.topic != "Friday")
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 12)
        let back = room.handle(.setTopic("Friday"), from: "ana", id: .integer(8), now: 13)
        #expect(back.error == nil)
        #expect(room.topic == "Friday")
        // Decided now, the id is applied once.
        #expect(
            refusal(room.handle(.setTopic("Friday"), from: "ana", id: .integer(8), now: 14))?.code == .alreadyApplied)
    }

    @Test func anIdStaysAppliedAcrossAReconnect() {
        var room = populatedRoom()
        _ = room.handle(.setTopic("Friday"), from: "ana", id: .integer(7), now: 10)
        _ = room.leave("ana", reason: .disconnected, now: 11)
        _ = room.join(id: "ana", name: "Ana", role: .host, now: 12)
        let again = room.handle(.setTopic("Friday"), from: "ana", id: .integer(7), now: 13)
        #expect(refusal(again)?.code == .alreadyApplied)
        #expect(room.topic == "Friday")
    }

    @Test func withoutAnIdEveryRequestIsNew() {
        var room = populatedRoom()
        _ = room.handle(.chat("hi", to: .everyone), from: "eli", id: nil, now: 10)
        _ = room.handle(.chat("hi", to: .everyone), from: "eli", id: nil, now: 11)
        #expect(chats(room) == ["hi", "hi"])
    }

    @Test func createLinkIsNotDeduplicated() {
        var room = populatedRoom()
        let first = room.handle(.createLink(role: .audience, ttl: 600), from: "ana", id: .integer(1), now: 10)
        let second = room.handle(.createLink(role: .audience, ttl: 600), from: "ana", id: .integer(1), now: 11)
        #expect(first.error == nil && second.error == nil)
        #expect(first.grants.count == 1 && second.grants.count == 1)
    }

    @Test func eachIdentityKeepsItsLast64Ids() {
        var room = populatedRoom()
        for number in 1...65 {
            _ = room.handle(.chat("c\(number)", to: .everyone), from: "eli", id: .integer(Int64(number)), now: 10)
        }
        #expect(room.applied.ids["eli"]?.count == 64)
        #expect(
            refusal(room.handle(.chat("x", to: .everyone), from: "eli", id: .integer(65), now: 11))?.code
                == .alreadyApplied)
        // The oldest id was forgotten: the room cannot tell it from a new request any more.
        #expect(room.handle(.chat("c1", to: .everyone), from: "eli", id: .integer(1), now: 12).error == nil)
    }

    @Test func aCheckpointWrittenBeforeIdsWereKeptStillReads() throws {
        var stored = populatedRoom().checkpoint
        stored.applied = nil
        var json = String(decoding: ClusterFormat.encode(stored), as: UTF8.self)
        #expect(!json.contains("\"applied\""))
        json = String(json)
        let restored = try ClusterFormat.checkpoint(decoding: Array(json.utf8))
        let room = RoomAuthority(name: "lobby", roles: defaultRoles, restoring: restored, maxPeers: 100)
        #expect(room.applied.ids.isEmpty)
    }
}

/// The server alone: a client's retry of a request under its id, after its connection dropped and it joined
/// again, is answered `already_applied` at once and publishes nothing.
@Suite struct LocalRoomsAppliedRequestsTests {
    @Test func aRetryAfterAReconnectIsAnsweredAlreadyAppliedAndPublishesNothing() {
        let test = RoomsUnderTest()
        test.join("ana", role: .host)
        test.join("eli")
        #expect(
            test.rooms.handle(.chat("once", to: .everyone), from: "eli", id: .string("r-1"), in: "lobby", now: 5) == nil
        )
        test.committer.complete(0)
        test.rooms.leave("eli", reason: .disconnected, from: "lobby")
        test.join("eli")
        let (published, committing) = (test.published.outcomes.count, test.committer.pending.count)
        let answer = test.rooms.handle(
            .chat("once", to: .everyone), from: "eli", id: .string("r-1"), in: "lobby", now: 9)
        #expect(answer == AppliedRequests.repeated(.string("r-1")))
        #expect(test.published.outcomes.count == published)
        #expect(test.committer.pending.count == committing)
        let texts = test.published.events.compactMap { event -> String? in
            if case .chat(let message) = event { return message.text }
            return nil
        }
        #expect(texts == ["once"])
    }
}
