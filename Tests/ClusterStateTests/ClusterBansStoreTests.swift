import RoomTesting
import Testing

@testable import ClusterState

/// The cluster's bans in Redis: written with the entry that bans or lifts, in the same atomic step (a fenced
/// append writes none), versioned so a node reads them only when they changed, and carried in from a node's own
/// table without bringing back a ban the cluster lifted since it was made.
@Suite(.ownThread, .serialized) struct ClusterBansStoreTests {
    @Test func bansAndLiftsAreWrittenWithTheirEntryOnlyAndCarriedInUnlessLiftedSince() throws {
        let server = try RedisServerProcess(appendOnly: false)
        let redis = try store(server)
        #expect(try redis.bansVersion() == nil)
        #expect(try redis.bans() == ClusterBans(version: nil, records: [:], lifts: [:]))
        guard case .acquired(let token) = try redis.acquire("r", node: "a", incarnation: 1, leaseMilliseconds: 5000)
        else {
            Issue.record("no lease")
            return
        }
        #expect(
            try redis.append(
                "r", entry: entry(5, after: 0, "banned"), token: token, operations: [.setBan("gus", bytes("g1"))],
                at: 42) == .appended(EntryID(seq: 5)))
        #expect(try redis.bansVersion() == "1")
        #expect(try redis.bans() == ClusterBans(version: "1", records: ["gus": bytes("g1")], lifts: [:]))

        // A stale owner's append writes no ban.
        let stale = LeaseToken(node: "a", incarnation: 1, epoch: token.epoch + 7)
        #expect(
            try redis.append(
                "r", entry: entry(6, after: 5, "x"), token: stale, operations: [.setBan("eve", bytes("e1"))], at: 43)
                == .fenced(owner: token))
        #expect(try redis.bans().records.keys.sorted() == ["gus"])

        #expect(
            try redis.append(
                "r", entry: entry(6, after: 5, "lifted"), token: token, operations: [.liftBan("gus", at: 100)], at: 44)
                == .appended(EntryID(seq: 6)))
        #expect(try redis.bans() == ClusterBans(version: "2", records: [:], lifts: ["gus": 100]))

        // A node's own bans: gus's was made before the cluster lifted it (stays out), bo's after (comes in), and
        // dee's is new to the cluster; a ban the cluster holds already is kept as it is.
        #expect(
            try redis.append(
                "r", entry: entry(7, after: 6, "banned"), token: token, operations: [.setBan("cy", bytes("c1"))],
                at: 45) == .appended(EntryID(seq: 7)))
        #expect(
            try redis.carryBans([
                CarriedBan(identity: "gus", at: 100, record: bytes("g0")),
                CarriedBan(identity: "cy", at: 300, record: bytes("c0")),
                CarriedBan(identity: "dee", at: 50, record: bytes("d0")),
            ]) == 1)
        #expect(try redis.carryBans([CarriedBan(identity: "gus", at: 101, record: bytes("g2"))]) == 1)
        #expect(
            try redis.bans()
                == ClusterBans(
                    version: "5", records: ["cy": bytes("c1"), "dee": bytes("d0"), "gus": bytes("g2")],
                    lifts: ["gus": 100]))
        // Nothing to carry changes nothing, not even the version.
        #expect(try redis.carryBans([CarriedBan(identity: "dee", at: 60, record: bytes("d1"))]) == 0)
        #expect(try redis.bansVersion() == "5")
    }
}
