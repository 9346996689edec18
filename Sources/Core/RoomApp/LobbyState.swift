import RoomCore
import TermUI

/// What the lobby's connection to the room directory reports, as the lobby's reducer takes it.
public enum LobbyEvent: Sendable, Equatable {
    /// The whole list of live rooms: it replaces what came before.
    case rooms([RoomListing])
    /// Rooms that started, changed or ended (each the room's state now).
    case changed([ListingChange])
    /// The connection dropped; trying again (attempts count from 1).
    case reconnecting(attempt: Int)
    /// The directory refused a request.
    case error(code: String, message: String)
    /// Who may open rooms on this server, and whether this lobby's link may (said as the connection opens).
    case welcome(openRooms: OpenRoomsPolicy, mayOpen: Bool)
    /// The room asked for with `openRoom` exists now; `invite` is a host's link to enter it with.
    case opened(room: String, invite: String, id: String)
    /// The server refused to open the room asked for with `id`, with why in words.
    case openRefused(String, id: String)
    /// The connection is over for good, with why, in plain words.
    case ended(String)
}

/// Everything that can happen to the lobby, in one closed enum.
public enum LobbyAction: Sendable, Equatable {
    case directory(LobbyEvent, at: Timestamp)
    case key(Key, at: Timestamp)
    /// A line typed in line mode (`--plain`).
    case line(String, at: Timestamp)
    case tick(Timestamp)
    case resize(width: Int, height: Int)
    /// Back from a room: why it is over when it did not end by the person's own choice (a refusal, the room
    /// ending), or nil when they left.
    case returned(from: String, problem: String?, at: Timestamp)
    /// A signal or the end of input: leave the lobby.
    case interrupted(at: Timestamp)
}

/// Work for the lobby's runtime.
public enum LobbyEffect: Sendable, Equatable {
    /// Go into a room (the lobby's connection closes while the person is in it, and opens again on return).
    case join(String)
    /// Ask the directory for the whole list again.
    case refresh
    /// Ask the server to open a room with this person as its host.
    case openRoom(name: String, topic: String, id: String)
    /// Go into a room just opened, with the host's link the server gave for it.
    case enter(room: String, invite: String)
    /// A sentence for line mode.
    case say(String)
    /// Leave the lobby: the program ends.
    case quit
}

/// The lobby's state: the live rooms, which is selected, what happened lately. Changed only by `reduceLobby`.
public struct LobbyState: Sendable, Equatable {
    public enum Connection: Sendable, Equatable {
        case connecting
        case connected
        case reconnecting(attempt: Int)
        case disconnected(String)
    }

    /// How many happenings are kept.
    public static let happeningCapacity = 50
    /// How long a notice stays.
    public static let noticeLifetime: Timestamp = 6000

    /// The server, as people read it.
    public let server: String
    /// Whether this is line mode (`--plain`).
    public let lineMode: Bool
    public internal(set) var rooms: [String: RoomListing] = [:]
    /// Room names in the lobby's order (`RoomListing.lobbyOrder`).
    public internal(set) var order: [String] = []
    /// The selected room, by name, so it stays selected as the order changes.
    public internal(set) var selected: String?
    public internal(set) var connection = Connection.connecting
    /// Whether a list has arrived.
    public internal(set) var listed = false
    /// Rooms that started and ended, as sentences, oldest first.
    public internal(set) var happenings: [String] = []
    public internal(set) var notice: Notice?
    public internal(set) var noticeExpires: Timestamp?
    /// The room being entered, from the `join` effect until the person is back.
    public internal(set) var joining: String?
    /// The rooms as line mode last numbered them, so "2" joins the second.
    public internal(set) var numbered: [String] = []
    /// Lines typed before the first list arrived, answered once it has.
    public internal(set) var earlyLines: [String] = []
    public internal(set) var now: Timestamp = 0
    public internal(set) var quitting = false
    /// Why the lobby could not open at all (its connection was refused or failed before the first list): the
    /// program ends with it, as `join` does for a room that never showed.
    public internal(set) var failure: String?
    /// Who may open rooms on this server, once the directory said (nil: not said, as by an older server).
    public internal(set) var openRooms: OpenRoomsPolicy?
    /// Whether this lobby's link may open rooms here (`n`, `/open`).
    public internal(set) var mayOpen = false
    /// The dialog that asks for a new room's name and topic (`n`), or the request `/open` sent in line mode.
    public internal(set) var form: OpenRoomForm?
    /// How many rooms this lobby asked to open: each request's id is `open-N`.
    public internal(set) var openRequests = 0
    /// Increases with every change, so a front end redraws only when something changed.
    public internal(set) var revision: UInt64 = 0

    public init(server: String, lineMode: Bool = false) {
        self.server = server
        self.lineMode = lineMode
    }

    /// The selected room's index in `order`.
    public var selectedIndex: Int? { selected.flatMap { order.firstIndex(of: $0) } }

    /// The next moment the screen changes by itself: a notice going, or a room's age ticking over a minute.
    public var nextWakeup: Timestamp? {
        var next = noticeExpires
        if !order.isEmpty {
            let minute = (now / 60_000 + 1) * 60_000
            next = min(next ?? minute, minute)
        }
        return next
    }
}

/// The dialog that opens a room from the lobby: a name and a topic, then the server's answer.
public struct OpenRoomForm: Sendable, Equatable {
    public internal(set) var name = LineEditor(prompt: "Name:  ")
    public internal(set) var topic = LineEditor(prompt: "Topic: ")
    /// Whether the topic is being typed (else the name).
    public internal(set) var onTopic = false
    /// Why the last try did not work (a name the server would refuse, the server's refusal).
    public internal(set) var problem: String?
    /// The request sent and not answered yet.
    public internal(set) var sent: String?

    public init() {}
}
