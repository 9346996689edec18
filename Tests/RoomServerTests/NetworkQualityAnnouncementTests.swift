import RoomCore
import RoomProtocol
import Testing

@testable import RoomServer

/// How the room announces network quality: on change only, at most every 2 s per peer (time injected), stage
/// members' to everyone, audience members' to hosts, moderators and themself.
@Suite struct NetworkQualityAnnouncementTests {
    func quality(_ peer: PeerID, _ score: Int, loss: Int = 0) -> PeerQuality {
        PeerQuality(peer: peer, score: score, lossPercent: loss, jitterMilliseconds: 12, rttMilliseconds: 40)
    }

    func delivery(_ to: Recipients, _ peers: [PeerQuality]) -> Delivery {
        Delivery(to: to, ServerMessage(.networkQuality(peers), seq: nil))
    }

    @Test func stageScoresGoToEveryoneAndAudienceScoresToModeratorsAndThemself() {
        var room = populatedRoom()
        let seq = room.seq
        let outcome = room.updateQuality([quality("chen", 4, loss: 2), quality("eli", 2, loss: 12)], now: 1000)
        #expect(
            outcome.deliveries == [
                delivery(.everyone, [quality("chen", 4, loss: 2)]),
                delivery(.peers(["ana", "bo"]), [quality("eli", 2, loss: 12)]),
                delivery(.peer("eli"), [quality("eli", 2, loss: 12)]),
            ])
        // A measure, not room state: no sequence number is used up, nothing is stored.
        #expect(room.seq == seq)
        #expect(outcome.changes.isEmpty)
    }

    @Test func aScoreIsSentOnlyWhenItChangesAndAtMostEveryTwoSeconds() {
        var room = populatedRoom()
        #expect(room.updateQuality([quality("chen", 4)], now: 1000).deliveries.count == 1)
        // Unchanged: nothing, however long after.
        #expect(room.updateQuality([quality("chen", 4)], now: 5000).deliveries.isEmpty)
        // Changed, but 2 s have not passed since the last announcement: held back until they have.
        #expect(room.updateQuality([quality("chen", 4)], now: 6000).deliveries.isEmpty)
        #expect(room.updateQuality([quality("chen", 2)], now: 6000).deliveries.count == 1)
        #expect(room.updateQuality([quality("chen", 3)], now: 7000).deliveries.isEmpty)
        #expect(room.updateQuality([quality("chen", 3)], now: 7999).deliveries.isEmpty)
        #expect(
            room.updateQuality([quality("chen", 3)], now: 8000).deliveries == [
                delivery(.everyone, [quality("chen", 3)])
            ])
        // A change that went back before it could be sent is never sent.
        #expect(room.updateQuality([quality("chen", 1)], now: 9000).deliveries.isEmpty)
        #expect(room.updateQuality([quality("chen", 3)], now: 10_500).deliveries.isEmpty)
    }

    @Test func eachPeerIsThrottledOnItsOwnAndAGroupGoesInOneMessage() {
        var room = populatedRoom()
        _ = room.updateQuality([quality("chen", 5), quality("ana", 5)], now: 1000)
        let outcome = room.updateQuality(
            [quality("chen", 4), quality("ana", 4), quality("eli", 3), quality("fay", 2)], now: 2000)
        #expect(
            outcome.deliveries == [
                delivery(.peers(["ana", "bo"]), [quality("eli", 3), quality("fay", 2)]),
                delivery(.peer("eli"), [quality("eli", 3)]),
                delivery(.peer("fay"), [quality("fay", 2)]),
            ])
    }

    @Test func aNewcomerGetsTheScoresAlreadySentThatTheyMaySee() {
        var room = populatedRoom()
        _ = room.updateQuality([quality("chen", 4), quality("eli", 2)], now: 1000)
        _ = room.join(id: "gus", name: "Gus", role: .audience, now: 1100)
        _ = room.join(id: "ivy", name: "Ivy", role: .moderator, now: 1200)
        let outcome = room.updateQuality([quality("chen", 4), quality("eli", 2)], now: 1500)
        #expect(
            outcome.deliveries == [
                delivery(.peer("gus"), [quality("chen", 4)]),
                delivery(.peer("ivy"), [quality("chen", 4), quality("eli", 2)]),
            ])
        // Told once.
        #expect(room.updateQuality([], now: 2500).deliveries.isEmpty)
    }

    @Test func scoresOfPeersNotInTheRoomAreDropped() {
        var room = populatedRoom()
        #expect(room.updateQuality([quality("zed", 1)], now: 1000).deliveries.isEmpty)
        _ = room.leave("chen", reason: .left, now: 1100)
        #expect(room.updateQuality([quality("chen", 1)], now: 1200).deliveries.isEmpty)
    }

    /// A big room: a thousand listeners whose scores all change cost the moderators one message per change, and
    /// each listener only the one about themself.
    @Test func aBigAudienceIsNotAFlood() {
        var room = populatedRoom()
        for index in 0..<1000 {
            _ = room.join(id: PeerID("l\(index)"), name: "L\(index)", role: .audience, now: 10)
        }
        _ = room.updateQuality([], now: 500)
        let scores = (0..<1000).map { quality(PeerID("l\($0)"), 2) }
        let outcome = room.updateQuality(scores, now: 1000)
        #expect(outcome.deliveries.count == 1 + 1000)
        #expect(outcome.deliveries.first == delivery(.peers(["ana", "bo"]), scores))
        #expect(room.updateQuality(scores.map { quality($0.peer, 3) }, now: 2000).deliveries.isEmpty)
    }
}
