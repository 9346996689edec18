/// What a refusal at the door means to the person who was refused, and what they can do about it.
///
/// The server's close reasons are fixed sentences about tokens; a person who pasted a link thinks of links, so
/// `describe` words each refusal for what they hold (a token, or an invite link).
public enum Refusals {
    /// The sentence for a connection closed with `code` (and the server's `reason`) before it got in.
    public static func describe(code: UInt16, reason: String, withInvite: Bool) -> String {
        let held = withInvite ? "link" : "token"
        switch code {
        case 4000:
            return withInvite
                ? "The server wants a token or an invite link; ask the host for a link."
                : "The server got no token. Give the host's token with --token, --token-file or CLUBROOM_TOKEN."
        case 4001:
            return withInvite
                ? "The invite in this link cannot be read; it may have been cut short when it was copied. Copy the whole link again."
                : "The token cannot be read. Ask the host for a new one."
        case 4002: return "The \(held) is not signed the way this server signs; ask the host for a new one."
        case 4003:
            return "This \(held) was not signed by this server (or it was changed). Ask the host for a new one."
        case 4004: return "This \(held) has expired. Ask the host for a new one."
        case 4005: return "This \(held) is not valid yet. Check this computer's clock, or wait."
        case 4006: return "This \(held) is for another room. Check the room's address, or ask for a \(held) for it."
        case 4007: return "This \(held) gives a role this server does not have. Ask the host for a new one."
        case 4008:
            return "This \(held) names you with control characters, which no one could read safely. Ask the host for a "
                + "new one."
        case 4009:
            return withInvite
                ? "The room this link is for has ended." : "The room has ended. Ask the host when it opens again."
        case 4010: return "The room is full. Try again later."
        case 4012: return "You were removed from this room. You cannot come back while it stays open."
        case 4013:
            return "This link was made for another Clubroom server, not this one. Check the address, or ask for a "
                + "link to this server."
        case 4014:
            return "This server's lobby has no live room by that name: it may have ended, or its host keeps it "
                + "unlisted (ask them for a room link)."
        case 4015: return "This client did not send the key an invite needs; use a newer clubroom."
        case 4016:
            return "This \(held) opens one room, not the lobby: join the room's address, or ask for a server link."
        case 4017: return "The lobby is full right now. Try again in a minute."
        case 4018: return "This \(held) was withdrawn. Ask the host for a new one."
        case 4019: return "This \(held) has let in as many people as it may. Ask the host for a new one."
        case 4020:
            return "Too many people joined from this address or with this \(held) just now. Try again in a minute."
        case 4022:
            return "This room is locked and as many people as it allows already wait for a host to let them in. "
                + "Try later."
        case 4023: return "A host of this room did not let you in."
        case 4024: return "No host let you in within five minutes. Ask them to expect you, or try again later."
        case 4025:
            return "You are banned from this server's rooms. Only its hosts or its operator can lift the ban."
        case 4021: return "This \(held) has as many people in rooms as it may. Try again later, or ask for a new one."
        default:
            return "The server refused to let you in (\(code)\(reason.isEmpty ? "" : ": \(reason)"))."
        }
    }
}
