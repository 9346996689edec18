import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// A `network_quality` input, as every copy of a room applies it: scores of the room's people announced by the one
/// server's rule (a stage member's to everyone, an audience member's to those who may move people and to
/// themself), only when they changed; each node then delivers to its own connections.
struct NetworkQualityAcrossCopiesTests {
    static func quality(_ peer: PeerID, _ score: Int, loss: Int = 0) -> PeerQuality {
        PeerQuality(peer: peer, score: score, lossPercent: loss, jitterMilliseconds: 10, rttMilliseconds: 30)
    }

    /// Hana hosts on a/1, Sam speaks from a/1, Ana and Ben listen from b/7 and c/3.
    static func room() -> ReplicatedRoom {
        var room = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles, seq: 5_000))
        for input: ClusterInput in [
            .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
            .join(node: "a/1", connection: 2, peer: "sam", name: "Sam", role: .speaker, now: 1_010),
            .join(node: "b/7", connection: 1, peer: "ana", name: "Ana", role: .audience, now: 1_020),
            .join(node: "c/3", connection: 1, peer: "ben", name: "Ben", role: .audience, now: 1_030),
        ] {
            _ = room.apply(input)
        }
        return room
    }

    func deliveries(_ room: inout ReplicatedRoom, _ input: ClusterInput) throws -> [Delivery] {
        // Every input crosses Redis as its JSON.
        guard case .outcome(let outcome) = room.apply(try ClusterInput(decoding: input.encoded())) else {
            Issue.record("a network_quality input gives an outcome")
            return []
        }
        return outcome.deliveries
    }

    func message(_ qualities: [PeerQuality]) -> ServerMessage {
        ServerMessage(.networkQuality(qualities), seq: nil)
    }

    @Test func aStageMembersScoreGoesToEveryoneAndAnAudienceMembersToHostsAndThemself() throws {
        var room = Self.room()
        let sam = Self.quality("sam", 2, loss: 12)
        #expect(
            try deliveries(&room, .networkQuality(node: "a/1", [sam], now: 2_000)) == [
                Delivery(to: .everyone, message([sam]))
            ])
        let ana = Self.quality("ana", 1, loss: 20)
        #expect(
            try deliveries(&room, .networkQuality(node: "b/7", [ana], now: 2_100)) == [
                Delivery(to: .peers(["hana"]), message([ana])), Delivery(to: .peer("ana"), message([ana])),
            ])
        // Numbered by nobody: a measure, not room state.
        #expect(room.authority.seq == Self.room().authority.seq)
    }

    @Test func aScoreAlreadyAnnouncedOrOfSomeoneGoneIsNotAnnouncedAgain() throws {
        var room = Self.room()
        _ = try deliveries(&room, .networkQuality(node: "a/1", [Self.quality("sam", 4, loss: 2)], now: 2_000))
        // A second copy of the same score (sent again while the first was on its way) says nothing.
        #expect(
            try deliveries(&room, .networkQuality(node: "a/1", [Self.quality("sam", 4, loss: 3)], now: 2_500)).isEmpty)
        #expect(try deliveries(&room, .networkQuality(node: "d/2", [Self.quality("zed", 1)], now: 2_600)).isEmpty)
        #expect(room.authority.announcedScore(of: "sam") == 4)
        #expect(room.authority.announcedScore(of: "zed") == nil)
    }

    /// What a node gives its newcomers from its own copy: everything to a host, the stage and their own to anyone
    /// else; and a copy started from a checkpoint has no scores (they are measured again within seconds).
    @Test func newcomersSeeWhatTheyMaySeeAndACheckpointCarriesNoScores() throws {
        var room = Self.room()
        let sam = Self.quality("sam", 3, loss: 5)
        let ana = Self.quality("ana", 2, loss: 9)
        let ben = Self.quality("ben", 5)
        _ = try deliveries(&room, .networkQuality(node: "a/1", [sam], now: 2_000))
        _ = try deliveries(&room, .networkQuality(node: "b/7", [ana], now: 2_000))
        _ = try deliveries(&room, .networkQuality(node: "c/3", [ben], now: 2_000))
        #expect(room.authority.announcedQuality(seenBy: "hana") == [sam, ana, ben])
        #expect(room.authority.announcedQuality(seenBy: "ana") == [sam, ana])
        #expect(room.authority.announcedQuality(seenBy: "ben") == [sam, ben])
        #expect(room.authority.announcedQuality(seenBy: "zed").isEmpty)
        let restored = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: room.encoded())
        #expect(restored.encoded() == room.encoded())
        #expect(restored.authority.announcedQuality(seenBy: "hana").isEmpty)
    }

    /// A network quality entry changes nothing a checkpoint carries: it counts an eighth of an entry towards the
    /// room's next checkpoint (32 entries of anything else, or 256 of network quality alone).
    @Test func networkQualityEntriesBringTheNextCheckpointCloserByAnEighth() {
        let whole = ClusterRooms.checkpointInterval * ClusterRooms.checkpointParts
        #expect(ClusterRooms.checkpointWeight(of: .request) * 32 == whole)
        #expect(ClusterRooms.checkpointWeight(of: .levels) * 32 == whole)
        #expect(ClusterRooms.checkpointWeight(of: .networkQuality) * 256 == whole)
    }
}
