import RoomCore

/// The one rule for the strings a client takes from a server: a hostile server (or anyone between it and a
/// `ws://` client) must not be able to drive the person's terminal.
///
/// The server cleans what it relays, but a client cannot trust that, so every string of every server message,
/// close reason and connection error is cleaned before anything prints, draws or stores it. Text a person reads
/// (names, topics, reasons, chat, labels, error messages) follows `DisplayName.sanitizeLine`: no control
/// characters (so no escape sequences, no raw newlines, no carriage returns), no bidirectional controls or
/// invisible spaces, one space for any run of whitespace, trimmed, and cut to its limit. Identifiers (identities,
/// role names, codes, the room) lose the same characters but keep their spaces, and are cut to their byte limit on
/// a character boundary, so that the same identity is cleaned the same way wherever it appears. A string that is
/// already clean comes through unchanged.
///
/// Each string is cleaned once, by one rule. RoomCore's `Peer` and `ChatMessage` clean their names and text with
/// `DisplayName`'s rule when they are made, and the decoder makes them, so those are clean when a message is
/// decoded; the `sanitized` forms below clean everything else (identities, roles, the room, topics, reasons,
/// labels, errors, media strings) and leave names and chat text alone. `RoomSession` applies them to everything it
/// delivers (docs/protocol.md, "What clients do with the server's text").
public enum ServerText {
    /// The longest error message kept, in characters: as long as the client's store keeps one
    /// (`RoomState.maxReasonLength`), so the store's own pass over it changes nothing.
    public static let maxMessageCharacters = RoomState.maxReasonLength
    /// The longest role label kept, in characters.
    public static let maxLabelCharacters = 32
    /// The longest permission name or error code kept, in bytes.
    public static let maxCodeBytes = 64
    /// The longest connection-failure text kept, in characters.
    public static let maxFailureCharacters = 500

    /// A line a person reads, cut to `maxCharacters` grapheme clusters.
    public static func line(_ raw: String, maxCharacters: Int) -> String {
        DisplayName.sanitizeLine(raw, maxGraphemes: maxCharacters)
    }

    /// A display name; `fallback` (the identity, already cleaned) when nothing readable is left.
    public static func name(_ raw: String, fallback: String) -> String {
        let cleaned = line(raw, maxCharacters: DisplayName.maxGraphemes)
        return cleaned.isEmpty ? fallback : cleaned
    }

    /// An identifier: the characters `DisplayName.isInvisibleControl` names removed, cut to `maxBytes` of UTF-8
    /// on a character boundary.
    public static func identifier(_ raw: String, maxBytes: Int) -> String {
        if raw.utf8.count <= maxBytes && raw.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return raw }
        var scalars = String.UnicodeScalarView()
        for scalar in raw.unicodeScalars where !DisplayName.isInvisibleControl(scalar) {
            scalars.append(scalar)
        }
        var result = ""
        var bytes = 0
        for character in String(scalars) {
            let size = character.utf8.count
            if bytes + size > maxBytes { break }
            result.append(character)
            bytes += size
        }
        return result
    }

    /// A peer's identity.
    public static func identity(_ raw: String) -> String {
        identifier(raw, maxBytes: ControlLimits.maxIdentityBytes)
    }

    /// A role's name.
    public static func role(_ raw: String) -> String {
        identifier(raw, maxBytes: ControlLimits.maxRoleBytes)
    }

    /// A peer's identity, as a `PeerID`. An identity with nothing left after cleaning becomes U+FFFD, so that every
    /// peer still has one and a message naming it can be read again.
    public static func peer(_ raw: PeerID) -> PeerID {
        let cleaned = identity(raw.rawValue)
        return cleaned.isEmpty ? PeerID(replacement) : PeerID(cleaned)
    }

    /// Who made a change: an identity, or empty when the server made it itself (so empty stays empty).
    public static func actor(_ raw: PeerID) -> PeerID {
        raw.rawValue.isEmpty ? raw : peer(raw)
    }

    /// A role's name, as a `RoleName`.
    public static func role(_ raw: RoleName) -> RoleName {
        RoleName(role(raw.rawValue))
    }

    /// What an identity with nothing readable left becomes.
    public static let replacement = "\u{FFFD}"

    /// A close frame's reason.
    public static func closeReason(_ raw: String) -> String {
        line(raw, maxCharacters: ControlLimits.maxReasonCharacters)
    }
}

extension ServerMessage {
    /// The message with every string cleaned by `ServerText`'s rules.
    public var sanitized: ServerMessage {
        ServerMessage(event.sanitized, seq: seq)
    }
}

extension WireEvent {
    /// The event with every string cleaned by `ServerText`'s rules.
    public var sanitized: WireEvent {
        let id = ServerText.peer
        switch self {
        case .joined(var snapshot):
            // Field by field on a copy, so a field added to the snapshot later is carried, not reset.
            snapshot.room = ServerText.identifier(snapshot.room, maxBytes: TokenClaims.maximumFieldBytes)
            snapshot.selfID = id(snapshot.selfID)
            snapshot.peers = snapshot.peers.map(\.sanitized)
            snapshot.topic = ServerText.line(snapshot.topic, maxCharacters: ControlLimits.maxTopicCharacters)
            snapshot.chat = snapshot.chat.map(\.sanitized)
            snapshot.roles = snapshot.roles.sanitized
            snapshot.tokenRole = snapshot.tokenRole.map(ServerText.role)
            snapshot.recording = snapshot.recording.map { RecordingState(by: $0.by.map(id), since: $0.since) }
            snapshot.ending = snapshot.ending.map {
                HostlessEnding(
                    host: id($0.host), name: ServerText.line($0.name, maxCharacters: ControlLimits.maxNameCharacters),
                    at: $0.at)
            }
            return .joined(snapshot)
        case .peerJoined(let peer): return .peerJoined(peer.sanitized)
        case .peersJoined(let peers): return .peersJoined(peers.map(\.sanitized))
        case .peerLeft(let peer, let reason): return .peerLeft(peer: id(peer), reason: reason)
        case .peersLeft(let departures): return .peersLeft(departures.map { Departure(id($0.peer), $0.reason) })
        case .roleChanged(let peer, let role, let by, let stepUp):
            return .roleChanged(
                peer: id(peer), role: ServerText.role(role), by: ServerText.actor(by),
                stepUp: stepUp.map(ServerText.role))
        case .handRaised(let peer, let at): return .handRaised(peer: id(peer), at: at)
        case .handLowered(let peer, let by): return .handLowered(peer: id(peer), by: ServerText.actor(by))
        case .muteChanged(let peer, let muted, let by):
            return .muteChanged(peer: id(peer), muted: muted, by: ServerText.actor(by))
        case .playingChanged(let peer, let playing): return .playingChanged(peer: id(peer), playing: playing)
        case .speakers(let levels):
            return .speakers(levels: levels.map { SpeakerLevel(peer: id($0.peer), level: $0.level) })
        case .networkQuality(let peers):
            return .networkQuality(
                peers.map {
                    PeerQuality(
                        peer: id($0.peer), score: $0.score, lossPercent: $0.lossPercent,
                        jitterMilliseconds: $0.jitterMilliseconds, rttMilliseconds: $0.rttMilliseconds)
                })
        case .reaction(let burst):
            return .reaction(
                ReactionBurst(
                    counts: burst.counts, senders: burst.senders.map { ReactionBurst.Sender(id($0.peer), $0.reaction) })
            )
        case .chat(let chat): return .chat(chat.sanitized)
        case .invited(let peer, let by, let at): return .invited(peer: id(peer), by: ServerText.actor(by), at: at)
        case .inviteWithdrawn(let peer, let by): return .inviteWithdrawn(peer: id(peer), by: ServerText.actor(by))
        case .inviteExpired(let peer): return .inviteExpired(peer: id(peer))
        case .handsAllowed(let allowed, let by): return .handsAllowed(allowed: allowed, by: ServerText.actor(by))
        case .roomEnding(let peer, let name, let at):
            return .roomEnding(
                peer: id(peer), name: ServerText.line(name, maxCharacters: ControlLimits.maxNameCharacters), at: at)
        case .inviteDeclined(let peer, let by): return .inviteDeclined(peer: id(peer), by: ServerText.actor(by))
        case .askedToMute(let peer, let by): return .askedToMute(peer: id(peer), by: ServerText.actor(by))
        case .removed(let peer, let by, let reason):
            return .removed(
                peer: id(peer), by: ServerText.actor(by),
                reason: ServerText.line(reason, maxCharacters: ControlLimits.maxReasonCharacters))
        case .roomEnded(let by, let reason):
            return .roomEnded(
                by: ServerText.actor(by),
                reason: ServerText.line(reason, maxCharacters: ControlLimits.maxReasonCharacters))
        case .topicChanged(let topic, let by):
            return .topicChanged(
                topic: ServerText.line(topic, maxCharacters: ControlLimits.maxTopicCharacters), by: ServerText.actor(by)
            )
        case .listingChanged(let listed, let by): return .listingChanged(listed: listed, by: ServerText.actor(by))
        case .recording(let recording, let by, let reason):
            return .recording(
                recording.map { RecordingState(by: $0.by.map(id), since: $0.since) }, by: by.map(id),
                reason: reason.map { ServerText.line($0, maxCharacters: ControlLimits.maxReasonCharacters) })
        case .streaming(let streaming, let by, let reason):
            // The names were checked as they were read: `a-z 0-9 -` alone.
            return .streaming(
                streaming, by: by.map(id),
                reason: reason.map { ServerText.line($0, maxCharacters: ControlLimits.maxReasonCharacters) })
        case .micChanged(let peer, let working): return .micChanged(peer: id(peer), working: working)
        case .inviteLink(let room, let role, let token, let expiresAt, let requestID):
            // The token is printed as part of a link a person copies: base64url, so anything else is removed.
            return .inviteLink(
                room: ServerText.identifier(room, maxBytes: TokenClaims.maximumFieldBytes), role: ServerText.role(role),
                token: ServerText.identifier(token, maxBytes: ControlLimits.maxServerMessageBytes),
                expiresAt: expiresAt, id: Self.clean(requestID))
        case .links(let room, let links, let withdrawn, let locked, let requestID):
            return .links(
                room: ServerText.identifier(room, maxBytes: TokenClaims.maximumFieldBytes),
                links: links.map { link in
                    RoomLink(
                        id: ServerText.identifier(link.id, maxBytes: 64), role: ServerText.role(link.role),
                        by: ServerText.actor(link.by), expiresAt: link.expiresAt, uses: link.uses,
                        maxUses: link.maxUses, withdrawn: link.withdrawn)
                }, withdrawn: withdrawn.map { ServerText.identifier($0, maxBytes: 64) }, locked: locked,
                id: Self.clean(requestID))
        case .bans(let bans, let lifted, let requestID):
            return .bans(
                bans: bans.map { ban in
                    RoomBan(
                        identity: ServerText.peer(ban.identity),
                        name: ServerText.name(ban.name, fallback: ServerText.peer(ban.identity).rawValue),
                        by: ServerText.actor(ban.by), at: ban.at,
                        reason: ServerText.line(ban.reason, maxCharacters: ControlLimits.maxReasonCharacters))
                }, lifted: lifted.map { ServerText.peer(PeerID($0)).rawValue }, id: Self.clean(requestID))
        case .stats(let people, let requestID):
            return .stats(
                people: people.map { person in
                    SpeakingStat(
                        peer: ServerText.peer(person.peer),
                        name: ServerText.name(person.name, fallback: ServerText.peer(person.peer).rawValue),
                        milliseconds: person.milliseconds, turns: person.turns, talking: person.talking)
                }, id: Self.clean(requestID))
        case .knock(let room, let knock):
            return .knock(
                room: ServerText.identifier(room, maxBytes: TokenClaims.maximumFieldBytes),
                Knock(
                    peer: ServerText.peer(knock.peer),
                    name: ServerText.name(knock.name, fallback: ServerText.peer(knock.peer).rawValue),
                    state: knock.state, by: knock.by.map(ServerText.actor)))
        case .waiting(let room):
            return .waiting(room: ServerText.identifier(room, maxBytes: TokenClaims.maximumFieldBytes))
        case .error(let code, let message, let requestID):
            return .error(
                code: ErrorCode(rawValue: ServerText.identifier(code.rawValue, maxBytes: ServerText.maxCodeBytes)),
                message: ServerText.line(message, maxCharacters: ServerText.maxMessageCharacters),
                id: Self.clean(requestID))
        }
    }

    /// A request's id as the server echoed it, cleaned when it is a string.
    static func clean(_ requestID: RequestID?) -> RequestID? {
        switch requestID {
        case .string(let text)?: .string(ServerText.identifier(text, maxBytes: ControlLimits.maxRequestIDBytes))
        case let other: other
        }
    }
}

extension AnnouncedPeer {
    /// The peer cleaned (`Peer.sanitized`), its inviter's identity and the role it may step back up to cleaned.
    public var sanitized: AnnouncedPeer {
        AnnouncedPeer(
            peer.sanitized, invitation: invitation.map { Invitation(by: ServerText.peer($0.by), at: $0.at) },
            stepUp: stepUp.map(ServerText.role))
    }
}

extension Peer {
    /// The peer with its identity and role cleaned. Its name was cleaned when the peer was made (`Peer.init`
    /// applies `DisplayName`'s rule, the one `ServerText.line` is), so it is not cleaned again; a name with nothing
    /// readable left becomes the identity, as the server does.
    public var sanitized: Peer {
        let cleanID = ServerText.peer(id)
        var peer =
            cleanID == id
            ? self
            : Peer(
                id: cleanID, name: name, role: role, muted: muted, handRaisedAt: handRaisedAt, joinedAt: joinedAt,
                level: level, metadata: metadata, micWorking: micWorking, playing: playing)
        peer.role = ServerText.role(role)
        if peer.name.isEmpty { peer.name = ServerText.name(cleanID.rawValue, fallback: ServerText.replacement) }
        return peer
    }
}

extension ChatMessage {
    /// The message with its sender and audience cleaned. Its name and text were cleaned when the message was made
    /// (`ChatMessage.init`); a name with nothing readable left becomes the sender's identity.
    public var sanitized: ChatMessage {
        var message = self
        message.from = ServerText.peer(from)
        message.to =
            switch to {
            case .everyone: .everyone
            case .peer(let peer): .peer(ServerText.peer(peer))
            case .role(let role): .role(ServerText.role(role))
            }
        if message.fromName.isEmpty {
            message.fromName = ServerText.name(message.from.rawValue, fallback: ServerText.replacement)
        }
        return message
    }
}

extension RoleTable {
    /// The table with its labels cleaned. Role names need nothing: the decoder checked them against the role
    /// table's rules (lowercase letters, digits, `-` and `_`), and permissions are RoomCore's own.
    public var sanitized: RoleTable {
        relabeled { ServerText.line($0.label, maxCharacters: ServerText.maxLabelCharacters) }
    }
}

extension MediaSignal {
    /// The media message with its strings cleaned: the peers of `media_sources` as identities, the offer's host
    /// and profile as identifiers. Keys and numbers are bytes and numbers already.
    public var sanitized: MediaSignal {
        switch self {
        case .media(var offer):
            offer.host = ServerText.identifier(offer.host, maxBytes: TokenClaims.maximumFieldBytes)
            offer.profile = ServerText.identifier(offer.profile, maxBytes: ServerText.maxCodeBytes)
            return .media(offer)
        case .mediaKey, .mediaPath: return self
        case .mediaSources(let sources):
            return .mediaSources(sources.map { MediaSource(peer: ServerText.identity($0.peer), ssrc: $0.ssrc) })
        }
    }
}

extension DirectoryMessage {
    /// The message with every string cleaned by `ServerText`'s rules, as a lobby takes it from the directory:
    /// topics and stage names are clean already (`RoomListing` cleans them as it is made, and the decoder makes
    /// it), room names are checked by the decoder; the stage's roles and an error's code and message are cleaned
    /// here.
    public var sanitized: DirectoryMessage {
        switch self {
        case .rooms(let rooms, let seq): .rooms(rooms.map(\.sanitized), seq: seq)
        case .changed(let changes, let seq, let since): .changed(changes.map(\.sanitized), seq: seq, since: since)
        case .error(let code, let message):
            .error(
                code: ErrorCode(rawValue: ServerText.identifier(code.rawValue, maxBytes: ServerText.maxCodeBytes)),
                message: ServerText.line(message, maxCharacters: ServerText.maxMessageCharacters))
        case .refused(let code, let message, let id):
            .refused(
                code: ErrorCode(rawValue: ServerText.identifier(code.rawValue, maxBytes: ServerText.maxCodeBytes)),
                message: ServerText.line(message, maxCharacters: ServerText.maxMessageCharacters),
                id: ServerText.line(id, maxCharacters: ControlLimits.maxRequestIDBytes))
        case .welcome: self
        case .opened(let room, let invite, let id):
            .opened(room: room, invite: invite, id: ServerText.line(id, maxCharacters: ControlLimits.maxRequestIDBytes))
        }
    }
}

extension ListingChange {
    /// The change with its listing's strings cleaned.
    public var sanitized: ListingChange {
        switch self {
        case .added(let listing, let arrival): .added(listing.sanitized, arrival)
        case .updated(let listing): .updated(listing.sanitized)
        case .removed: self
        }
    }
}

extension RoomListing {
    /// The listing with its stage's roles cleaned (its other strings are clean as it is made).
    public var sanitized: RoomListing {
        guard stage.contains(where: { ServerText.role($0.role) != $0.role }) else { return self }
        var listing = self
        listing.stage = stage.map { StageMember(name: $0.name, role: ServerText.role($0.role)) }
        return listing
    }
}
