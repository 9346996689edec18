/// Everything the room screen shows, in display terms. The client maps its room state to this; the screen is a
/// pure function of it (`RoomScreen.render`).
public struct RoomScreenModel: Hashable, Sendable {
    /// The header line.
    public var header: Header
    /// Who is on stage, in display order.
    public var stage: [StageEntry]
    /// The raised-hand queue as this viewer may see it.
    public var hands: HandQueue
    /// Names of audience members to list, in display order, from position `audienceOffset` of the whole
    /// audience; may be fewer than `audienceCount`.
    public var audience: [String]
    /// The position of `audience[0]` in the whole audience, when only a window of a large audience is given.
    public var audienceOffset: Int
    /// How many people are in the audience.
    public var audienceCount: Int
    /// The status line.
    public var status: StatusLine
    /// Chat messages and room events, oldest first; the screen shows the newest that fit above `chatScroll`.
    public var chat: [ChatLine]
    /// Whether the chat and event pane is shown.
    public var chatVisible: Bool
    /// How many of the newest chat lines are scrolled out of view below (0 shows the newest).
    public var chatScroll: Int
    /// Lines that arrived while scrolled up, counted at the bottom of the pane.
    public var linesBelow: Int
    /// Pending invitations to speak, in the order they were sent, for those who run the stage.
    public var invitations: [InvitationEntry]
    /// The selected peer.
    public var selection: Selection
    /// A one-line notice or problem shown above the status line.
    public var notice: Notice?
    /// The command line, when open; it replaces the status line.
    public var commandLine: LineEditor?
    /// A dialog drawn over the room.
    public var overlay: Overlay?

    /// Creates a model; everything but the header is empty unless given.
    public init(
        header: Header, stage: [StageEntry] = [], hands: HandQueue = .full([]), audience: [String] = [],
        audienceOffset: Int = 0, audienceCount: Int? = nil, status: StatusLine, chat: [ChatLine] = [],
        chatVisible: Bool = false, chatScroll: Int = 0, linesBelow: Int = 0, invitations: [InvitationEntry] = [],
        selection: Selection = .none, notice: Notice? = nil, commandLine: LineEditor? = nil, overlay: Overlay? = nil
    ) {
        self.header = header
        self.stage = stage
        self.hands = hands
        self.audience = audience
        self.audienceOffset = audienceOffset
        self.audienceCount = audienceCount ?? (audienceOffset + audience.count)
        self.status = status
        self.chat = chat
        self.chatVisible = chatVisible
        self.chatScroll = chatScroll
        self.linesBelow = linesBelow
        self.invitations = invitations
        self.selection = selection
        self.notice = notice
        self.commandLine = commandLine
        self.overlay = overlay
    }

    /// The header: room, topic, head count and connection.
    public struct Header: Hashable, Sendable {
        /// The room's name.
        public var room: String
        /// The room's topic; empty for none.
        public var topic: String
        /// Everyone in the room.
        public var peopleCount: Int
        /// The connection to the server.
        public var connection: Connection
        /// Whether the room is being recorded: the header shows `● REC` (`[REC]` in ASCII) for everyone.
        public var recording: Bool
        /// Whether the room streams live: the header shows `● LIVE` (`[LIVE]` in ASCII) for everyone.
        public var streaming: Bool

        /// Creates a header.
        public init(
            room: String, topic: String = "", peopleCount: Int, connection: Connection, recording: Bool = false,
            streaming: Bool = false
        ) {
            self.streaming = streaming
            self.room = room
            self.topic = topic
            self.peopleCount = peopleCount
            self.connection = connection
            self.recording = recording
        }
    }

    /// The state of the connection to the server.
    public enum Connection: Hashable, Sendable {
        /// Connecting for the first time.
        case connecting
        /// Connected; the round-trip time in milliseconds when measured.
        case connected(roundTripMilliseconds: Int?)
        /// Lost and trying again.
        case reconnecting(attempt: Int)
        /// Gone for good.
        case disconnected
    }

    /// A role as the screen shows it.
    public enum Role: String, Hashable, Sendable, CaseIterable {
        /// Runs the room.
        case host
        /// Helps run the room.
        case moderator
        /// On stage.
        case speaker
        /// Listening.
        case audience
    }

    /// One person on stage.
    public struct StageEntry: Hashable, Sendable {
        /// The display name.
        public var name: String
        /// The role, shown as a badge.
        public var role: Role
        /// Whether their microphone is muted.
        public var muted: Bool
        /// Their audio level, 0–100, with rise, hold and fall already applied.
        public var level: Int
        /// Whether they are the one speaking now.
        public var speaking: Bool
        /// How loud they sound to the viewer, in percent, when not 100 (shown as `70%` after the microphone).
        public var volume: Int?
        /// Their network quality, 0 (no media) to 5, shown as signal bars after the name; nil until measured.
        public var signal: Int?
        /// Whether their connection is marked as poor (for hosts and moderators).
        public var poor: Bool
        /// Whether their microphone does not work, as their client told the server: nobody hears them.
        public var micFailed: Bool
        /// Whether they play a file into the room (♪ just before the name).
        public var playing: Bool
        /// The reaction they just sent (`👏`, or `[clap]` in ASCII), shown after the name for a few seconds.
        public var reaction: String?

        /// Creates a stage entry.
        public init(
            name: String, role: Role, muted: Bool = false, level: Int = 0, speaking: Bool = false, volume: Int? = nil,
            signal: Int? = nil, poor: Bool = false, micFailed: Bool = false, playing: Bool = false,
            reaction: String? = nil
        ) {
            self.playing = playing
            self.name = name
            self.role = role
            self.muted = muted
            self.level = level
            self.speaking = speaking
            self.volume = volume
            self.signal = signal
            self.poor = poor
            self.micFailed = micFailed
            self.reaction = reaction
        }
    }

    /// One raised hand.
    public struct HandEntry: Hashable, Sendable {
        /// The place in the queue, from 1.
        public var position: Int
        /// The display name.
        public var name: String
        /// How long the hand has been up, in seconds.
        public var waitingSeconds: Int
        /// Whether an invitation to speak is out for them (shown in place of the waiting time).
        public var invited: Bool

        /// Creates a hand entry.
        public init(position: Int, name: String, waitingSeconds: Int, invited: Bool = false) {
            self.position = position
            self.name = name
            self.waitingSeconds = waitingSeconds
            self.invited = invited
        }
    }

    /// A pending invitation to speak: who, by whom, and how long ago.
    public struct InvitationEntry: Hashable, Sendable {
        /// The invitee's name.
        public var name: String
        /// The sender's name ("you" for the viewer).
        public var by: String
        /// How long ago it was sent, in seconds.
        public var seconds: Int

        /// Creates an invitation entry.
        public init(name: String, by: String, seconds: Int) {
            self.name = name
            self.by = by
            self.seconds = seconds
        }
    }

    /// The raised-hand queue: hosts and moderators see all of it, others only their own place.
    public enum HandQueue: Hashable, Sendable {
        /// Every raised hand, in queue order.
        case full([HandEntry])
        /// How many hands are up and, when the viewer's is among them, its place (from 1).
        case ownPlace(position: Int?, total: Int)

        /// How many hands are up.
        public var count: Int {
            switch self {
            case .full(let entries): return entries.count
            case .ownPlace(_, let total): return total
            }
        }
    }

    /// The status line: who you are and what you can do.
    public struct StatusLine: Hashable, Sendable {
        /// Your display name.
        public var name: String
        /// Your role.
        public var role: Role
        /// Your microphone: nil for listeners, who have none open.
        public var micMuted: Bool?
        /// Whether your microphone runs on silence (none could be opened): others hear nothing, muted or not.
        public var micMissing: Bool
        /// Whether your hand is up.
        public var handRaised: Bool
        /// Whether raising hands is turned off in the room.
        public var handsOff = false
        /// Whether the room is over for you (it ended or you were removed): no role keys apply any more.
        public var roomOver: Bool
        /// Whether the connection is down and being tried again.
        public var reconnecting: Bool
        /// What rang (a direct message, a new raised hand), marked until you press a key.
        public var alert: String?
        /// The file you play into the room and how far it is ("“Intro” 0:12 / 0:30"), after who you are.
        public var playing: String?
        /// The keys that apply to you now, most important first; those that do not fit are left out from the end.
        public var hints: [KeyHint]
        /// Your own network quality, 0 (no media) to 5; nil until measured.
        public var signal: Int?

        /// Creates a status line.
        public init(
            name: String, role: Role, micMuted: Bool? = nil, micMissing: Bool = false, handRaised: Bool = false,
            roomOver: Bool = false, reconnecting: Bool = false, alert: String? = nil, hints: [KeyHint] = []
        ) {
            self.name = name
            self.role = role
            self.micMuted = micMuted
            self.micMissing = micMissing
            self.handRaised = handRaised
            self.roomOver = roomOver
            self.reconnecting = reconnecting
            self.alert = alert
            self.hints = hints
        }
    }

    /// One line of the chat and event pane.
    public enum ChatLine: Hashable, Sendable {
        /// A chat message; `to` says where it went when not to everyone ("you", a person, "speakers").
        case message(from: String, text: String, to: String?)
        /// A room event in words: joins, role changes, moderation.
        case event(String)
        /// A notice that was shown above the status line, kept whole here.
        case notice(String, isError: Bool)
    }

    /// Which peer is selected.
    public enum Selection: Hashable, Sendable {
        /// Nobody.
        case none
        /// The stage entry at this index.
        case stage(Int)
        /// The raised hand at this index (of `HandQueue.full`).
        case hand(Int)
        /// The audience member at this position of the whole audience.
        case audience(Int)
    }

    /// A notice in the line above the status line.
    public struct Notice: Hashable, Sendable {
        /// What happened and what to do next, in plain words.
        public var text: String
        /// Whether it is a problem.
        public var isError: Bool

        /// Creates a notice.
        public init(_ text: String, isError: Bool = false) {
            self.text = text
            self.isError = isError
        }
    }

    /// A dialog over the room.
    public enum Overlay: Hashable, Sendable {
        /// The key list: each key or command as typed and what it does, or (with an empty key) a heading or a
        /// blank line; `scroll` is the first line shown.
        case help(lines: [KeyHint], scroll: Int)
        /// An invitation to speak.
        case invitation(Invitation)
        /// A question before a destructive action.
        case confirmation(Confirmation)
        /// The actions offered for the selected peer.
        case actions(ActionMenu)
        /// Each person's speaking time and turns (hosts and moderators).
        case stats(SpeakingTable)
    }

    /// An invitation to speak, with a preview of the microphone level.
    public struct Invitation: Hashable, Sendable {
        /// Who invited you.
        public var from: String
        /// The microphone speaking would use, by the name the person gave it; nil when not known.
        public var micName: String?
        /// Your microphone's level, 0–100; nil while it is opening or when it cannot open.
        public var micLevel: Int?
        /// Why the microphone cannot open, in one sentence; nil when it can (or is still opening).
        public var micProblem: String?
        /// How long until the invitation lapses, in seconds.
        public var secondsLeft: Int?
        /// Whether "accept" (rather than "decline") is chosen.
        public var acceptSelected: Bool
        /// Whether the room is being recorded: the prompt says that what the person says on stage is kept.
        public var recorded: Bool
        /// Whether the room streams live: the prompt says that what the person says on stage goes out live.
        public var streamed: Bool

        /// Creates an invitation.
        public init(
            from: String, micName: String? = nil, micLevel: Int?, micProblem: String? = nil,
            secondsLeft: Int? = nil, acceptSelected: Bool = true, recorded: Bool = false, streamed: Bool = false
        ) {
            self.streamed = streamed
            self.recorded = recorded
            self.from = from
            self.micName = micName
            self.micLevel = micLevel
            self.micProblem = micProblem
            self.secondsLeft = secondsLeft
            self.acceptSelected = acceptSelected
        }
    }

    /// A confirmation that says what will happen.
    public struct Confirmation: Hashable, Sendable {
        /// The question, e.g. "Remove Eli?".
        public var title: String
        /// What will happen, in plain words.
        public var message: String
        /// The label of the button that goes ahead, e.g. "Remove".
        public var confirmLabel: String
        /// Whether the go-ahead button (rather than "Cancel") is chosen.
        public var confirmSelected: Bool

        /// Creates a confirmation; "Cancel" is chosen unless said otherwise, so Enter alone is safe.
        public init(title: String, message: String, confirmLabel: String, confirmSelected: Bool = false) {
            self.title = title
            self.message = message
            self.confirmLabel = confirmLabel
            self.confirmSelected = confirmSelected
        }
    }

    /// The actions for one peer.
    public struct ActionMenu: Hashable, Sendable {
        /// Whose actions these are.
        public var peerName: String
        /// The actions, each with the key that does it directly (e.g. `("i", "Invite to speak")`).
        public var items: [KeyHint]
        /// The chosen item.
        public var selected: Int

        /// Creates an action menu.
        public init(peerName: String, items: [KeyHint], selected: Int = 0) {
            self.peerName = peerName
            self.items = items
            self.selected = selected
        }
    }
}
