import ClientAudio

/// How a session's media traffic reaches the client's audio: the one place where `SessionMedia` meets the
/// media engine, for the room screen's sound, bots and the demo's voices alike.
extension MediaReceiver {
    /// Media traffic from the session (its loop thread).
    public func handle(_ media: SessionMedia) {
        switch media {
        case .signal(let signal): handle(signal)
        case .packet(let bytes): receivedOverWebSocket(bytes)
        }
    }

    /// Sends media over `session` when UDP does not get through.
    public func attach(_ session: RoomSession) {
        attach(session.mediaChannel)
    }
}

extension RoomSession {
    /// This session's control connection as the media plane uses it.
    public var mediaChannel: MediaChannel {
        MediaChannel(sendBinary: { [self] in sendBinary($0) }, sendText: { [self] in sendRaw($0) })
    }
}
