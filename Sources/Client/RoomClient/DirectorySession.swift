import RoomCore
import RoomProtocol
import RoomTransport
import WebSocket

/// What a lobby's connection to the room directory reports, in order, on its loop's thread.
public enum DirectoryEvent: Sendable, Equatable {
    /// The whole list of live rooms (on connecting, after a reconnect, or when asked): it replaces what came before.
    case rooms([RoomListing])
    /// Rooms that started, changed or ended. A change may repeat one the last list already held; apply it as
    /// the room's state now (added and updated set it, removed takes it away).
    case changed([ListingChange])
    /// The connection dropped; the session tries again (attempts count from 1).
    case reconnecting(attempt: Int)
    /// The directory refused a request.
    case error(code: String, message: String)
    /// Who may open rooms on this server, and whether this lobby may (said once a connection opens).
    case welcome(openRooms: OpenRoomsPolicy, mayOpen: Bool)
    /// A room this lobby asked to open (`openRoom`) exists now; `invite` is a host's link to enter it with.
    case opened(room: String, invite: String, id: String)
    /// The directory refused the request named `id` (an `openRoom`).
    case refused(code: String, message: String, id: String)
    /// The session is over; nothing follows.
    case ended(SessionEnd)
}

/// A lobby's connection to a server's room directory (`/rooms`): connects with a server invite, reports the
/// list and its changes, asks for the whole list again when it notices a gap in the numbers, and reconnects
/// with backoff when the connection drops, until it is stopped or refused.
public final class DirectorySession: Sendable, ReconnectingSession {
    public let url: String
    private let token: String
    private let headers: HTTPHeaders
    let socket: ReconnectingSocket<Listing, DirectoryEvent>

    /// What a directory session keeps beside its connection.
    struct Listing: ReconnectingSocketExtra {
        /// The number of the last list or change; nil until the connection's first list.
        var lastSeq: Int64?

        mutating func connecting() { lastSeq = nil }
    }

    /// A session to the directory at `url` (`…/rooms`); nothing happens until `start()`.
    public init(
        url: String, token: String, headers: HTTPHeaders = HTTPHeaders(),
        tls: TLSClientConfiguration = TLSClientConfiguration(), reconnect: ReconnectPolicy = ReconnectPolicy(),
        handler: @escaping @Sendable (DirectoryEvent) -> Void
    ) throws(TransportError) {
        self.url = url
        self.token = token
        self.headers = headers
        self.socket = try ReconnectingSocket(
            url: url, tls: tls, policy: reconnect, loopName: "clubroom-lobby",
            connectorLabel: "clubroom.directory.connect", handler: handler,
            reconnecting: { attempt, _ in .reconnecting(attempt: attempt) }, ended: { end in .ended(end) })
    }

    /// Connects in the background.
    public func start() {
        startConnecting()
    }

    /// Asks for the whole list again; false while the connection is down.
    @discardableResult
    public func refresh() -> Bool {
        guard let client = socket.client else { return false }
        client.send(text: String(decoding: DirectoryCodec.encode(.list), as: UTF8.self))
        return true
    }

    /// Asks the directory to open a room named `name` with `topic` and this lobby's person as its host; the
    /// answer comes as `opened` or `refused` with `id`. False while the connection is down.
    @discardableResult
    public func openRoom(name: String, topic: String, id: String) -> Bool {
        guard let client = socket.client else { return false }
        client.send(
            text: String(decoding: DirectoryCodec.encode(.openRoom(name: name, topic: topic, id: id)), as: UTF8.self))
        return true
    }

    /// Closes the connection; the session ends with `.left`.
    public func stop() {
        if let client = socket.stop() {
            client.close(code: .normal, reason: "left")
        } else {
            socket.finish(.left)
        }
    }

    /// Stops the session's thread; call once it has ended, from another thread.
    public func shutdown() {
        socket.shutdown()
    }

    func connect() {
        var options = WebSocketOptions()
        options.maxMessageSize = DirectoryCodec.maxMessageBytes
        // Like a room session: the server pings every 5 s, so two missed pings mean the network has gone, and the
        // lobby says "reconnecting" within 15 s of it going silent (docs/transport.md, "Ping and timeouts").
        options.idleTimeout = RoomSession.idleTimeout
        open(options: options, headers: headers, bearer: token)
    }

    func connectionHandler(generation: Int) -> WebSocketClient.Handler {
        WebSocketClient.Handler(
            onMessage: { [self] payload in received(payload, generation: generation) },
            onClose: { [self] code, reason in closed(code: code, reason: reason, generation: generation) })
    }

    private func received(_ payload: WebSocketPayload, generation: Int) {
        guard case .text(let text) = payload else { return }
        let message: DirectoryMessage
        do {
            // Every string a lobby shows is cleaned on the way in, as a room session's are (docs/protocol.md).
            message = try DirectoryCodec.decodeMessage(Array(text.utf8)).sanitized
        } catch {
            // A newer server's unknown messages are skipped; anything else unreadable is said (the decoder's
            // words may quote the server's).
            if error.code != .unknownType {
                deliver(
                    .error(
                        code: error.code.rawValue,
                        message: ServerText.line(error.message, maxCharacters: ServerText.maxMessageCharacters)))
            }
            return
        }
        enum Step { case skip, deliver, deliverAndRefresh }
        let step = socket.state.withLock { state -> Step in
            guard state.generation == generation, !state.ended else { return .skip }
            switch message {
            case .rooms(_, let seq):
                state.everConnected = true
                state.attempt = 0
                state.lastSeq = seq
                return .deliver
            case .changed(_, let seq, _):
                guard let last = state.lastSeq else { return .skip }
                state.lastSeq = seq
                return message.follows(last) ? .deliver : .deliverAndRefresh
            case .error, .welcome, .opened, .refused:
                return .deliver
            }
        }
        switch message {
        case .rooms(let rooms, _): if step != .skip { deliver(.rooms(rooms)) }
        case .changed(let changes, _, _): if step != .skip { deliver(.changed(changes)) }
        case .error(let code, let text): if step != .skip { deliver(.error(code: code.rawValue, message: text)) }
        case .welcome(let rule, let mayOpen): if step != .skip { deliver(.welcome(openRooms: rule, mayOpen: mayOpen)) }
        case .opened(let room, let invite, let id):
            if step != .skip { deliver(.opened(room: room, invite: invite, id: id)) }
        case .refused(let code, let text, let id):
            if step != .skip { deliver(.refused(code: code.rawValue, message: text, id: id)) }
        }
        // A gap: some change never arrived, so the list may be wrong; the whole list puts it right.
        if step == .deliverAndRefresh { refresh() }
    }

    private func closed(code: WebSocketCloseCode, reason: String, generation: Int) {
        guard let session = socket.closed(generation: generation) else { return }
        if session.stopping || code.rawValue == 1000 {
            socket.finish(.left)
        } else if (4000...4099).contains(code.rawValue) {
            socket.finish(.refused(code: code.rawValue, reason: reason))
        } else if session.everConnected {
            retry(after: "closed \(code.rawValue) \(reason)")
        } else {
            socket.finish(.connectionFailed("the server closed the connection (\(code.rawValue) \(reason))"))
        }
    }

    private func deliver(_ event: DirectoryEvent) {
        socket.deliver(event)
    }
}

extension ReconnectingSocketState where Extra == DirectorySession.Listing {
    /// The number of the last list or change this connection delivered.
    fileprivate var lastSeq: Int64? {
        get { extra.lastSeq }
        set { extra.lastSeq = newValue }
    }
}
