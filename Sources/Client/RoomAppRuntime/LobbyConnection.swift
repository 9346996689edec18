import RoomApp
import RoomClient
import RoomCore
import RoomTransport
import Synchronization
import WebSocket

/// A lobby's connection to the room directory: the real one, or a scripted one in tests.
public protocol LobbyConnection: AnyObject, Sendable {
    /// Connects; events then arrive through `deliver`, from any thread.
    func start(deliver: @escaping @Sendable (LobbyEvent) -> Void)
    /// Asks for the whole list again.
    func refresh()
    /// Asks the server to open a room with this person as its host; the answer arrives as `opened` or
    /// `openRefused` naming `id`.
    func openRoom(name: String, topic: String, id: String)
    /// Closes the connection and stops its threads.
    func stop()
}

/// The real connection: a `DirectorySession` to `…/rooms` with a server invite.
public final class DirectoryConnection: LobbyConnection, @unchecked Sendable {
    // @unchecked: `session` is set once in `start`, under its mutex, and only read afterwards.
    private let url: String
    private let token: String
    private let headers: HTTPHeaders
    private let tls: TLSClientConfiguration
    private let session = Mutex<DirectorySession?>(nil)

    /// `headers` say who this person is (`GuestHeaders`), which the server needs before it opens a room for them.
    public init(
        url: String, token: String, headers: HTTPHeaders = HTTPHeaders(),
        tls: TLSClientConfiguration = TLSClientConfiguration()
    ) {
        self.url = url
        self.token = token
        self.headers = headers
        self.tls = tls
    }

    public func start(deliver: @escaping @Sendable (LobbyEvent) -> Void) {
        do {
            let session = try DirectorySession(url: url, token: token, headers: headers, tls: tls) { event in
                deliver(Self.convert(event))
            }
            self.session.withLock { $0 = session }
            session.start()
        } catch {
            deliver(.ended("Cannot reach the lobby at \(url): \(error.description)."))
        }
    }

    public func refresh() {
        session.withLock { $0 }?.refresh()
    }

    public func openRoom(name: String, topic: String, id: String) {
        session.withLock { $0 }?.openRoom(name: name, topic: topic, id: id)
    }

    public func stop() {
        guard let session = session.withLock({ $0 }) else { return }
        session.stop()
        session.shutdown()
    }

    static func convert(_ event: DirectoryEvent) -> LobbyEvent {
        switch event {
        case .rooms(let rooms): .rooms(rooms)
        case .changed(let changes): .changed(changes)
        case .reconnecting(let attempt): .reconnecting(attempt: attempt)
        case .error(let code, let message): .error(code: code, message: message)
        case .welcome(let rule, let mayOpen): .welcome(openRooms: rule, mayOpen: mayOpen)
        case .opened(let room, let invite, let id): .opened(room: room, invite: invite, id: id)
        case .refused(_, let message, let id): .openRefused(message, id: id)
        case .ended(let end): .ended(describe(end))
        }
    }

    /// Why the lobby's connection is over, in plain words.
    public static func describe(_ end: SessionEnd) -> String {
        switch end {
        case .left, .removed, .roomEnded, .replaced: "The lobby closed."
        case .closedByServer(let reason):
            "The server closed the lobby\(reason.isEmpty ? "" : " (\(reason))"). Open it again to come back."
        case .refused(let code, let reason): Refusals.describe(code: code, reason: reason, withInvite: true)
        case .connectionFailed(let problem, _): "Cannot reach the lobby: \(problem). Check the address and try again."
        }
    }
}
