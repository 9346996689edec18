import RoomCore

/// The version of the JSON control protocol described in `docs/protocol.md`.
public let controlProtocolVersion: Int64 = 1

/// Bounds on the strings a control message may carry, counted in Unicode characters unless said otherwise.
public enum ControlLimits {
    /// The largest control message a client may send, in bytes; bigger ones close the connection with 1009.
    public static let maxFrameBytes = 64 * 1024
    /// The largest control message a client accepts from the server, in bytes. A `joined` snapshot lists every
    /// peer (about 130 bytes each), so a 10,000-peer room's is about 1.3 MB; this leaves room for ten times that.
    public static let maxServerMessageBytes = 16 * 1024 * 1024
    /// A peer identity, in UTF-8 bytes.
    public static let maxIdentityBytes = 128
    /// A display name after trimming.
    public static let maxNameCharacters = 64
    /// A role name, in UTF-8 bytes.
    public static let maxRoleBytes = 32
    /// A room topic.
    public static let maxTopicCharacters = 200
    /// A chat message.
    public static let maxChatCharacters = 2000
    /// The reason given for a removal or for ending a room.
    public static let maxReasonCharacters = 200
    /// A client's request id when it is a string, in UTF-8 bytes.
    public static let maxRequestIDBytes = 64
    /// Chat messages kept per room and sent to a joiner.
    public static let chatHistory = 200
}

/// The optional id a client puts on a request; the server echoes it in an `error` caused by that request.
public enum RequestID: Sendable, Hashable {
    case string(String)
    case integer(Int64)
}

extension ClientRequest {
    /// The value of the message's `type` field, which is also the audit log's name for the action.
    public var typeName: String {
        switch self {
        case .raiseHand: "raise_hand"
        case .lowerHand, .lowerHandOf: "lower_hand"
        case .clearHands: "clear_hands"
        case .setHandsAllowed: "set_hands_allowed"
        case .invite: "invite"
        case .acceptInvite: "accept_invite"
        case .declineInvite: "decline_invite"
        case .withdrawInvite: "withdraw_invite"
        case .setRole: "set_role"
        case .stepDown: "step_down"
        case .setMute: "set_mute"
        case .setMicWorking: "set_mic"
        case .setPlaying: "set_playing"
        case .mutePeer: "mute_peer"
        case .muteAll: "mute_all"
        case .remove: "remove"
        case .setTopic: "set_topic"
        case .endRoom: "end_room"
        case .chat: "chat"
        case .leave: "leave"
        case .setListed: "set_listed"
        case .createLink: "create_link"
        case .listLinks: "list_links"
        case .revokeLink: "revoke_link"
        case .listBans: "list_bans"
        case .unban: "unban"
        case .setLocked: "set_locked"
        case .admitWaiting: "admit"
        case .denyWaiting: "deny"
        case .react: "react"
        case .startRecording: "start_recording"
        case .stopRecording: "stop_recording"
        case .recorderError: "recorder_error"
        case .stats: "stats"
        case .startStream: "start_stream"
        case .stopStream: "stop_stream"
        case .streamStatus: "stream_status"
        }
    }

    /// Every request type name, in the order of `docs/protocol.md`.
    public static let typeNames: [String] = [
        "raise_hand", "lower_hand", "clear_hands", "set_hands_allowed", "invite", "accept_invite", "decline_invite",
        "withdraw_invite", "set_role", "step_down", "set_mute", "set_mic", "set_playing", "mute_peer", "mute_all",
        "remove", "set_topic", "end_room", "chat", "leave", "set_listed", "create_link", "list_links", "revoke_link",
        "set_locked", "list_bans", "unban", "admit", "deny", "react", "start_recording", "stop_recording",
        "recorder_error", "stats", "start_stream", "stop_stream", "stream_status",
    ]
}

/// A client's message: RoomCore's request and its optional id. The request is the model's own type: the
/// protocol has no second vocabulary for what a client may ask.
public struct ClientMessage: Sendable, Equatable {
    /// Echoed in an `error` this request causes.
    public var id: RequestID?
    /// What the client asks for.
    public var request: ClientRequest

    /// A message carrying `request`.
    public init(_ request: ClientRequest, id: RequestID? = nil) {
        self.request = request
        self.id = id
    }
}

/// A peer as the server announces it: RoomCore's `Peer`, its pending invitation to speak (the peer object's
/// `invited_by` and `invited_at`), which the room keeps beside its peers rather than on them, and, in a joiner's
/// own entry, the role it may take back itself (`step_up`).
public struct AnnouncedPeer: Sendable, Equatable {
    public var peer: Peer
    public var invitation: Invitation?
    public var stepUp: RoleName?

    public init(_ peer: Peer, invitation: Invitation? = nil, stepUp: RoleName? = nil) {
        self.peer = peer
        self.invitation = invitation
        self.stepUp = stepUp
    }

    /// Who invited the peer to speak, while that invitation is pending.
    public var invitedBy: PeerID? { invitation?.by }
}

/// The snapshot a joiner receives first.
public struct JoinedSnapshot: Sendable, Equatable {
    public var room: String
    /// The protocol version the server speaks.
    public var protocolVersion: Int64
    /// The joiner's own identity; the joiner is also in `peers`.
    public var selfID: PeerID
    public var peers: [AnnouncedPeer]
    public var topic: String
    /// The last chat messages (at most 200) this peer may read, oldest first.
    public var chat: [ChatMessage]
    /// The server's role table, checked on arrival by the same rules as a `roles.json` file.
    public var roles: RoleTable
    /// True when the server restored the joiner's role from a connection that dropped less than 60 s ago.
    public var resumed: Bool
    /// The role the joiner's token gives (`token_role`): the most it may take back itself after stepping down.
    public var tokenRole: RoleName?
    /// Whether the room shows in the lobby; a snapshot without the field (an older server) says it does.
    public var listed: Bool
    /// The room's recording while it is recorded (`recording`); nil when it is not.
    public var recording: RecordingState?
    /// Where the room streams live (`streaming`); nil when it does not.
    public var streaming: StreamingState?
    /// The server's stream destinations, for a joiner who may start a stream (`stream_destinations`); else empty.
    public var streamDestinations: [String]
    /// The room's end while its last host is gone and it ends unless a host returns (`ending`); else nil.
    public var ending: HostlessEnding?
    /// Whether raising hands is on (`hands_allowed`, sent only when it is off; absent, it is on).
    public var handsAllowed: Bool

    public init(
        room: String, protocolVersion: Int64 = controlProtocolVersion, selfID: PeerID, peers: [AnnouncedPeer],
        topic: String, chat: [ChatMessage], roles: RoleTable, resumed: Bool, tokenRole: RoleName? = nil,
        listed: Bool = true, recording: RecordingState? = nil, streaming: StreamingState? = nil,
        streamDestinations: [String] = [], ending: HostlessEnding? = nil, handsAllowed: Bool = true
    ) {
        self.ending = ending
        self.handsAllowed = handsAllowed
        self.recording = recording
        self.streaming = streaming
        self.streamDestinations = streamDestinations
        self.room = room
        self.protocolVersion = protocolVersion
        self.selfID = selfID
        self.peers = peers
        self.topic = topic
        self.chat = chat
        self.roles = roles
        self.resumed = resumed
        self.tokenRole = tokenRole
        self.listed = listed
    }
}

/// Why a peer left the room.
public enum LeaveReason: String, Sendable, Equatable, CaseIterable {
    /// The peer asked to leave.
    case left
    /// The connection dropped or timed out.
    case disconnected
}

/// A peer who left, and why: one entry of `peers_left`.
public struct Departure: Sendable, Equatable {
    public var peer: PeerID
    public var reason: LeaveReason

    public init(_ peer: PeerID, _ reason: LeaveReason) {
        self.peer = peer
        self.reason = reason
    }
}

/// The code of an `error` message. Unknown codes from a newer server are kept as they are.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The sender's role lacks the permission, or the target does not stand below the sender.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    /// The named peer is not in the room, or the named role does not exist.
    public static let notFound = ErrorCode(rawValue: "not_found")
    /// The request is valid but the room's state does not allow it now (hand already raised, no invitation…).
    public static let conflict = ErrorCode(rawValue: "conflict")
    /// A field is missing, of the wrong type, or out of bounds.
    public static let badRequest = ErrorCode(rawValue: "bad_request")
    /// The text is not JSON, or not a JSON object.
    public static let invalidJSON = ErrorCode(rawValue: "invalid_json")
    /// An object in the message has the same key twice.
    public static let duplicateKey = ErrorCode(rawValue: "duplicate_key")
    /// The message's `type` is not one this protocol version knows.
    public static let unknownType = ErrorCode(rawValue: "unknown_type")
    /// The message's `v` is not a version the server speaks.
    public static let unsupportedVersion = ErrorCode(rawValue: "unsupported_version")
    /// The connection sent more than its rate allows; the message was dropped.
    public static let rateLimited = ErrorCode(rawValue: "rate_limited")
    /// The room has ended.
    public static let roomEnded = ErrorCode(rawValue: "room_ended")
    /// The room holds its maximum number of peers.
    public static let roomFull = ErrorCode(rawValue: "room_full")
    /// The server failed; the request may be retried.
    public static let `internal` = ErrorCode(rawValue: "internal")
    /// The request took effect in the room, but the server could not save it (a full disk, say): it is lost if
    /// the server stops before it can write again.
    public static let notSaved = ErrorCode(rawValue: "not_saved")
    /// The server could not learn whether the request took effect (a cluster lost touch with the node deciding
    /// it): it may have, or may still appear. Sending it again under the same `id` is safe.
    public static let unconfirmed = ErrorCode(rawValue: "unconfirmed")
    /// A request with this `id` from the same identity took effect already: this repeat changed nothing.
    public static let alreadyApplied = ErrorCode(rawValue: "already_applied")
    /// Without an `id`, a notice to a room's hosts rather than an answer: the server saves again what happens in
    /// the room, after it told them (`not_saved`, without an `id`) that it could not.
    public static let saved = ErrorCode(rawValue: "saved")
    /// Without an `id`, a notice to a room's hosts and moderators rather than an answer: the server's recorder stopped
    /// or could not start, and why, a sentence ("The recorder keeps failing at once (it exited with status 1); the
    /// recording stopped.").
    public static let recording = ErrorCode(rawValue: "recording")
    /// Without an `id`, a notice to a room's hosts rather than an answer: how one of the room's streams goes, a
    /// sentence per change ("Streaming to radio stopped: the server refused the password.").
    public static let stream = ErrorCode(rawValue: "stream")
}

/// Something the server tells a client: the protocol's event messages, each carrying RoomCore's values
/// (identities, roles, peers, chat, levels), so the wire adds only its framing and the facts RoomCore's client
/// state has no place for (why a peer left, who is invited, the request id of an error).
public enum WireEvent: Sendable, Equatable {
    case joined(JoinedSnapshot)
    case peerJoined(AnnouncedPeer)
    /// Several joins announced at once, in order; with `seq` S and k peers, the i-th (from 0) has number
    /// S − k + 1 + i. The server sends it when people join faster than it announces them one by one.
    case peersJoined([AnnouncedPeer])
    case peerLeft(peer: PeerID, reason: LeaveReason)
    /// Several departures announced at once, in order, numbered as in `peersJoined`. The server sends it when
    /// people leave faster than it announces them one by one (a crowd timing out together).
    case peersLeft([Departure])
    /// `stepUp` is the role the peer may take back themself afterwards, when there is one.
    case roleChanged(peer: PeerID, role: RoleName, by: PeerID, stepUp: RoleName?)
    case handRaised(peer: PeerID, at: Timestamp)
    case handLowered(peer: PeerID, by: PeerID)
    case muteChanged(peer: PeerID, muted: Bool, by: PeerID)
    /// A person's microphone stopped working or works again, as their client said.
    case micChanged(peer: PeerID, working: Bool)
    /// `peer` started or stopped playing a file into the room.
    case playingChanged(peer: PeerID, playing: Bool)
    /// Current audio levels, 0–100, of the peers whose level changed.
    case speakers(levels: [SpeakerLevel])
    /// Network quality scores that changed; sent without `seq` (it is a measure, not room state).
    case networkQuality([PeerQuality])
    /// Reactions gathered over a moment (at most one per room per `ReactionGate.interval`), for everyone and
    /// without `seq`: ephemeral, never saved.
    case reaction(ReactionBurst)
    case chat(ChatMessage)
    /// Sent to everyone: the invitee answers it; the inviter and the moderators see it pending.
    case invited(peer: PeerID, by: PeerID, at: Timestamp)
    /// Sent to everyone: `peer` declined.
    case inviteDeclined(peer: PeerID, by: PeerID)
    /// Sent to everyone: `by` took back `peer`'s invitation.
    case inviteWithdrawn(peer: PeerID, by: PeerID)
    /// Sent to everyone: `peer`'s invitation lapsed unanswered (after `RoomAuthority.invitationLifetime`).
    case inviteExpired(peer: PeerID)
    /// Sent to the muted peer only, so its client turns the microphone off.
    case askedToMute(peer: PeerID, by: PeerID)
    /// Sent to everyone; the removed peer's connection is closed right after.
    case removed(peer: PeerID, by: PeerID, reason: String)
    case roomEnded(by: PeerID, reason: String)
    /// Sent to everyone: the last host (`peer`, `name`) left a room with no moderator, and the room ends at `at`
    /// unless a host returns; without `at`, a host (`peer`) is back and the room goes on.
    case roomEnding(peer: PeerID, name: String, at: Timestamp?)
    case topicChanged(topic: String, by: PeerID)
    /// The room was listed in the lobby or taken out of it.
    case listingChanged(listed: Bool, by: PeerID)
    /// Sent to everyone: `by` turned raising hands on or off for the room.
    case handsAllowed(allowed: Bool, by: PeerID)
    /// Sent to everyone: the room is recorded from now on (`recording` says by whom and since when), or no longer
    /// (nil), stopped by `by` (nil when nobody stopped it: its recorder left) and, on a fault, for `reason`.
    case recording(RecordingState?, by: PeerID?, reason: String?)
    /// Sent to everyone whenever the set of destinations the room streams to changes: where it goes now (nil:
    /// nowhere), who changed it (nil on a fault) and, when a destination stopped on a fault, why.
    case streaming(StreamingState?, by: PeerID?, reason: String?)
    /// The answer to `create_link`, for the requester only and without a sequence number: the invite token for
    /// `role` in `room` and when it expires (milliseconds since the epoch).
    case inviteLink(room: String, role: RoleName, token: String, expiresAt: Timestamp, id: RequestID?)
    /// The answer to `list_links` and `revoke_link`, for the requester only and without a sequence number: the
    /// room's links as the registry of the server that answers knows them, and the ids `revoke_link` withdrew.
    case links(room: String, links: [RoomLink], withdrawn: [String], locked: Bool, id: RequestID?)
    /// The answer to `list_bans` and `unban`, for the requester only and without a sequence number: the bans of
    /// the server that answers, newest first, and the identities `unban` lifted.
    case bans(bans: [RoomBan], lifted: [String], id: RequestID?)
    /// The answer to `stats`, for the requester only and without a sequence number: everyone who has spoken since
    /// the room went live, most speaking time first.
    case stats(people: [SpeakingStat], id: RequestID?)
    /// To a locked room's hosts and moderators, without a sequence number: a newcomer waits at the door, or
    /// stopped waiting (let in, turned away, gone, timed out).
    case knock(room: String, Knock)
    /// To a newcomer at a locked room, without a sequence number: they wait for a host to let them in; `joined`
    /// follows if one does, a close (4023 or 4024) if not.
    case waiting(room: String)
    case error(code: ErrorCode, message: String, id: RequestID?)

    /// The value of the message's `type` field.
    public var typeName: String {
        switch self {
        case .joined: "joined"
        case .peerJoined: "peer_joined"
        case .peersJoined: "peers_joined"
        case .peerLeft: "peer_left"
        case .peersLeft: "peers_left"
        case .roleChanged: "role_changed"
        case .handRaised: "hand_raised"
        case .handLowered: "hand_lowered"
        case .muteChanged: "mute_changed"
        case .micChanged: "mic_changed"
        case .playingChanged: "playing_changed"
        case .speakers: "speakers"
        case .networkQuality: "network_quality"
        case .reaction: "reaction"
        case .chat: "chat"
        case .invited: "invited"
        case .inviteDeclined: "invite_declined"
        case .inviteWithdrawn: "invite_withdrawn"
        case .inviteExpired: "invite_expired"
        case .askedToMute: "asked_to_mute"
        case .handsAllowed: "hands_allowed"
        case .recording: "recording"
        case .streaming: "streaming"
        case .roomEnding: "room_ending"
        case .removed: "removed"
        case .roomEnded: "room_ended"
        case .topicChanged: "topic_changed"
        case .listingChanged: "listing_changed"
        case .inviteLink: "invite_link"
        case .links: "links"
        case .bans: "bans"
        case .stats: "stats"
        case .knock: "knock"
        case .waiting: "waiting"
        case .error: "error"
        }
    }
}

/// A server message: an event and the room sequence number it was given.
public struct ServerMessage: Sendable, Equatable {
    /// Strictly increasing within a room. `joined` carries the sequence number its snapshot reflects;
    /// `error` carries none, as it is not a room event.
    public var seq: Int64?
    public var event: WireEvent

    public init(_ event: WireEvent, seq: Int64?) {
        self.event = event
        self.seq = seq
    }
}
