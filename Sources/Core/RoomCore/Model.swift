/// A peer's stable identity: the `sub` claim of its token. Never shown as a name. Every format writes it as its
/// bare string (the control protocol's `ControlCodec`, the cluster's `ClusterFormat`).
public struct PeerID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Byte order of the UTF-8 form: deterministic and independent of locale.
    public static func < (lhs: PeerID, rhs: PeerID) -> Bool {
        compareUTF8(lhs.rawValue, rhs.rawValue) < 0
    }

    public var description: String { rawValue }
}

/// The name of a role in the role table (`host`, `moderator`, `speaker`, `audience` by default).
public struct RoleName: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Runs the room; every role table must define it.
    public static let host: RoleName = "host"
    /// Co-host: everything a host does except ending the room, in the default table.
    public static let moderator: RoleName = "moderator"
    /// On stage, may publish audio.
    public static let speaker: RoleName = "speaker"
    /// Listens, raises a hand, chats; every role table must define it, and it is off stage.
    public static let audience: RoleName = "audience"
    /// Keeps the room (a recording): listens, never speaks, holds no permission, cannot be invited, moved or put on
    /// the stage, and is not listed in the audience. A role table without it gets it (`RoleTable.parse`).
    public static let recorder: RoleName = "recorder"

    public var description: String { rawValue }
}

/// Something a role may do. The raw value is the wire and `roles.json` spelling.
public enum Permission: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case publishAudio = "publish_audio"
    case raiseHand = "raise_hand"
    case chat
    case invite
    case move
    case muteOthers = "mute_others"
    case remove
    case setTopic = "set_topic"
    case endRoom = "end_room"
    case record
    case stream

    /// What holding the permission lets a person do, for refusals: "only hosts can *end the room*".
    public var phrase: String {
        switch self {
        case .publishAudio: "speak"
        case .raiseHand: "raise a hand"
        case .chat: "chat"
        case .invite: "invite people to speak"
        case .move: "move people between roles"
        case .muteOthers: "mute others"
        case .remove: "remove people"
        case .setTopic: "set the topic"
        case .endRoom: "end the room"
        case .record: "start and stop recording"
        case .stream: "start and stop streaming the room"
        }
    }

    public var description: String { rawValue }
}

/// Milliseconds since the Unix epoch. The reducer never reads a clock: times arrive in events and ticks.
public typealias Timestamp = Int64

/// The one rule for display names, used by client and server alike.
public enum DisplayName {
    /// The longest name, in grapheme clusters (what a person sees as characters).
    public static let maxGraphemes = 64
    /// The most Unicode scalars kept in one grapheme cluster, so stacked combining marks cannot grow a name.
    public static let maxScalarsPerGrapheme = 8

    /// Any Unicode is welcome, but control and bidirectional-override characters are dropped, runs of
    /// whitespace become one space, the ends are trimmed, and the result is cut to `maxGraphemes`.
    /// May return an empty string; the caller decides what an empty name means.
    public static func sanitize(_ raw: String) -> String {
        sanitizeLine(raw, maxGraphemes: maxGraphemes)
    }

    /// The same rules for any one line of text shown on screen (chat, topics, reasons): nothing in it can
    /// move the cursor, change colours or reorder the line, and it is cut to `maxGraphemes`.
    ///
    /// Cleaning twice gives what cleaning once gave: a cut never leaves a space at the end, and when a cluster cut
    /// to `maxScalarsPerGrapheme` joins the one after it, the result is cut again until it holds still.
    ///
    /// Text that is clean already (`isClean`) is returned as it is without being rebuilt, so the cleaning a decoder
    /// applies to every name of a 10,000-peer snapshot costs little.
    public static func sanitizeLine(_ raw: String, maxGraphemes: Int) -> String {
        if isClean(raw, maxGraphemes: maxGraphemes) { return raw }
        return rebuildLine(raw, maxGraphemes: maxGraphemes)
    }

    /// `sanitizeLine`'s rules applied scalar by scalar, without the quick check for text that is clean already;
    /// what the quick check is tested against.
    public static func rebuildLine(_ raw: String, maxGraphemes: Int) -> String {
        var cleaned = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in raw.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !cleaned.isEmpty
                continue
            }
            if isInvisibleControl(scalar) { continue }
            if pendingSpace {
                cleaned.append(" ")
                pendingSpace = false
            }
            cleaned.append(scalar)
        }
        var (result, cutCluster) = cut(String(cleaned), maxGraphemes: maxGraphemes)
        while cutCluster {
            let again = cut(result, maxGraphemes: maxGraphemes)
            if again.text == result { break }
            (result, cutCluster) = again
        }
        return result
    }

    /// Whether the rules give `raw` back unchanged, found without building anything: no more bytes than `maxGraphemes`
    /// (so no more clusters), single spaces between words and none at the ends, and only scalars that are a
    /// cluster of their own and are never dropped (no control, format or combining character, skin tone, regional
    /// indicator, Hangul jamo or other joining sign). Most names and lines are such.
    public static func isClean(_ raw: String, maxGraphemes: Int) -> Bool {
        guard raw.utf8.count <= maxGraphemes else { return false }
        var previousIsSpace = true
        for scalar in raw.unicodeScalars {
            let value = scalar.value
            if value == 0x20 {
                if previousIsSpace { return false }
                previousIsSpace = true
                continue
            }
            previousIsSpace = false
            if value > 0x20 && value < 0x7F { continue }
            if value < 0xA0 { return false }
            switch value {
            // Hangul jamo, regional indicators, skin tones, and the letters and signs outside the categories below
            // that join a neighbour's cluster (found by trying every scalar beside a letter and itself).
            case 0x1100...0x11FF, 0xA960...0xA97F, 0xD7B0...0xD7FF, 0x1F1E6...0x1F1FF, 0x1F3FB...0x1F3FF, 0x0D4E,
                0x0E33, 0x0EB3, 0xFF9E, 0xFF9F, 0x111C2, 0x111C3, 0x113D1, 0x1193F, 0x11941, 0x11A84...0x11A89,
                0x11D46, 0x11F02:
                return false
            default: break
            }
            let properties = scalar.properties
            if properties.isWhitespace { return false }
            switch properties.generalCategory {
            case .control, .format, .nonspacingMark, .spacingMark, .enclosingMark, .lineSeparator,
                .paragraphSeparator, .surrogate, .unassigned:
                return false
            default: break
            }
        }
        return !previousIsSpace || raw.isEmpty
    }

    /// The first `maxGraphemes` clusters, each cut to `maxScalarsPerGrapheme`, without a space at the end; and
    /// whether a cluster was cut (its rest can join the next cluster, so the result needs another look).
    private static func cut(_ text: String, maxGraphemes: Int) -> (text: String, cutCluster: Bool) {
        var result = ""
        var count = 0
        var cutCluster = false
        for grapheme in text {
            if count >= maxGraphemes { break }
            let scalars = grapheme.unicodeScalars
            if scalars.count > maxScalarsPerGrapheme {
                result.unicodeScalars.append(contentsOf: scalars.prefix(maxScalarsPerGrapheme))
                cutCluster = true
            } else {
                result.append(grapheme)
            }
            count += 1
        }
        while result.unicodeScalars.last == " " { result.unicodeScalars.removeLast() }
        return (result, cutCluster)
    }

    /// Whether a scalar is one the rules drop: a control character (C0, DEL, C1), a line or paragraph separator,
    /// or a format character that reorders a line or is an invisible space (bidi marks, embeddings, overrides and
    /// isolates, zero-width and word-joiner spaces, the byte-order mark). Identities may hold none of them.
    public static func isInvisibleControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        case .format:
            // Bidi marks, embeddings, overrides and isolates can reorder the rest of a line on screen, and
            // invisible spaces make blank names. Zero-width joiners stay: emoji sequences need them.
            switch scalar.value {
            case 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2069, 0xFEFF: return true
            default: return false
            }
        default: return false
        }
    }
}

/// A person (or bot) in a room.
public struct Peer: Sendable, Equatable, Identifiable {
    /// Stable identity from the token.
    public let id: PeerID
    /// Display name, already sanitized with `DisplayName.sanitize`.
    public var name: String
    public var role: RoleName
    public var muted: Bool
    /// When the hand went up; `nil` when it is down. The raised-hand queue orders by it.
    public var handRaisedAt: Timestamp?
    public var joinedAt: Timestamp
    /// Audio level 0 (silent) to 100 (loudest), as last reported by the server.
    public var level: Int {
        didSet { level = Peer.clampLevel(level) }
    }
    /// Free-form key/value pairs from the token or the server (e.g. `"bot": "true"`).
    public var metadata: [String: String]
    /// Whether the person's microphone works, as their client last told the server: false when it could not be
    /// opened or was lost, so the stage can say that nobody hears them.
    public var micWorking: Bool
    /// Whether they are playing a file into the room (shown as ♪ beside their name).
    public var playing: Bool

    public init(
        id: PeerID, name: String, role: RoleName = .audience, muted: Bool = true, handRaisedAt: Timestamp? = nil,
        joinedAt: Timestamp = 0, level: Int = 0, metadata: [String: String] = [:], micWorking: Bool = true,
        playing: Bool = false
    ) {
        self.playing = playing
        self.id = id
        self.name = DisplayName.sanitize(name)
        self.role = role
        self.muted = muted
        self.handRaisedAt = handRaisedAt
        self.joinedAt = joinedAt
        self.level = Peer.clampLevel(level)
        self.metadata = metadata
        self.micWorking = micWorking
    }

    /// How long the hand has been up at `now`, in milliseconds; `nil` when the hand is down.
    public func waitingTime(now: Timestamp) -> Int64? {
        handRaisedAt.map { max(0, now - $0) }
    }

    static func clampLevel(_ level: Int) -> Int { min(100, max(0, level)) }
}

/// Who a chat message is for.
public enum ChatAudience: Sendable, Equatable, Hashable {
    case everyone
    /// A direct message to one peer.
    case peer(PeerID)
    /// Everyone holding a role, e.g. the moderators' back channel.
    case role(RoleName)
}

/// One chat line as the server relayed it.
public struct ChatMessage: Sendable, Equatable {
    /// The longest message in characters; longer text is refused before it is sent.
    public static let maxLength = 2000

    public var from: PeerID
    /// The sender's name when it was sent, so the line still reads well after they leave.
    public var fromName: String
    public var text: String
    public var to: ChatAudience
    public var sentAt: Timestamp

    /// Cleans the name and text with `DisplayName`'s rules, so a message can never carry terminal controls.
    public init(from: PeerID, fromName: String, text: String, to: ChatAudience = .everyone, sentAt: Timestamp) {
        self.from = from
        self.fromName = DisplayName.sanitize(fromName)
        self.text = DisplayName.sanitizeLine(text, maxGraphemes: ChatMessage.maxLength)
        self.to = to
        self.sentAt = sentAt
    }

}

/// Everything a client needs when it joins (or rejoins) a room.
public struct RoomSnapshot: Sendable, Equatable {
    public var roomID: String
    public var topic: String
    /// The receiving client's own identity.
    public var selfID: PeerID
    public var peers: [Peer]
    /// The most recent chat, oldest first.
    public var recentChat: [ChatMessage]
    public var ended: Bool
    /// The sequence number of the last event this snapshot includes; later events continue from it.
    public var seq: UInt64
    /// The pending invitations to speak, by invitee (the receiving client's own among them).
    public var invitations: [PeerID: Invitation]
    /// The role the receiving client may take back itself (it stepped down from it, and its token allows it).
    public var stepUp: RoleName?
    /// The role the receiving client's token gives: the most it may take back itself after stepping down.
    public var tokenRole: RoleName?
    /// Whether the room shows in the lobby.
    public var listed: Bool
    /// The room's recording, when it is being recorded.
    public var recording: RecordingState?
    /// Where the room streams live, when it does.
    public var streaming: StreamingState?
    /// The server's stream destinations, told to those who may start a stream (empty for everyone else).
    public var streamDestinations: [String]
    /// The room's end, when its last host left and it ends unless a host returns.
    public var hostlessEnding: HostlessEnding?
    /// Whether raising hands is on in the room.
    public var handsAllowed: Bool

    public init(
        roomID: String, topic: String = "", selfID: PeerID, peers: [Peer], recentChat: [ChatMessage] = [],
        ended: Bool = false, seq: UInt64, invitations: [PeerID: Invitation] = [:], stepUp: RoleName? = nil,
        tokenRole: RoleName? = nil, listed: Bool = true, recording: RecordingState? = nil,
        streaming: StreamingState? = nil, streamDestinations: [String] = [], hostlessEnding: HostlessEnding? = nil,
        handsAllowed: Bool = true
    ) {
        self.hostlessEnding = hostlessEnding
        self.handsAllowed = handsAllowed
        self.recording = recording
        self.streaming = streaming
        self.streamDestinations = streamDestinations
        self.roomID = roomID
        self.topic = topic
        self.selfID = selfID
        self.peers = peers
        self.recentChat = recentChat
        self.ended = ended
        self.seq = seq
        self.invitations = invitations
        self.stepUp = stepUp
        self.tokenRole = tokenRole
        self.listed = listed
    }

    /// Who invited the receiving client to speak, while that invitation is pending.
    public var invitedBy: PeerID? { invitations[selfID]?.by }
}
