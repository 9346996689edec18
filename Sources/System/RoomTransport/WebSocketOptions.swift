import WebSocket

/// Limits and timers of a WebSocket connection, the same for server and client.
public struct WebSocketOptions: Sendable, Equatable {
    /// The largest data message accepted (reassembled); beyond it the connection closes with 1009.
    public var maxMessageSize: Int = WebSocketDecoder.defaultMaxMessageSize
    /// The largest HTTP upgrade head accepted (431 beyond it).
    public var maxHeadSize: Int = WebSocketHandshake.defaultMaxHeadSize
    /// Bytes of messages waiting to be written, not yet begun, beyond which a slow reader is closed with 1008.
    /// A single message larger than this is still sent whole (it streams through the buffer as the peer reads);
    /// the bound is on what waits behind the message being written.
    public var maxWriteBufferSize: Int = 4 * 1024 * 1024
    /// The largest data message this side sends. Asked to send a larger one, the connection sends nothing of it
    /// and closes with 1011 (the peer would refuse it with 1009 anyway).
    public var maxSentMessageSize: Int = 16 * 1024 * 1024
    /// Bytes waiting to be written to this peer beyond which a message sent with `send(realTime:)` (audio on
    /// the WebSocket path) is dropped instead of queued: a peer on a link slower than what it is sent gets what
    /// its link carries, at most this much late, and is not closed as a slow reader for it.
    public var maxRealTimeBacklog: Int = 16 * 1024
    /// How often an open connection sends a ping.
    public var pingInterval: Duration = .seconds(5)
    /// How soon after opening the first ping goes out, so the round-trip time is known early; `nil` waits a
    /// whole ``pingInterval``.
    public var firstPingDelay: Duration?
    /// How long an open connection may receive nothing (not even a pong) before it is closed with 1001.
    public var idleTimeout: Duration = .seconds(15)
    /// How long TCP connect, TLS and the HTTP upgrade may take together.
    public var handshakeTimeout: Duration = .seconds(10)
    /// How long the TCP connect alone may take (within `handshakeTimeout`); a client with more addresses of a
    /// server to try shortens it for all but the last.
    public var connectTimeout: Duration = .seconds(10)
    /// How long to wait for the peer's close frame and then for its end of the stream; also how long a closing
    /// connection waits for the peer to read anything more of what is still going out to it.
    public var closeTimeout: Duration = .seconds(3)
    /// The longest a closing connection keeps going while the peer still reads what went out before the close
    /// (the rest of a long message, then the close frame): past it, the connection ends as if the peer had
    /// stopped reading.
    public var closeLingerLimit: Duration = .seconds(30)

    public init() {}
}

/// A data message as the application sees it.
public enum WebSocketPayload: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// A data message framed once, to be sent to many connections: a server sends the same bytes to each (its
/// frames are not masked), so a message for a thousand peers costs one encoding. A client connection still
/// frames it anew with a fresh masking key.
public struct PreparedMessage: Sendable {
    let message: WebSocketMessage
    /// The whole frame as a server sends it.
    let serverFrame: [UInt8]

    public init(text: String) {
        message = .text(text)
        serverFrame = message.encoded(maskingKey: nil)
    }

    public init(binary: [UInt8]) {
        message = .binary(binary)
        serverFrame = message.encoded(maskingKey: nil)
    }

    /// The size of the message's payload in bytes.
    public var payloadByteCount: Int {
        switch message {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        case .ping, .pong, .close: 0
        }
    }
}

/// The server application's answer to an upgrade request.
public enum UpgradeDecision: Sendable, Equatable {
    case accept
    /// Answers with an HTTP status (e.g. 401, 403, 404) and a plain-text reason, then closes.
    case reject(status: Int, reason: String)
}

/// What a connection reports to its owner; runs on the loop thread.
struct ConnectionEvents {
    var upgrade: ((WebSocketUpgradeRequest, WebSocketConnection) -> UpgradeDecision)?
    var open: (WebSocketConnection) -> Void = { _ in }
    var message: (WebSocketConnection, WebSocketPayload) -> Void = { _, _ in }
    var close: (WebSocketConnection, WebSocketCloseCode, String) -> Void = { _, _, _ in }
    var failedBeforeOpen: (TransportError) -> Void = { _ in }
    var roundTrip: (WebSocketConnection, Duration) -> Void = { _, _ in }
    var finished: (WebSocketConnection) -> Void = { _ in }
}
