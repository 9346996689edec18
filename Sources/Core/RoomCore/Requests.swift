/// What a client asks the server to do. The server checks permissions (with the same `RoleTable`) and
/// answers with events; the client never applies a request's outcome itself.
public enum ClientRequest: Sendable, Equatable {
    case raiseHand
    case lowerHand
    /// Lower someone else's raised hand (who may invite, for people below them).
    case lowerHandOf(PeerID)
    /// Lower every raised hand the asker may lower: the queue starts again.
    case clearHands
    /// Turn raising hands on or off for the room (hosts and moderators); turning it off lowers every raised hand.
    case setHandsAllowed(Bool)
    /// Invite an audience member onto the stage; they accept or decline.
    case invite(PeerID)
    /// Move a peer to a role directly (hosts and moderators).
    case setRole(PeerID, RoleName)
    case acceptInvite
    case declineInvite
    /// Take back a pending invitation to speak (its sender, or anyone who may invite and stands above the
    /// invitee).
    case withdrawInvite(PeerID)
    /// Leave the stage for the audience.
    case stepDown
    /// Mute or unmute oneself.
    case setMute(Bool)
    /// Tell the room whether this client's microphone works (it could not be opened, was lost, or is back).
    case setMicWorking(Bool)
    /// Say that one is playing a file into the room (true) or stopped (false); the sound itself travels in one's
    /// own audio stream.
    case setPlaying(Bool)
    /// Mute someone else.
    case mutePeer(PeerID)
    /// Mute everyone on the stage whom the asker may mute (those below them), the asker excepted.
    case muteAll
    /// Remove a peer; with `withdrawLink`, the room's links that let them in are withdrawn too; with `ban`, the
    /// server also keeps their identity out of all its rooms until a host or the operator lifts the ban.
    case remove(PeerID, reason: String?, withdrawLink: Bool = false, ban: Bool = false)
    case setTopic(String)
    case endRoom(reason: String?)
    case chat(String, to: ChatAudience)
    case leave
    /// Sends a reaction (👏 👍 😂 ❤️ ✋): anyone in the room may, within a rate (`ReactionGate`).
    case react(Reaction)
    /// List the room in the lobby, or take it out (`unlist`); the room goes on either way.
    case setListed(Bool)
    /// Ask for an invite link to this room for `role`, valid for `ttl` seconds and for at most `maxUses` people
    /// (nil: no limit); the server answers this client alone with the link's token.
    case createLink(role: RoleName, ttl: Int64, maxUses: Int64? = nil)
    /// Ask for this room's invite links (hosts); the server answers this client alone.
    case listLinks
    /// Withdraw one of this room's invite links by its id, or every link made until now with `all` (hosts).
    case revokeLink(String)
    /// Lock the room to newcomers with links (`true`), or open it again (hosts).
    case setLocked(Bool)
    /// Ask for the identities banned from the server's rooms (hosts); the server answers this client alone.
    case listBans
    /// Lift the ban of an identity, named by that identity or the name they had when banned (hosts).
    case unban(String)
    /// Let in a newcomer waiting at the locked room, named by their name or identity (hosts and moderators).
    case admitWaiting(String)
    /// Turn away a newcomer waiting at the locked room, named by their name or identity (hosts and moderators).
    case denyWaiting(String)
    /// Have the server record the room (hosts and moderators): it runs a recorder, which joins as role `recorder`.
    case startRecording
    /// Stop the room's recording (hosts and moderators): every recorder in the room stops or is removed.
    case stopRecording
    /// A recorder's last word before it leaves: why it stops (it could not write, say), for everyone to read.
    case recorderError(String)
    /// Ask for each person's speaking time and turns since the room went live (hosts and moderators); the server
    /// answers this client alone.
    case stats
    /// Stream the room live to the server's destination of that name (hosts): the server runs a recorder for it.
    case startStream(String)
    /// Stop streaming to that destination (hosts).
    case stopStream(String)
    /// A stream's recorder says how its stream goes, a sentence per change ("Streaming to radio is back."): the
    /// server tells the room's hosts.
    case streamStatus(String)

    /// Why someone whose role may not publish cannot play a file into the room.
    public static let playingNeedsTheStage =
        "only the stage can play a file into the room; raise your hand to be invited up"

    /// Why a recorder may do nothing but report an error and leave.
    public static let recorderOnlyListens = "a recorder only listens: it may report an error and leave"
    /// Why `start_recording` changes nothing while the room is recorded.
    public static let alreadyRecording = "the room is already being recorded; /record stop stops it"
    /// Why `stop_recording` changes nothing while the room is not recorded.
    public static let notRecording = "the room is not being recorded"
    /// Why nobody can be given the recorder's role in the room.
    public static let recorderByLinkOnly = "nobody can be made a recorder: a recorder joins with a recorder's link"
    /// The longest sentence a stream's recorder reports, in characters.
    public static let maxStreamStatusLength = 300
    /// Why `start_stream` changes nothing while the room streams there already.
    public static func alreadyStreaming(to name: String) -> String {
        "the room already streams to \(name); /stream stop \(name) stops it"
    }
    /// Why `stop_stream` changes nothing while the room does not stream there.
    public static func notStreaming(to name: String) -> String { "the room does not stream to \(name)" }
    /// Why `start_stream` names no destination of this server.
    public static func noSuchStream(_ name: String, destinations: [String]) -> String {
        destinations.isEmpty
            ? "this server has no streams configured"
            : "this server has no stream named \(name); it has: \(destinations.joined(separator: ", "))"
    }

    /// The longest reason a recorder gives for stopping, in characters.
    public static let maxRecorderErrorLength = 200

    /// The `revoke_link` id that withdraws every link of the room.
    public static let allLinks = "all"

    /// The shortest and longest lifetime of an invite link made from a room, in seconds (one minute, 30 days).
    public static let linkLifetimes: ClosedRange<Int64> = 60...(30 * 86_400)
    /// How many people a link made from a room may let in at most, when it has a limit (as `clubroom invite
    /// --max-uses`).
    public static let linkUses: ClosedRange<Int64> = 1...1_000_000
    /// The lifetime of a link made without one: 7 days.
    public static let defaultLinkLifetime: Int64 = 7 * 86_400

    /// The peer a request acts on, if any.
    public var target: PeerID? {
        switch self {
        case .invite(let id), .withdrawInvite(let id), .setRole(let id, _), .mutePeer(let id), .remove(let id, _, _, _),
            .lowerHandOf(let id):
            id
        case .chat(_, .peer(let id)): id
        default: nil
        }
    }
}
