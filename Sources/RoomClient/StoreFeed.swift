import RoomCore
import RoomProtocol

/// Feeds a session's events to RoomCore's store: its connection events, and its server messages through the
/// protocol's one mapping (`ServerMessage.roomActions(selfID:)`). The UI's runtime and anything else holding a
/// `RoomState` use it; requests need no translation (the session sends RoomCore's `ClientRequest`).
public enum StoreFeed {
    /// The actions for one session event, in order. `selfID` is this client's identity once known (from the
    /// last `joined`); invitations addressed to others are not actions for this client's store. `linkBase` is the
    /// server the session reached, for the invite links it asks for.
    public static func actions(for event: SessionEvent, selfID: PeerID?, linkBase: ServerAddress? = nil) -> [RoomAction]
    {
        switch event {
        case .message(let message):
            return message.roomActions(selfID: selfID, linkBase: linkBase)
        case .reconnected(let message):
            return [.server(.reconnected, seq: 0)] + message.roomActions(selfID: selfID, linkBase: linkBase)
        case .reconnecting(let attempt, _):
            return [.server(.reconnecting(attempt: attempt), seq: 0)]
        case .ended:
            return []
        }
    }
}
