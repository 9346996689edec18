import ClusterState
import Foundation
import RedisClient
import RoomCore
import RoomPersistence
import RoomProtocol
import Testing

@testable import ClusterServer
@testable import RoomServer

/// What one node of a cluster sends of its own people's network quality: only its own people's scores that differ
/// from what the room announced, at most one per person every 2 s, all of a hand-over in one input; and what it
/// gives its newcomers from its own copy. The node is never started: what it sends waits in the room's queue.
@Suite struct QualityFromOneNodeTests {
    final class Heard: OutcomeConsumer {
        var deliveries: [Delivery] = []
        func consume(_ outcome: Outcome, in room: String) { deliveries += outcome.deliveries }
    }

    static func quality(_ peer: PeerID, _ score: Int) -> PeerQuality {
        PeerQuality(peer: peer, score: score, lossPercent: 0, jitterMilliseconds: 10, rttMilliseconds: 30)
    }

    @Test func onlyItsOwnPeoplesChangedScoresGoThrottledAndNewcomersAreToldFromTheCopy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("quality-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = ServerLog(minimum: .error, descriptor: -1)
        let store = try SavedRooms(directory: folder.path, now: 1, report: { _ in })
        defer { store.close(timeout: .seconds(1)) }
        let heard = Heard()
        let rooms = unstartedClusterRooms(
            store: store, log: log, consumers: [heard], seal: ClusterSeal(secret: Array("the cluster's secret".utf8)))
        // Hana and Ann are connected here (b/7), Ben through c/3. Still loading: inputs wait in `waiting`.
        let room = ClusterRooms.Room()
        room.ready = true
        var copy = ReplicatedRoom(authority: RoomAuthority(name: "jazz", roles: defaultRoles))
        for input: ClusterInput in [
            .join(node: "b/7", connection: 1, peer: "hana", name: "Hana", role: .host, now: 1),
            .join(node: "b/7", connection: 2, peer: "ann", name: "Ann", role: .audience, now: 2),
            .join(node: "c/3", connection: 1, peer: "ben", name: "Ben", role: .speaker, now: 3),
        ] {
            _ = copy.apply(input)
        }
        room.copy = copy
        room.local = ["hana": 1, "ann": 2]
        rooms.rooms["jazz"] = room
        func sent() -> [[PeerQuality]] { room.waiting.filter { $0.kind == .networkQuality }.map { $0.qualities ?? [] } }
        func twoSecondsPass() {
            for peer in room.qualitySentAt.keys { room.qualitySentAt[peer]! -= RoomAuthority.qualityInterval }
        }

        rooms.updateQuality([Self.quality("hana", 5), Self.quality("ann", 2), Self.quality("ben", 1)], in: "jazz")
        #expect(sent() == [[Self.quality("ann", 2), Self.quality("hana", 5)]])
        // Nothing announced yet to tell the newcomers.
        #expect(heard.deliveries.isEmpty)
        // Within 2 s, nothing more goes, changed or not.
        rooms.updateQuality([Self.quality("hana", 4), Self.quality("ann", 2)], in: "jazz")
        #expect(sent().count == 1)

        // The input comes back through the stream: the copy announces it.
        _ = room.copy!.apply(room.waiting.removeFirst())
        twoSecondsPass()
        // Hana's 5 and Ann's 2 are what the room announced: only Ann's change goes.
        rooms.updateQuality([Self.quality("hana", 5), Self.quality("ann", 1)], in: "jazz")
        #expect(sent() == [[Self.quality("ann", 1)]])
        // That input is lost on its way: 2 s later, the room still says 2, so Ann's 1 goes again.
        room.waiting.removeAll()
        rooms.updateQuality([Self.quality("ann", 1)], in: "jazz")
        #expect(sent().isEmpty)
        twoSecondsPass()
        rooms.updateQuality([Self.quality("ann", 1)], in: "jazz")
        #expect(sent() == [[Self.quality("ann", 1)]])

        // A moderator comes through this node: at the next hand-over, its copy's announced scores, to them alone.
        _ = room.copy!.apply(.join(node: "b/7", connection: 3, peer: "mo", name: "Mo", role: .moderator, now: 9))
        room.local["mo"] = 3
        rooms.updateQuality([], in: "jazz")
        #expect(
            heard.deliveries == [
                Delivery(
                    to: .peer("mo"),
                    ServerMessage(.networkQuality([Self.quality("hana", 5), Self.quality("ann", 2)]), seq: nil))
            ])
        rooms.updateQuality([], in: "jazz")
        #expect(heard.deliveries.count == 1)
        // Mo leaves; Ben, on the stage, comes through this node and is given the stage's scores only; Mo comes back
        // under a new connection and is told again.
        room.local["mo"] = nil
        room.local["ben"] = 4
        rooms.updateQuality([], in: "jazz")
        #expect(
            heard.deliveries.last
                == Delivery(to: .peer("ben"), ServerMessage(.networkQuality([Self.quality("hana", 5)]), seq: nil)))
        room.local["mo"] = 5
        rooms.updateQuality([], in: "jazz")
        #expect(heard.deliveries.count == 3)
        #expect(heard.deliveries.last == heard.deliveries.first)
    }
}
