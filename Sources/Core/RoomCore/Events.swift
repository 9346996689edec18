/// One peer's audio level in a `speakers` update.
public struct SpeakerLevel: Sendable, Equatable {
    public var peer: PeerID
    /// 0 (silent) to 100 (loudest); values outside are clamped when applied.
    public var level: Int

    public init(peer: PeerID, level: Int) {
        self.peer = peer
        self.level = level
    }
}

/// One peer's network quality in a `network_quality` update (docs/media.md gives the formula of the score).
public struct PeerQuality: Sendable, Equatable {
    public var peer: PeerID
    /// 0 (no media) to 5 (perfect).
    public var score: Int
    /// The share of the peer's audio lost, in percent (0–100): the worse of what the server receives from them and
    /// what they report receiving.
    public var lossPercent: Int
    public var jitterMilliseconds: Int
    /// The round trip between the peer and the server; 0 until measured.
    public var rttMilliseconds: Int

    /// The highest score, and the score at and below which a speaker's connection counts as poor.
    public static let best = 5
    public static let poor = 2
    /// The score at and above which a connection that was poor counts as recovered: one step above poor would let
    /// a connection whose loss hovers near the line be said poor and recovered again every few seconds.
    public static let recovered = 4

    public init(peer: PeerID, score: Int, lossPercent: Int, jitterMilliseconds: Int, rttMilliseconds: Int) {
        self.peer = peer
        self.score = score
        self.lossPercent = lossPercent
        self.jitterMilliseconds = jitterMilliseconds
        self.rttMilliseconds = rttMilliseconds
    }

    /// Whether the connection is poor: a score of 1 or 2 (0 is no media at all, not a poor connection).
    public var isPoor: Bool { score >= 1 && score <= Self.poor }
}

/// Everything the server tells a client about its room, plus the three connection events the client's own
/// runtime reports (`reconnecting`, `reconnected`, `error`).
///
/// Server events travel with a per-room sequence number (see `RoomAction.server`); the connection events are
/// local and unsequenced.
public enum ServerEvent: Sendable, Equatable {
    /// The full state of the room on joining or rejoining; it carries the sequence number it reflects.
    case joined(RoomSnapshot)
    /// Someone joined; `invitation` is their invitation to speak when one is still pending (they came back
    /// within the reconnect grace).
    case peerJoined(Peer, invitation: Invitation? = nil)
    case peerLeft(PeerID)
    /// `by` is the actor who made the change (`nil` when the server did it). `stepUp` is the role the peer may
    /// take back themself afterwards (they stepped down from it, and their token allows it), when there is one.
    case roleChanged(PeerID, to: RoleName, by: PeerID?, stepUp: RoleName? = nil)
    case handRaised(PeerID, at: Timestamp)
    case handLowered(PeerID, by: PeerID?)
    case muteChanged(PeerID, muted: Bool, by: PeerID?)
    /// A person's client said their microphone stopped working (could not open, was lost) or works again.
    case micChanged(PeerID, working: Bool)
    /// `peer` started or stopped playing a file into the room.
    case playingChanged(PeerID, playing: Bool)
    /// Levels that changed, and how loud; peers not listed keep their level (the server sends only changes).
    case speakers([SpeakerLevel])
    case chat(ChatMessage)
    /// `peer` is invited onto the stage by `by` at `at`; when `peer` is this client, it may accept or decline.
    case invited(PeerID, by: PeerID, at: Timestamp)
    /// `peer` declined their invitation to speak.
    case inviteDeclined(PeerID)
    /// `peer`'s invitation to speak was taken back by `by`.
    case inviteWithdrawn(PeerID, by: PeerID?)
    /// `peer`'s invitation to speak lapsed unanswered.
    case inviteExpired(PeerID)
    /// Someone asks this client to mute (they may not be allowed to force it).
    case askedToMute(by: PeerID)
    /// A peer was removed from the room; when it is this client, the room is over for it.
    case removed(PeerID, reason: String, by: PeerID?)
    case roomEnded(reason: String)
    /// The last host (`peer`, `name`) left a room with no moderator: it ends at `at` unless a host returns;
    /// without `at`, a host (`peer`) is back and the room goes on.
    case roomEnding(PeerID, name: String, at: Timestamp?)
    case topicChanged(String, by: PeerID?)
    /// The room was listed in the lobby or taken out of it.
    case listingChanged(listed: Bool, by: PeerID?)
    /// Raising hands was turned on or off for the room.
    case handsAllowed(Bool, by: PeerID?)
    /// The room started being recorded (`recording` says by whom and since when), or stopped (nil): `by` is who
    /// stopped it and `reason` why, when it stopped on a fault.
    case recording(RecordingState?, by: PeerID?, reason: String?)
    /// The set of destinations the room streams to changed: `streaming` is where it goes now (nil: nowhere), `by`
    /// who changed it (nil on a fault) and `reason` why a destination stopped, when it stopped on a fault.
    case streaming(StreamingState?, by: PeerID?, reason: String?)
    /// The invite link this client asked for (not a room event: it comes without a sequence number).
    case inviteLink(InviteLink)
    /// The room's links (the answer to `/links`, `/revoke`, `/lock` and `/unlock`), with the ids just withdrawn
    /// and whether the room is locked to newcomers with links.
    case links([RoomLink], withdrawn: [String], locked: Bool)
    /// The server's bans (the answer to `/bans` and `/unban`), with the identities just lifted.
    case bans([RoomBan], lifted: [String])
    /// Each person's speaking time and turns since the room went live, most speaking time first (the answer to
    /// `/stats`; not a room event: it comes without a sequence number).
    case stats([SpeakingStat])
    /// Network quality scores that changed (not a room event: it comes without a sequence number, and an audience
    /// member's only to moderators and to themself).
    case networkQuality([PeerQuality])
    /// Someone waits at the locked room for a host to let them in, or stopped waiting (sent to the room's hosts
    /// and moderators, without a sequence number).
    case knock(Knock)
    /// This client waits at the locked room: connected, seeing nothing of the room until a host lets it in.
    case waitingForHost
    /// Reactions of the last moment, counted, with the first few senders named (not a room event: it comes
    /// without a sequence number, and is never saved).
    case reaction(ReactionBurst)
    /// The connection dropped and the runtime is trying again (attempt counts from 1); the next try is at
    /// `retryAt` (milliseconds since the Unix epoch, 0 when not known).
    case reconnecting(attempt: Int, retryAt: Timestamp = 0)
    /// The connection is back; a fresh `joined` snapshot follows.
    case reconnected
    /// The server refused a request or reported a failure.
    case error(code: String, message: String)

    /// Whether the event carries a room sequence number. Connection events are the client's own.
    public var isSequenced: Bool {
        switch self {
        case .reconnecting, .reconnected, .error, .inviteLink, .links, .bans, .networkQuality, .knock, .waitingForHost,
            .reaction:
            false
        case .stats: false
        default: true
        }
    }
}

/// A newcomer at a locked room's door, as its hosts and moderators hear of it: who, and what became of them.
public struct Knock: Sendable, Equatable {
    public enum State: String, Sendable, Equatable, CaseIterable {
        /// They wait for a host's answer (`/admit`, `/deny`).
        case waiting
        case admitted
        case denied
        /// They went away before anyone answered.
        case left
        /// No one answered in time (`timed_out`).
        case timedOut = "timed_out"
    }

    public var peer: PeerID
    public var name: String
    public var state: State
    /// Who admitted or turned them away.
    public var by: PeerID?

    public init(peer: PeerID, name: String, state: State, by: PeerID? = nil) {
        self.peer = peer
        self.name = name
        self.state = state
        self.by = by
    }
}

/// One identity banned from the server's rooms, as a host sees it in `/bans`.
public struct RoomBan: Sendable, Equatable {
    public var identity: PeerID
    /// The name they had in the room when banned; empty when unknown.
    public var name: String
    /// Who banned them; `operator` for the server's operator.
    public var by: PeerID
    /// When, in milliseconds since the epoch.
    public var at: Timestamp
    public var reason: String

    public init(identity: PeerID, name: String, by: PeerID, at: Timestamp, reason: String) {
        self.identity = identity
        self.name = name
        self.by = by
        self.at = at
        self.reason = reason
    }
}

/// One invite link of a room, as a host sees it in `/links`.
public struct RoomLink: Sendable, Equatable {
    /// The link's id (its invite's `jti`), which `/revoke ID` takes.
    public var id: String
    public var role: RoleName
    /// Who made it; empty for the server's operator.
    public var by: PeerID
    /// When it stops working, in milliseconds since the epoch.
    public var expiresAt: Timestamp
    /// How many people it let in, and how many it may (nil: no limit).
    public var uses: Int64
    public var maxUses: Int64?
    public var withdrawn: Bool

    public init(
        id: String, role: RoleName, by: PeerID, expiresAt: Timestamp, uses: Int64, maxUses: Int64?, withdrawn: Bool
    ) {
        self.id = id
        self.role = role
        self.by = by
        self.expiresAt = expiresAt
        self.uses = uses
        self.maxUses = maxUses
        self.withdrawn = withdrawn
    }
}

/// An invite link the server made for this client: the whole link to paste into a chat, for one role of one
/// room, and when it stops working.
public struct InviteLink: Sendable, Equatable {
    public var room: String
    public var role: RoleName
    /// The link itself, `wss://HOST/rooms/ROOM#invite=TOKEN` (docs/tokens.md).
    public var link: String
    /// When the link stops working, in milliseconds since the epoch.
    public var expiresAt: Timestamp

    public init(room: String, role: RoleName, link: String, expiresAt: Timestamp) {
        self.room = room
        self.role = role
        self.link = link
        self.expiresAt = expiresAt
    }
}

/// One person's speaking time and turns since the room went live, as hosts and moderators see them (`/stats`):
/// how long the server heard them speak and in how many turns (docs/protocol.md, "Speaking time").
public struct SpeakingStat: Sendable, Equatable {
    /// Who (their identity); they may have left since.
    public var peer: PeerID
    /// Their name when last in the room.
    public var name: String
    /// Speaking time in milliseconds (the wire carries seconds to a tenth).
    public var milliseconds: Int64
    /// Talk spurts: a pause of up to the server's hold belongs to the turn it interrupts.
    public var turns: Int
    /// Whether they are talking as the answer is made.
    public var talking: Bool

    public init(peer: PeerID, name: String, milliseconds: Int64, turns: Int, talking: Bool) {
        self.peer = peer
        self.name = name
        self.milliseconds = milliseconds
        self.turns = turns
        self.talking = talking
    }
}
