import RoomProtocol

// The client's edge: every string a session hands on (server messages, media messages, close reasons and
// connection errors, which quote what the server answered) is cleaned here first, by `ServerText`'s rules, so
// nothing a server sends can reach a terminal as it was sent. `RoomSession` applies these to everything it
// delivers; see docs/protocol.md, "What clients do with the server's text".

extension SessionEvent {
    /// The event with every string from the server cleaned.
    var sanitized: SessionEvent {
        switch self {
        case .message(let message): .message(message.sanitized)
        case .reconnected(let message): .reconnected(message.sanitized)
        case .reconnecting: self
        case .ended(let end): .ended(end.sanitized)
        }
    }
}

extension SessionEnd {
    /// The end with the server's close reason, or the failure that quotes the server, cleaned.
    var sanitized: SessionEnd {
        switch self {
        case .left, .removed, .roomEnded, .replaced: self
        case .refused(let code, let reason): .refused(code: code, reason: ServerText.closeReason(reason))
        case .closedByServer(let reason): .closedByServer(reason: ServerText.closeReason(reason))
        case .connectionFailed(let problem, let cause):
            .connectionFailed(ServerText.line(problem, maxCharacters: ServerText.maxFailureCharacters), cause: cause)
        }
    }
}

extension SessionMedia {
    /// The media message with its strings cleaned; packets are bytes for the media engine, never shown.
    var sanitized: SessionMedia {
        switch self {
        case .signal(let signal): .signal(signal.sanitized)
        case .packet: self
        }
    }
}
