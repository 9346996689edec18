import ClubroomResources
import ClusterState
import RedisClient
import RoomCore
import RoomPersistence
import RoomProtocol

@testable import ClusterServer
@testable import RoomServer

let defaultRoles = try! RoleTable.load(contentsOf: ClubroomResources.rolesURL)

func events(_ outcome: Outcome) -> [WireEvent] { outcome.deliveries.map(\.message.event) }

func refusal(_ outcome: Outcome) -> (code: ErrorCode, message: String)? {
    guard case .error(let code, let message, _)? = outcome.error?.event else { return nil }
    return (code, message)
}

/// A cluster's rooms on node b/7, which is never started: nothing they are asked reaches Redis and nothing comes
/// back; what they would send waits in each room's queue.
func unstartedClusterRooms(
    store: SavedRooms, log: ServerLog, consumers: [any OutcomeConsumer] = [], seal: ClusterSeal
) -> ClusterRooms {
    let node = ClusterNode(
        configuration: ClusterConfiguration(
            redis: RedisEndpoint(host: "127.0.0.1", port: 1), node: "b", incarnation: 7, mediaAddress: "",
            relayAddress: ""),
        deliver: { _ in }, notify: { _ in })
    return ClusterRooms(
        RoomsParts(
            roles: defaultRoles, maxPeers: 100,
            persistence: PersistenceQueue(store: store, loop: LoopReference(), log: log),
            connections: Connections(), consumers: consumers, directory: RoomDirectory(maxWatchers: 10, log: log),
            log: log),
        cluster: node, relay: nil, seal: seal)
}
