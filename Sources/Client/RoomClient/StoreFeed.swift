import Platform
import RoomCore
import RoomProtocol

/// Feeds a session's events to RoomCore's store: its connection events, and its server messages through the
/// protocol's one mapping (`ServerMessage.roomActions(selfID:)`). The UI's runtime and anything else holding a
/// `RoomState` use it; requests need no translation (the session sends RoomCore's `ClientRequest`).
public enum StoreFeed {
    /// The actions for one session event, in order. `selfID` is this client's identity once known (from the
    /// last `joined`); `now` (milliseconds since the Unix epoch) dates the next try of a reconnect. `linkBase` is
    /// the server the session reached, for the invite links it asks for.
    public static func actions(
        for event: SessionEvent, selfID: PeerID?, now: Timestamp = 0, linkBase: ServerAddress? = nil
    ) -> [RoomAction] {
        switch event {
        case .message(let message):
            return message.roomActions(selfID: selfID, linkBase: linkBase)
        case .reconnected(let message):
            return [.server(.reconnected, seq: 0)] + message.roomActions(selfID: selfID, linkBase: linkBase)
        case .reconnecting(let attempt, let delay):
            return [
                .server(.reconnecting(attempt: attempt, retryAt: now == 0 ? 0 : now + delay.inMilliseconds), seq: 0)
            ]
        case .ended:
            return []
        }
    }
}
