import RoomCore
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// Each person's speaking time travels in the room's checkpoint: a copy started from it answers `stats` exactly as
/// the copy that saw the whole history, talk under way included.
struct SpeakingCheckpointTests {
    let early: [ClusterInput] = [
        .join(node: "a/1", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1_000),
        .join(node: "b/7", connection: 1, peer: "ana", name: "Ana", role: .speaker, now: 1_010),
        .join(node: "c/3", connection: 4, peer: "ben", name: "Ben", role: .speaker, now: 1_020),
        .request(node: "b/7", peer: "ana", id: nil, .setMute(false), now: 1_030),
        .request(node: "c/3", peer: "ben", id: nil, .setMute(false), now: 1_040),
        // Each node reports its own speakers.
        .levels(node: "b/7", ["ana": 60], now: 2_000),
        .levels(node: "c/3", ["ben": 40], now: 2_500),
        .levels(node: "b/7", ["ana": 0], now: 4_000),
        .levels(node: "b/7", ["ana": 55], now: 6_000),
    ]
    let later: [ClusterInput] = [
        .levels(node: "c/3", ["ben": 0], now: 7_000),
        .request(node: "a/1", peer: "hana", id: .string("s"), .stats, now: 8_000),
    ]

    func stats(_ room: inout ReplicatedRoom, _ inputs: [ClusterInput]) -> [SpeakingStat]? {
        var answer: [SpeakingStat]?
        for input in inputs {
            let decoded = try! ClusterInput(decoding: input.encoded())
            guard case .outcome(let outcome) = room.apply(decoded) else { continue }
            for delivery in outcome.deliveries {
                if case .stats(let people, _) = delivery.message.event { answer = people }
            }
        }
        return answer
    }

    @Test func aCopyFromACheckpointCountsOnFromWhereTheRoomWas() throws {
        var full = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles))
        _ = stats(&full, early)
        let restored = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: full.encoded())
        #expect(restored.encoded() == full.encoded())
        var fromCheckpoint = restored
        let expected = [
            SpeakingStat(peer: "ben", name: "Ben", milliseconds: 4_500, turns: 1, talking: false),
            SpeakingStat(peer: "ana", name: "Ana", milliseconds: 4_000, turns: 2, talking: true),
        ]
        #expect(stats(&full, later) == expected)
        #expect(stats(&fromCheckpoint, later) == expected)
    }

    @Test func aCheckpointWithoutSpeakingReadsAsNoOneHavingSpoken() throws {
        let room = ReplicatedRoom(authority: RoomAuthority(name: "r", roles: defaultRoles))
        let text = String(decoding: room.encoded(), as: UTF8.self)
        #expect(!text.contains("\"speaking\""))
        let restored = try ReplicatedRoom(name: "r", roles: defaultRoles, maxPeers: 100, decoding: room.encoded())
        #expect(restored.authority.speakingStats(now: 9_000) == [])
    }
}
