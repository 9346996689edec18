import WebSocket

/// Where the control protocol is found on a server: a room at `/rooms/ROOM` (the lobby's directory, `/rooms`,
/// is the server's own).
extension WebSocketUpgradeRequest {
    /// The room named by a path of the form `/rooms/ROOM`, or nil for any other path.
    public var room: String? {
        let prefix = "/rooms/"
        guard path.hasPrefix(prefix) else { return nil }
        let name = String(path.dropFirst(prefix.count))
        return name.isEmpty || name.contains("/") ? nil : name
    }
}
