import AudioCore
import RoomCore
import TermUI

/// Everything the room screen keeps beyond the room itself: the selection, overlays, the chat pane, the command
/// line, notices and the level meters. Changed only by `reduceApp`.
public struct AppState: Sendable {
    /// How long a notice stays on screen, in milliseconds.
    public static let noticeLifetime: Timestamp = 6000
    /// How many lines the chat and event pane keeps.
    public static let logCapacity = 500

    /// The room as the server described it.
    public internal(set) var room: RoomState
    /// The selected peer; the selection follows the person, not a place in a list.
    public internal(set) var selection: PeerID?
    /// Where the selection last was, so it can stay near that place when its person leaves.
    public internal(set) var selectionAnchor: SelectionAnchor?
    /// The dialog over the room, if any. The invitation prompt is not here: it shows while the room has one.
    public internal(set) var overlay: AppOverlay?
    /// Whether "Accept" (rather than "Decline") is chosen in the invitation prompt.
    public internal(set) var invitationAcceptSelected = true
    /// Whether the chat and event pane is shown (it is at first, in the rows the other sections leave).
    public internal(set) var chatVisible = true
    /// Chat messages that arrived while the pane was hidden or scrolled up.
    public internal(set) var unreadChat = 0
    /// How many of the newest log lines are scrolled out of view below (0 follows the newest).
    public internal(set) var chatScroll = 0
    /// Log lines that arrived while the pane was scrolled up.
    public internal(set) var linesBelow = 0
    /// Which happenings ring the bell and mark the status line.
    public internal(set) var notify = NotifySettings()
    /// The mark on the status line for a direct message or (for those who run the stage) a new raised hand,
    /// until the person presses a key.
    public internal(set) var alert: String?
    /// Chat messages and room events in words, oldest first.
    public internal(set) var log = BoundedHistory<RoomScreenModel.ChatLine>(capacity: AppState.logCapacity)
    /// The command line, while open.
    public internal(set) var commandLine: LineEditor?
    /// Lines typed on the command line before, oldest first.
    public internal(set) var commandHistory: [String] = []
    /// The line above the status line, and when it goes away (`nil` to stay until replaced).
    public internal(set) var notice: Notice?
    public internal(set) var noticeExpires: Timestamp?
    /// Whether the notice is the hint to unmute after accepting an invitation, which goes once the person is
    /// unmuted on stage (it has said what it had to).
    var noticeEndsOnUnmute = false
    /// The level meters of people who spoke recently: rise at once, hold, fall slowly.
    public internal(set) var meters: [PeerID: LevelBallistics] = [:]
    /// Everyone talking now (highlighted on stage), with their talk spurt.
    public internal(set) var talking: [PeerID: TalkSpurt] = [:]
    /// The peers whose talking comes from the sound (the levels of the packets received), not from the server's
    /// level reports.
    public internal(set) var heardPeers: Set<PeerID> = []
    /// When each person's last talk spurt ended, for line mode's "started speaking" gap.
    public internal(set) var lastSpurtEnded: [PeerID: Timestamp] = [:]
    /// The microphone's level for the invitation prompt's preview; `nil` when there is no capture device.
    public internal(set) var microphoneLevel: Int?
    /// Whether the microphone runs on silence: the one asked for could not be opened, or stopped working.
    public internal(set) var microphoneMissing = false
    /// The file this person plays into the room, and how far it is; nil when none plays.
    public internal(set) var playing: PlayingFile?
    /// The microphone preview while the invitation prompt is up: its live level, or why it cannot open.
    public internal(set) var preview: MicrophonePreview?
    /// Whether the sound was told to show the preview.
    public internal(set) var previewing = false
    /// What this client last told the server about its microphone working, in this session (`nil`: nothing yet).
    var micReported: Bool?
    /// Whether the sound has said how the microphone opened (`.microphoneMissing`): until then the client does
    /// not know that it works, and does not tell the server so.
    var microphoneTried = false
    /// What line mode's microphone check has said for the invitation that is up (`nil`: nothing yet).
    var microphoneCheckSaid: MicrophoneCheck?
    /// The microphone speaking would use, as the person chose it (`--input`), for the invitation prompt.
    public internal(set) var microphoneName: String?
    /// The connection's latest ping round-trip time in milliseconds; `nil` until measured, and again while
    /// reconnecting.
    public internal(set) var roundTripMilliseconds: Int?
    /// How loud each person sounds to this person, in percent (0–200), by identity; 100 % is not listed.
    /// Local: set with `+`/`-` or `/volume`, kept by the runtime across sessions, never sent to the server.
    public internal(set) var volumes: [PeerID: Int] = [:]
    /// When the last space press arrived, to tell a held key's repeats from a new tap.
    public internal(set) var lastSpaceAt: Timestamp?
    /// The screen's size, for moving by rows and scrolling help.
    public internal(set) var screenWidth = 80
    public internal(set) var screenHeight = 24
    /// The clock of the last action, in milliseconds since the Unix epoch.
    public internal(set) var now: Timestamp = 0
    /// When line mode last said reactions (see `Narration.reactionPause`).
    var reactionSaidAt: Timestamp?
    /// Set once the connection is over for good; the screen stays up to say why.
    public internal(set) var sessionOver = false
    /// Why the session ended before the room could be shown; the program then fails with these words.
    public internal(set) var failure: String?
    /// Set once the person chose to leave; the runtime then closes the session.
    public internal(set) var leaving = false
    /// Set when the input ended before the room was joined: the person leaves as soon as the room answers, so a
    /// failure to connect is still reported.
    public internal(set) var leaveOnJoin = false
    /// The room as it was when the connection dropped, to say what changed on return.
    public internal(set) var beforeDrop: RoomState?
    /// When the connection dropped (set with `beforeDrop`): the server keeps the place for `Narration.placeKept`
    /// from about then.
    public internal(set) var droppedAt: Timestamp?
    /// People who were here before the connection dropped and were not back in the room it returned to, by name,
    /// until this time (the server's reconnect grace): one who rejoins is said to be back, and those still away
    /// when it passes are said to have left, once (a restart of the server drops everyone at once).
    public internal(set) var quietRejoins: (peers: [PeerID: String], until: Timestamp) = ([:], 0)
    /// When the people missing since a reconnect are to be said to have left (a tick at that time says it); nil
    /// when nobody is missing.
    public var awayEnds: Timestamp? { quietRejoins.peers.isEmpty ? nil : quietRejoins.until }
    /// Whether this person was told that their own connection is poor, until it recovers (said once each way).
    public internal(set) var connectionPoor = false
    /// The last sentence said in line mode, so a line is never said twice in a row.
    public internal(set) var lastSaid: String?
    /// The last role change applied (peer, actor), so the mute that comes with it is not told as a second line.
    var lastRoleChange: (peer: PeerID, by: PeerID?)?
    /// What the sound was last told about the microphone; `nil` until the person is in the room.
    public internal(set) var microphone: MicrophoneState?
    /// Bumped by every applied event that can move people between or within sections (not levels, not chat).
    public internal(set) var sectionsVersion: UInt64 = 0
    /// The audience names the screen is given: a window around the selection, kept between frames so a level
    /// update does not copy hundreds of names (see `RoomScreenMapper.audienceWindow`).
    public internal(set) var audienceWindow = AudienceWindow()
    /// Bumped by every change that can alter the screen, so the runtime skips redrawing when nothing changed.
    public internal(set) var revision: UInt64 = 0

    /// Whether the screen draws with ASCII only (`--ascii`); layout widths depend on it.
    public let ascii: Bool

    /// Whether this is line mode (`--plain`): sentences then name commands to type instead of keys.
    public let lineMode: Bool

    /// The room is `clubroom demo`'s: its server and cast run inside this program, so the room ends when the
    /// person leaves, and what it records and the links it makes last only as long as the demo. The dialogs and
    /// sentences that would promise more say so instead.
    public var inDemo = false

    /// A fresh state for a room with these roles.
    public init(roles: RoleTable, ascii: Bool = false, lineMode: Bool = false) {
        room = RoomState(roles: roles)
        self.ascii = ascii
        self.lineMode = lineMode
    }

    /// The characters the screen draws with.
    public var glyphs: Glyphs { ascii ? .ascii : .unicode }

    /// Whether the person may see the whole raised-hand queue (those who may invite or move people).
    public var seesWholeQueue: Bool {
        guard let me = room.me else { return false }
        return room.roles.can(me.role, .invite) || room.roles.can(me.role, .move)
    }

    /// Whether the room is over for this client.
    public var isOver: Bool { room.ending != nil }

    /// Whether the invitation prompt is up.
    public var showsInvitation: Bool { room.invitation != nil && !isOver }
}

/// A window of audience names and what it was taken for.
public struct AudienceWindow: Sendable, Equatable {
    /// The position of `names[0]` in the whole audience.
    public var start = 0
    public var names: [String] = []
    var key: Key?

    struct Key: Sendable, Equatable {
        var version: UInt64
        var center: Int
        var width: Int
        var height: Int
    }
}

/// Which section the selection was in, and at which position.
public struct SelectionAnchor: Sendable, Equatable {
    public var section: SectionName
    public var index: Int
}

/// A dialog over the room.
public enum AppOverlay: Sendable, Equatable {
    /// The key list; `scroll` is the first line shown.
    case help(scroll: Int)
    /// The actions offered for one peer.
    case actions(peer: PeerID, items: [PeerAction], selected: Int)
    /// A question before something that cannot be undone; `confirmSelected` is false (Cancel) at first.
    case confirm(Confirmable, confirmSelected: Bool)
    /// Each person's speaking time and turns (nil until the server answers), asked for last at `askedAt`.
    case stats(people: [SpeakingStat]?, askedAt: Timestamp)
}

/// Everything that can happen to the screen's state, in one closed enum.
public enum AppAction: Sendable, Equatable {
    /// A key the person pressed (or a resize, as `.resize`).
    case key(Key, at: Timestamp)
    /// A line typed in line mode (`--plain`), handled like the command line.
    case line(String, at: Timestamp)
    /// An event from the server (or the session's own connection events) with its sequence number.
    case server(ServerEvent, seq: UInt64, at: Timestamp)
    /// The room's role table, when the server sends its own; the room state starts over with it.
    case roles(RoleTable)
    /// Something the session says that is not a room event, e.g. "Eli declined your invitation".
    case notice(Notice, at: Timestamp)
    /// The session is over: the connection failed for good or closed, with why in plain words.
    case sessionEnded(String, at: Timestamp)
    /// The person's side asked to leave at once, without a question: the end of input or Ctrl-C in line mode,
    /// SIGTERM or SIGHUP, or the program that shows the screen closing it.
    case interrupted(at: Timestamp)
    /// The microphone's level for the invitation preview; `nil` when there is no capture device.
    case microphone(level: Int?)
    /// Whether the microphone runs on silence (it could not be opened, or stopped working).
    case microphoneMissing(Bool)
    /// The connection's ping round-trip time in milliseconds, for the header.
    case roundTrip(milliseconds: Int)
    /// The microphone preview's level, or why it cannot open (after `.startPreview`).
    case preview(MicrophonePreview)
    /// The microphone speaking would use, by the name the person gave (`--input`).
    case microphoneName(String)
    /// Who the sound hears talking, from the level of every packet received: each speaker heard, whether they
    /// talk now and how loud (0–100).
    case heard([HeardPeer], at: Timestamp)
    /// The input ended (line mode): leave, but only once the room answered, so a failure to connect is said.
    case inputEnded(at: Timestamp)
    /// The local volumes kept from earlier sessions, in percent by identity.
    case volumes([PeerID: Int])
    /// What the sound says about the file this person plays into the room.
    case filePlay(FilePlayReport)
    /// The screen's size changed.
    case resize(width: Int, height: Int)
    /// Time passed (for waiting times, level meters and notices).
    case tick(Timestamp)
}

/// Work for the runtime after a reduce.
public enum AppEffect: Sendable, Equatable {
    /// Send a request to the server (`.leave` closes the session too).
    case send(ClientRequest)
    /// Close the session and end the program.
    case quit
    /// A sentence for line mode (`--plain`): an event, a refusal, a notice.
    case say(String)
    /// Something for the client's sound to do.
    case sound(SoundCommand)
    /// Ring the terminal bell once.
    case bell
    /// Stop the program for the shell's job control (Ctrl-Z), giving the terminal back until it continues.
    case suspend
    /// Try the connection again now instead of waiting for the next try.
    case retryNow
}

/// One talk spurt: when it began, when the person was last heard in it, and how loud they are now (0–100; 0
/// while a pause is held).
public struct TalkSpurt: Sendable, Equatable {
    public var since: Timestamp
    public var lastHeard: Timestamp
    public var level: Int
}

/// One speaker as the sound hears them.
public struct HeardPeer: Sendable, Equatable {
    public var peer: PeerID
    /// 0–100.
    public var level: Int
    /// Whether they are talking now (the sound's own hold already applied).
    public var talking: Bool

    public init(peer: PeerID, level: Int, talking: Bool) {
        self.peer = peer
        self.level = level
        self.talking = talking
    }
}

/// Which happenings ring the bell and mark the status line (`/notify`).
public struct NotifySettings: Sendable, Equatable {
    /// A direct message to you.
    public var messages = true
    /// A new raised hand, for those who run the stage.
    public var hands = true
    /// Whether those ring the terminal bell (the status line is marked either way).
    public var bell = true

    public init() {}
}
