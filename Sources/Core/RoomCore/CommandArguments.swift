// What the commands that do more than one thing ask for.

/// What `/play` asks for.
public enum PlayCommand: Sendable, Equatable {
    /// Play the file at this path (as typed), in place of any file playing.
    case file(String)
    /// Stop the file playing.
    case stop
    /// Say what plays, and how far it is.
    case status
}

/// What `/stream` asks for.
public enum StreamCommand: Sendable, Equatable {
    /// Say the server's destinations and which the room streams to (`/stream`). Local.
    case list
    /// Stream the room to the server's destination of this name (`/stream NAME`; hosts).
    case start(String)
    /// Stop streaming there (`/stream stop NAME`; hosts).
    case stop(String)
}
