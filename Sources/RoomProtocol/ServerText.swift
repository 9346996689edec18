import RoomCore

/// The one rule for the strings a client takes from a server: a hostile server (or anyone between it and a
/// `ws://` client) must not be able to drive the person's terminal.
///
/// The server cleans what it relays, but a client cannot trust that, so it cleans every string of every server
/// message, close reason and connection error where it first decodes them (`RoomSession`), before anything
/// prints, draws or stores them. Text a person reads (names, topics, reasons, chat, error messages) follows
/// `DisplayName.sanitizeLine`: no control characters (so no escape sequences, no raw newlines, no carriage
/// returns), no bidirectional controls or invisible spaces, one space for any run of whitespace, trimmed, and cut
/// to its limit. Identifiers (identities, role and permission names, codes, the room) lose the same characters
/// but keep their spaces, and are cut to their byte limit on a character boundary, so that the same identity is
/// cleaned the same way wherever it appears. A string that is already clean comes through unchanged.
public enum ServerText {
    /// The longest error message kept, in characters.
    public static let maxMessageCharacters = 300
    /// The longest role label kept, in characters.
    public static let maxLabelCharacters = 32
    /// The longest permission name or error code kept, in bytes.
    public static let maxCodeBytes = 64
    /// The longest connection-failure text kept, in characters.
    public static let maxFailureCharacters = 500

    /// A line a person reads, cut to `maxCharacters` grapheme clusters.
    public static func line(_ raw: String, maxCharacters: Int) -> String {
        if isPlainLine(raw, maxCharacters: maxCharacters) { return raw }
        return DisplayName.sanitizeLine(raw, maxGraphemes: maxCharacters)
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

    /// A close frame's reason.
    public static func closeReason(_ raw: String) -> String {
        line(raw, maxCharacters: ControlLimits.maxReasonCharacters)
    }

    /// Text the rules give back unchanged, found without building anything: no more bytes than characters allowed
    /// (so no more clusters), single spaces between words and none at the ends, and only scalars that are a
    /// cluster of their own and are never dropped (no control, format or combining character, skin tone, regional
    /// indicator, Hangul jamo or other joining sign). Most names and lines are such.
    static func isPlainLine(_ raw: String, maxCharacters: Int) -> Bool {
        guard raw.utf8.count <= maxCharacters else { return false }
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
        let id = ServerText.identity
        switch self {
        case .joined(let snapshot):
            return .joined(
                JoinedSnapshot(
                    room: ServerText.identifier(snapshot.room, maxBytes: TokenClaims.maximumFieldBytes),
                    protocolVersion: snapshot.protocolVersion, selfID: id(snapshot.selfID),
                    peers: snapshot.peers.map(\.sanitized),
                    topic: ServerText.line(snapshot.topic, maxCharacters: ControlLimits.maxTopicCharacters),
                    chat: snapshot.chat.map(\.sanitized), roles: snapshot.roles.map(\.sanitized),
                    resumed: snapshot.resumed))
        case .peerJoined(let peer): return .peerJoined(peer.sanitized)
        case .peersJoined(let peers): return .peersJoined(peers.map(\.sanitized))
        case .peerLeft(let peer, let reason): return .peerLeft(peer: id(peer), reason: reason)
        case .roleChanged(let peer, let role, let by):
            return .roleChanged(peer: id(peer), role: ServerText.role(role), by: id(by))
        case .handRaised(let peer, let at): return .handRaised(peer: id(peer), at: at)
        case .handLowered(let peer, let by): return .handLowered(peer: id(peer), by: id(by))
        case .muteChanged(let peer, let muted, let by): return .muteChanged(peer: id(peer), muted: muted, by: id(by))
        case .speakers(let levels):
            return .speakers(levels: levels.map { WireLevel(peer: id($0.peer), level: $0.level) })
        case .chat(let chat): return .chat(chat.sanitized)
        case .invited(let peer, let by): return .invited(peer: id(peer), by: id(by))
        case .inviteDeclined(let peer, let by): return .inviteDeclined(peer: id(peer), by: id(by))
        case .askedToMute(let peer, let by): return .askedToMute(peer: id(peer), by: id(by))
        case .removed(let peer, let by, let reason):
            return .removed(
                peer: id(peer), by: id(by),
                reason: ServerText.line(reason, maxCharacters: ControlLimits.maxReasonCharacters))
        case .roomEnded(let by, let reason):
            return .roomEnded(
                by: id(by), reason: ServerText.line(reason, maxCharacters: ControlLimits.maxReasonCharacters))
        case .topicChanged(let topic, let by):
            return .topicChanged(
                topic: ServerText.line(topic, maxCharacters: ControlLimits.maxTopicCharacters), by: id(by))
        case .error(let code, let message, let requestID):
            let cleanID: RequestID? =
                switch requestID {
                case .string(let text)?: .string(ServerText.identifier(text, maxBytes: ControlLimits.maxRequestIDBytes))
                case let other: other
                }
            return .error(
                code: ErrorCode(rawValue: ServerText.identifier(code.rawValue, maxBytes: ServerText.maxCodeBytes)),
                message: ServerText.line(message, maxCharacters: ServerText.maxMessageCharacters), id: cleanID)
        }
    }
}

extension WirePeer {
    /// The peer with its identity, name, role and inviter cleaned; a name with nothing readable left becomes the
    /// identity, as the server does.
    public var sanitized: WirePeer {
        let cleanID = ServerText.identity(id)
        return WirePeer(
            id: cleanID, name: ServerText.name(name, fallback: cleanID), role: ServerText.role(role), muted: muted,
            handRaisedAt: handRaisedAt, joinedAt: joinedAt, level: level, invitedBy: invitedBy.map(ServerText.identity))
    }
}

extension WireChat {
    /// The chat line with its sender, name, text and audience cleaned.
    public var sanitized: WireChat {
        let sender = ServerText.identity(from)
        let audience: ChatTarget =
            switch to {
            case .everyone: .everyone
            case .peer(let peer): .peer(ServerText.identity(peer))
            case .role(let role): .role(ServerText.role(role))
            }
        return WireChat(
            from: sender, name: ServerText.name(name, fallback: sender),
            text: ServerText.line(text, maxCharacters: ControlLimits.maxChatCharacters), at: at, to: audience)
    }
}

extension WireRole {
    /// The role with its name, label and permission names cleaned.
    public var sanitized: WireRole {
        WireRole(
            name: ServerText.role(name), label: ServerText.line(label, maxCharacters: ServerText.maxLabelCharacters),
            rank: rank, onStage: onStage,
            permissions: permissions.map { ServerText.identifier($0, maxBytes: ServerText.maxCodeBytes) })
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
