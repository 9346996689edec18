/// One peer's audio level in a `speakers` update.
public struct SpeakerLevel: Sendable, Equatable, Codable {
    public var peer: PeerID
    /// 0 (silent) to 100 (loudest); values outside are clamped when applied.
    public var level: Int

    public init(peer: PeerID, level: Int) {
        self.peer = peer
        self.level = level
    }
}

/// Everything the server tells a client about its room, plus the three connection events the client's own
/// runtime reports (`reconnecting`, `reconnected`, `error`).
///
/// Server events travel with a per-room sequence number (see `RoomAction.server`); the connection events are
/// local and unsequenced.
public enum ServerEvent: Sendable, Equatable, Codable {
    /// The full state of the room on joining or rejoining; it carries the sequence number it reflects.
    case joined(RoomSnapshot)
    case peerJoined(Peer)
    case peerLeft(PeerID)
    /// `by` is the actor who made the change (`nil` when the server did it, e.g. on accepting an invitation).
    case roleChanged(PeerID, to: RoleName, by: PeerID?)
    case handRaised(PeerID, at: Timestamp)
    case handLowered(PeerID, by: PeerID?)
    case muteChanged(PeerID, muted: Bool, by: PeerID?)
    /// Who is speaking now and how loud; peers not listed are silent.
    case speakers([SpeakerLevel])
    case chat(ChatMessage)
    /// This client is invited onto the stage and may accept or decline.
    case invitedToSpeak(by: PeerID)
    /// A peer this client invited onto the stage declined (only the inviter hears of it).
    case inviteDeclined(PeerID)
    /// Someone asks this client to mute (they may not be allowed to force it).
    case askedToMute(by: PeerID)
    /// A peer was removed from the room; when it is this client, the room is over for it.
    case removed(PeerID, reason: String, by: PeerID?)
    case roomEnded(reason: String)
    case topicChanged(String, by: PeerID?)
    /// The connection dropped and the runtime is trying again (attempt counts from 1).
    case reconnecting(attempt: Int)
    /// The connection is back; a fresh `joined` snapshot follows.
    case reconnected
    /// The server refused a request or reported a failure.
    case error(code: String, message: String)

    /// Whether the event carries a room sequence number. Connection events are the client's own.
    public var isSequenced: Bool {
        switch self {
        case .reconnecting, .reconnected, .error: false
        default: true
        }
    }
}
