import RoomCore
import RoomProtocol

/// Answers a room's `start_recording` while the server runs no recorder of its own: the asker is told, in a
/// sentence, how to record by hand, and the log says it, rather than the request passing without a word.
///
/// Loop thread only (like the rest of `ServerState`).
final class UnservedRecorderOrders: OutcomeConsumer, @unchecked Sendable {
    let connections: Connections
    let log: ServerLog

    /// What the asker reads.
    static let byHand =
        "this server does not run a recorder itself; run one with clubroom record and a recorder's link "
        + "(clubroom invite --role recorder)"

    init(connections: Connections, log: ServerLog) {
        self.connections = connections
        self.log = log
    }

    package func consume(_ outcome: Outcome, in room: String) {
        for case .start(let by) in outcome.recorderOrders {
            log.info("room \(room): \(by) asked to record; no recorder runs on this server")
            connections.members(of: room)[by]?.send(
                ServerMessage(.error(code: .conflict, message: Self.byHand, id: nil), seq: nil))
        }
    }
}
