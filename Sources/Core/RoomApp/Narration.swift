import RoomCore
import TermUI

/// Room events as sentences, for the event pane and for line mode (`--plain`).
public enum Narration {
    /// How long a server keeps a person's place (their role, raised hand and invitation) after their connection
    /// drops: its reconnect grace, 60 s (`docs/protocol.md`).
    static let placeKept: Timestamp = 60_000
    /// How many earlier chat messages line mode says to a newcomer.
    static let earlierLines = 5

    /// How much longer the server keeps the place of someone whose connection dropped at `droppedAt`.
    static func placeKeptFor(droppedAt: Timestamp?, now: Timestamp) -> String {
        let left = (droppedAt ?? now) + placeKept - now
        guard left > 0 else { return "your place is no longer kept (it is kept \(placeKept / 1000)\u{A0}s)" }
        return "your place is kept \((left + 999) / 1000)\u{A0}s more"
    }
    /// A sentence about an event, and whether it belongs in the event pane (line mode says every sentence)
    /// or, being news for this person, also goes up as a notice.
    public struct Sentence: Sendable, Equatable {
        public var text: String
        public var logged: Bool
        public var notice: Bool

        public init(_ text: String, logged: Bool = true, notice: Bool = false) {
            self.text = text
            self.logged = logged
            self.notice = notice
        }
    }

    static func name(_ id: PeerID?, _ state: AppState) -> String? {
        // The server names no actor (an empty identity) when it acted itself, e.g. on an accepted invitation.
        guard let id, !id.rawValue.isEmpty else { return nil }
        if id == state.room.selfID { return "you" }
        return state.room.peers[id]?.name ?? id.rawValue
    }

    /// Who did it, to open a sentence: "You", a name, or "The server" when no person did.
    static func actorName(_ id: PeerID?, _ state: AppState) -> String {
        name(id, state).map(capitalized) ?? "The server"
    }

    static func capitalized(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }

    /// What everyone is told of a room whose last host left with no moderator to take over: those present when
    /// it happened (`room_ending`) and whoever joins meanwhile (the snapshot's `ending`) alike.
    static func endingSentence(_ ending: HostlessEnding, _ state: AppState) -> String {
        endingClause(ending, state) + "."
    }

    /// The same without its full stop, for the summary of what changed while the connection was down.
    static func endingClause(_ ending: HostlessEnding, _ state: AppState) -> String {
        let label = state.room.roles.label(of: .host)
        return "\(ending.name), the last \(label), left; the room ends in \(lifetime(ending.at - state.now)) unless a "
            + "\(label) returns"
    }

    /// What a newcomer is told of a room where raising hands is off, in the join line: those present heard
    /// it turned off.
    static let handsOffClause = " Raising hands is turned off in this room."

    /// How long an invitation waits for an answer, in words.
    static var invitationLifetimeWords: String {
        let seconds = Int(Invitation.lifetime / 1000)
        return seconds % 60 == 0 ? "\(seconds / 60) minutes" : "\(seconds) seconds"
    }

    /// Where a chat message went, for the pane: nil for everyone, "you" or the person for a direct message,
    /// the role's holders for a message to a role.
    static func audienceLabel(_ message: ChatMessage, _ state: AppState) -> String? {
        switch message.to {
        case .everyone: return nil
        case .peer(let id):
            if id == state.room.selfID { return "you" }
            return state.room.peers[id]?.name ?? id.rawValue
        case .role(let role): return plural(state.room.roles.label(of: role))
        }
    }

    static func plural(_ label: String) -> String {
        label.hasSuffix("s") ? label : label + "s"
    }

    /// The least time between two reaction sentences in line mode, in milliseconds.
    static let reactionPause: Timestamp = 5_000

    /// The sentence for an event that was applied; `context` is what the state held before it.
    static func sentence(for event: ServerEvent, context: EventContext, state: AppState) -> Sentence? {
        let room = state.room
        let selfID = room.selfID
        switch event {
        case .networkQuality:
            // Only this person's own connection is said, once each way (see `ownConnection`).
            return nil
        case .reaction(let burst):
            // Said in aggregate ("3 people clapped."), and kept out of the screen's log: the marks beside the
            // names show them there. `applyServer` says at most one every `reactionPause`.
            let text = burst.sentences { id in id == selfID ? "You" : room.peers[id]?.name ?? id.rawValue }
                .joined(separator: " ")
            return text.isEmpty ? nil : Sentence(text, logged: false)
        case .joined(let snapshot):
            guard let me = room.me else { return nil }
            // After a reconnect, `rejoined` says what changed instead.
            if context.hadSnapshot { return nil }
            let role = room.roles.label(of: me.role)
            let people = room.peopleCount
            var text =
                "You joined \(snapshot.roomID) as \(me.name) (\(role)). \(formatCount(people)) "
                + "\(people == 1 ? "person" : "people") here: \(formatCount(room.stage.count)) on stage, "
                + "\(formatCount(room.raisedHands.count)) raised \(room.raisedHands.count == 1 ? "hand" : "hands"), "
                + "\(formatCount(room.audience.count)) listening."
            if !snapshot.topic.isEmpty { text += " Topic: \"\(snapshot.topic)\"." }
            text += recordedClause(room)
            text += streamedClause(room)
            if !room.handsAllowed { text += handsOffClause }
            text += state.lineMode ? " Type /help for the commands." : " Press ? for the keys."
            return Sentence(text)
        case .peerJoined(let peer, _):
            // A recorder is shown by the REC mark and said by the `recording` event, not as a person.
            if peer.role == .recorder { return nil }
            if context.quietRejoin { return Sentence("\(peer.name) is back.") }
            return Sentence("\(peer.name) joined.")
        case .peerLeft(let id):
            if id == selfID { return Sentence("You left the room.") }
            if context.subjectRole == .recorder { return nil }
            return Sentence("\(context.subjectName ?? id.rawValue) left.")
        case .roleChanged(let id, let role, let by, _):
            return roleSentence(id, role, by, context: context, state: state)
        case .handRaised(let id, _):
            if id == selfID {
                let place = room.queuePosition(of: id).map { " You are \(ordinal($0)) in the queue." } ?? ""
                return Sentence("You raised your hand." + place)
            }
            return Sentence("\(name(id, state) ?? id.rawValue) raised their hand.")
        case .handLowered(let id, let by):
            if let by, by != id, let actor = name(by, state) {
                return Sentence("\(capitalized(actor)) lowered \(possessive(id, state)) hand.")
            }
            return Sentence(
                id == selfID ? "You lowered your hand." : "\(name(id, state) ?? id.rawValue) lowered their hand.")
        case .muteChanged(let id, let muted, let by):
            let who = name(id, state) ?? id.rawValue
            if let by, by != id, let actor = name(by, state) {
                return Sentence(
                    "\(capitalized(actor)) \(muted ? "muted" : "unmuted") \(who).", notice: id == selfID)
            }
            if id == selfID {
                if muted { return Sentence("You are muted.", logged: false) }
                if state.microphoneMissing {
                    return Sentence("You are live, but no microphone is open: others hear silence.", logged: false)
                }
                return Sentence("You are live: others hear you.", logged: false)
            }
            return Sentence("\(who) \(muted ? "muted" : "unmuted").", logged: false)
        case .micChanged(let id, let working):
            if id == selfID {
                return Sentence(
                    working
                        ? "Your microphone works again; the stage shows it."
                        : "The stage shows everyone that your microphone does not work.")
            }
            let who = name(id, state) ?? id.rawValue
            return Sentence(
                working ? "\(who)'s microphone works again." : "\(who)'s microphone does not work: nobody hears them.")
        case .playingChanged(let id, let playing):
            // One's own file is said by the player itself, with its title.
            if id == selfID { return nil }
            let who = name(id, state) ?? id.rawValue
            return Sentence(playing ? "\(who) is playing a file into the room." : "\(who) stopped playing.")
        case .speakers:
            return nil
        case .chat(let message):
            let from = message.from == selfID ? "You" : message.fromName
            switch message.to {
            case .everyone: return Sentence("\(from) said: \(message.text)")
            case .peer(let id):
                let to = id == selfID ? "you" : room.peers[id]?.name ?? id.rawValue
                return Sentence("\(from) to \(to), privately: \(message.text)")
            case .role(let role):
                return Sentence("\(from) to the \(plural(room.roles.label(of: role))): \(message.text)")
            }
        case .invited(let id, let by, _):
            let invitee = context.subjectName ?? id.rawValue
            if id == selfID {
                let who = capitalized(name(by, state) ?? by.rawValue)
                let how =
                    state.lineMode
                    ? "Type /accept or /decline; say something first to check your microphone."
                    : "Press a to accept or d to decline."
                let recorded =
                    (room.recording == nil ? "" : " This room is being recorded: what you say on stage is kept.")
                    + (room.streaming == nil ? "" : " This room is streamed live: what you say on stage goes out.")
                return Sentence("\(who) invited you to speak.\(recorded) \(how)")
            }
            if by == selfID {
                return Sentence(
                    "You invited \(invitee) to speak; it lapses in \(invitationLifetimeWords) without an answer.")
            }
            guard state.seesWholeQueue else { return nil }
            return Sentence("\(capitalized(name(by, state) ?? by.rawValue)) invited \(invitee) to speak.")
        case .inviteDeclined(let id):
            let invitee = context.subjectName ?? id.rawValue
            if id == selfID { return Sentence("You declined the invitation to speak.") }
            if context.invitation?.by == selfID {
                return Sentence("\(invitee) declined your invitation to speak.", notice: true)
            }
            guard state.seesWholeQueue else { return nil }
            return Sentence("\(invitee) declined the invitation to speak.")
        case .inviteWithdrawn(let id, let by):
            let invitee = context.subjectName ?? id.rawValue
            let actor = name(by, state).map(capitalized) ?? "A moderator"
            if id == selfID { return Sentence("\(actor) withdrew the invitation to speak.", notice: true) }
            if by == selfID { return Sentence("You withdrew the invitation to \(invitee).") }
            if context.invitation?.by == selfID {
                return Sentence("\(actor) withdrew your invitation to \(invitee).", notice: true)
            }
            guard state.seesWholeQueue else { return nil }
            return Sentence("\(actor) withdrew the invitation to \(invitee).")
        case .inviteExpired(let id):
            let invitee = context.subjectName ?? id.rawValue
            if id == selfID {
                return Sentence(
                    "The invitation to speak lapsed after \(invitationLifetimeWords) without an answer.", notice: true)
            }
            if context.invitation?.by == selfID {
                return Sentence(
                    "Your invitation to \(invitee) lapsed after \(invitationLifetimeWords) without an answer.",
                    notice: true)
            }
            guard state.seesWholeQueue else { return nil }
            return Sentence("The invitation to \(invitee) lapsed.")
        case .askedToMute(let by):
            let how = state.lineMode ? "Type /mute." : "Press m."
            return Sentence("\(capitalized(name(by, state) ?? by.rawValue)) asks you to mute. \(how)")
        case .removed(let id, let reason, let by):
            if id == selfID { return Sentence(endingNotice(room)) }
            // A recorder removed because the recording was stopped: the `recording` event says it.
            if context.subjectRole == .recorder { return nil }
            let who = context.subjectName ?? id.rawValue
            let actor = by.flatMap { name($0, state) }.map(capitalized)
            let why = reason.isEmpty ? "" : ": \(reason)"
            return Sentence((actor.map { "\($0) removed \(who)" } ?? "\(who) was removed") + why + ".")
        case .roomEnded:
            return Sentence(endingNotice(room))
        case .roomEnding(let id, let who, let at):
            let label = room.roles.label(of: .host)
            guard let at else {
                return Sentence("\(name(id, state) ?? who) is back as \(label); the room goes on.", notice: true)
            }
            return Sentence(endingSentence(HostlessEnding(host: id, name: who, at: at), state), notice: true)
        case .topicChanged(let topic, let by):
            let actor = actorName(by, state)
            return Sentence(topic.isEmpty ? "\(actor) cleared the topic." : "\(actor) set the topic: \"\(topic)\".")
        case .reconnecting(let attempt, _):
            // One standing status, not a line a try: the first drop is said, the tries are not.
            guard attempt == 1 else { return nil }
            let how = state.lineMode ? "/retry tries now" : "Ctrl-R tries now"
            return Sentence(
                "Connection lost; reconnecting. Your place (role, hand, invitation) is kept \(placeKept / 1000) s; "
                    + "\(how).", logged: false)
        case .handsAllowed(let allowed, let by):
            let actor = actorName(by, state)
            return Sentence(
                allowed
                    ? "\(actor) turned raising hands on: anyone may raise a hand again."
                    : "\(actor) turned raising hands off and lowered every raised hand.")
        case .recording(let recording?, _, _):
            return recordingSentence(active: true, by: recording.by, reason: nil, state: state)
        case .recording(nil, _, _):
            let stop = room.recordingStopped
            return recordingSentence(active: false, by: stop?.by, reason: stop?.reason, state: state)
        case .streaming(let streaming, let by, let reason):
            return streamingSentence(
                before: context.streamingBefore, after: streaming, by: by, reason: reason, state: state)
        case .listingChanged(let listed, let by):
            let actor = actorName(by, state)
            return Sentence(
                listed
                    ? "\(actor) listed the room: it shows in the lobby."
                    : "\(actor) unlisted the room: it no longer shows in the lobby; links to it still work.")
        case .inviteLink(let invite):
            let label = room.roles.label(of: invite.role)
            // The demo's server stops with the demo, and its links with it.
            let valid = state.inDemo ? "while the demo runs" : "valid " + lifetime(invite.expiresAt - state.now)
            return Sentence("Invite link for \(label)s, \(valid): \(invite.link)")
        case .links(let links, let withdrawn, let locked):
            return Sentence(linksSentence(links, withdrawn: withdrawn, locked: locked, state: state))
        case .bans(let bans, let lifted):
            return Sentence(bansSentence(bans, lifted: lifted, state: state))
        case .stats:
            // Said as a table where it arrives (`receiveStats`).
            return nil
        case .knock(let knock):
            return Sentence(knockSentence(knock, state: state))
        case .waitingForHost:
            return Sentence(waitingSentence)
        case .reconnected:
            return nil
        case .error:
            return nil
        }
    }

    /// A role change in words: yours, one you made, or someone else's; an accepted invitation says so to whoever
    /// sent it.
    private static func roleSentence(
        _ id: PeerID, _ role: RoleName, _ by: PeerID?, context: EventContext, state: AppState
    ) -> Sentence? {
        let room = state.room
        let label = room.roles.label(of: role)
        let onStage = room.roles.isOnStage(role)
        let wasOnStage = context.subjectRole.map { room.roles.isOnStage($0) } ?? false
        let rose = context.subjectRole.map { room.roles.rank(of: role) < room.roles.rank(of: $0) } ?? false
        let how = state.lineMode ? "type /unmute" : "press m"
        // The server itself makes someone host only when the last host left (a handover).
        if role == .host, by?.rawValue.isEmpty == true, context.subjectRole != .host {
            let subject = id == room.selfID ? "You are" : "\(context.subjectName ?? id.rawValue) is"
            return Sentence("\(subject) now the \(label): the last \(label) left.", notice: id == room.selfID)
        }
        if id == room.selfID {
            let byOther = by.map { $0 != id && !$0.rawValue.isEmpty } ?? false
            let actor = byOther ? name(by, state).map(capitalized) : nil
            if onStage && !wasOnStage {
                let can = room.roles.can(role, .publishAudio)
                return Sentence(
                    "You are on the stage now as \(label)" + (can ? "; you are muted, \(how) to talk." : "."),
                    notice: byOther)
            }
            if !onStage {
                if let actor { return Sentence("\(actor) moved you to the audience.", notice: true) }
                let back =
                    room.stepUpRole.map { up in
                        state.lineMode
                            ? " Type /move me \(up.rawValue) to step back up."
                            : " Press u to step back up to \(room.roles.label(of: up))."
                    } ?? ""
                return Sentence("You stepped down to the audience." + back)
            }
            if let actor { return Sentence("\(actor) made you \(English.article(label)).", notice: true) }
            return Sentence(
                rose ? "You are \(English.article(label)) again." : "You are now \(English.article(label)).")
        }
        let who = context.subjectName ?? id.rawValue
        let actor = by.flatMap { $0 == id ? nil : name($0, state) }.map(capitalized)
        if onStage && !wasOnStage {
            if actor == nil, let invitation = context.invitation {
                if invitation.by == room.selfID {
                    return Sentence("\(who) accepted your invitation and is on the stage as \(label).", notice: true)
                }
                return Sentence("\(who) accepted the invitation and joined the stage as \(label).")
            }
            return Sentence(
                actor.map { "\($0) brought \(who) on stage as \(label)." } ?? "\(who) joined the stage as \(label)."
            )
        }
        if !onStage {
            return Sentence(actor.map { "\($0) moved \(who) to the audience." } ?? "\(who) left the stage.")
        }
        return Sentence(
            actor.map { "\($0) made \(who) \(English.article(label))." } ?? "\(who) is now \(English.article(label)).")
    }

    /// The answer to `/links` or `/revoke`: what was withdrawn, then each link of the room with its id.
    /// What the waiter of a locked room is told while no host has let them in.
    static let waitingSentence =
        "This room is locked: you are waiting for a host to let you in. You see and hear nothing of it until then."

    /// A newcomer at the locked room's door, or what became of them, for its hosts and moderators.
    static func knockSentence(_ knock: Knock, state: AppState) -> String {
        let who = DisplayName.sanitizeLine(knock.name, maxGraphemes: 64)
        let actor = knock.by.flatMap { name($0, state) }.map(capitalized) ?? "A host"
        switch knock.state {
        case .waiting:
            return "\(who) is waiting to come in: /admit \(who) lets them in, /deny \(who) turns them away."
        case .admitted: return "\(actor) let \(who) in."
        case .denied: return "\(actor) turned \(who) away."
        case .left: return "\(who) stopped waiting to come in."
        case .timedOut: return "No one let \(who) in in time: they were sent away."
        }
    }

    /// The answer to `/bans` or `/unban`: what was lifted, then each ban with who made it (by name, or "you", when
    /// the room knows them: an identity from a link is an opaque id) and why.
    static func bansSentence(_ bans: [RoomBan], lifted: [String], state: AppState) -> String {
        func banner(_ id: PeerID) -> String {
            if id == state.room.selfID { return "you" }
            if let peer = state.room.peers[id] { return peer.name }
            return id.rawValue == "operator" ? "the operator" : id.rawValue
        }
        var text = lifted.isEmpty ? "" : "Lifted the ban of \(lifted.joined(separator: ", ")). "
        guard !bans.isEmpty else { return text + "No one is banned from this server's rooms." }
        text += "Banned from this server's rooms (/unban NAME lifts one): "
        text += bans.map { ban in
            let who = ban.name.isEmpty ? ban.identity.rawValue : "\(ban.name) (\(ban.identity.rawValue))"
            return "\(who) by \(banner(ban.by))" + (ban.reason.isEmpty ? "" : ": \(ban.reason)")
        }.joined(separator: "; ")
        return text + "."
    }

    static func linksSentence(_ links: [RoomLink], withdrawn: [String], locked: Bool, state: AppState) -> String {
        var text =
            locked
            ? "The room is locked: newcomers with a link wait for /admit or /deny (/unlock opens it). " : ""
        text +=
            withdrawn.isEmpty
            ? ""
            : "Withdrew \(withdrawn.count == 1 ? "link" : "\(withdrawn.count) links") \(withdrawn.joined(separator: ", ")). "
        let working = links.filter { !$0.withdrawn && $0.expiresAt > state.now }
        guard !links.isEmpty else { return text + "This room has no links." }
        text += "Links to this room, \(working.count) working (/revoke ID withdraws one, /revoke all every one): "
        text += links.map { link in
            let maker = link.by.rawValue.isEmpty ? "the server's operator" : name(link.by, state) ?? link.by.rawValue
            let uses = link.maxUses.map { "used \(link.uses) of \($0)" } ?? "used \(link.uses)"
            let standing =
                link.withdrawn
                ? "withdrawn"
                : link.expiresAt <= state.now ? "expired" : "works \(lifetime(link.expiresAt - state.now)) more"
            return "\(link.id) for \(state.room.roles.label(of: link.role))s by \(maker), \(uses), \(standing)"
        }.joined(separator: "; ")
        return text + "."
    }

    /// How long something lasts, to the nearest minute, in the largest unit it is a whole number of: "7 days",
    /// "2 hours", "90 minutes", "1 minute" ("30 seconds" under a minute).
    static func lifetime(_ milliseconds: Int64) -> String {
        func unit(_ count: Int64, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        let seconds = max(0, milliseconds + 500) / 1000
        if seconds < 60 { return unit(seconds, "second") }
        // Under two minutes a rounded minute would be up to a third off ("2 minutes" for 90 s): the seconds stay.
        if seconds < 120, seconds % 60 != 0 { return unit(1, "minute") + " " + unit(seconds - 60, "second") }
        let minutes = (seconds + 30) / 60
        if minutes % (24 * 60) == 0 { return unit(minutes / (24 * 60), "day") }
        if minutes % 60 == 0 { return unit(minutes / 60, "hour") }
        return unit(minutes, "minute")
    }

    /// Who started speaking, for line mode: said once a talk spurt.
    static func startedSpeaking(_ id: PeerID, _ state: AppState) -> String? {
        guard let peer = state.room.peers[id] else { return nil }
        return "\(peer.name) started speaking."
    }

    static func possessive(_ id: PeerID, _ state: AppState) -> String {
        if id == state.room.selfID { return "your" }
        let n = state.room.peers[id]?.name ?? id.rawValue
        return n.hasSuffix("s") ? n + "'" : n + "'s"
    }

    /// Why the room is over for this client, and what to do now.
    public static func endingNotice(_ room: RoomState) -> String {
        switch room.ending {
        case .removed(let reason, let by):
            let actor = by.flatMap { room.peers[$0]?.name } ?? "A moderator"
            return "\(actor) removed you from the room\(reason.isEmpty ? "" : ": \(reason)")."
        case .ended(let reason):
            return "The room has ended\(reason.isEmpty ? "" : ": \(reason)")."
        case nil:
            return ""
        }
    }

    /// A server error in plain words, with what to do next.
    public static func explainError(code: String, message: String) -> String {
        // The server words its refusals as clauses ("only hosts can end the room"): said as a sentence.
        var said = message.isEmpty ? "" : message.prefix(1).uppercased() + message.dropFirst()
        var clause = said
        if clause.hasSuffix(".") { clause.removeLast() }
        if let last = said.last, !".?!".contains(last) { said += "." }
        switch code {
        case "forbidden": return said.isEmpty ? "The server refused: your role does not allow that." : said
        case "not_found": return (clause.isEmpty ? "No such person or role" : clause) + "; they may have just left."
        case "conflict": return said.isEmpty ? "That cannot be done right now." : said
        case "rate_limited": return "Too many requests at once; the server dropped one. Wait a second and try again."
        case "room_ended": return "The room has ended. Press q to close."
        case "room_full": return "The room is full. Try again later."
        case "internal": return "The server failed to do that. Try again in a moment."
        case "unconfirmed":
            return "The server could not confirm that went through; it may still appear. Check before trying again."
        // Said only of a repeat the client sent itself: what it asked for took effect the first time.
        case "already_applied": return "That went through already."
        default: return said.isEmpty ? "The server could not do that and did not say why." : said
        }
    }

    /// What poor connection this person has: the loss when there is any, else the delay or the jitter.
    static func poorConnection(_ quality: PeerQuality) -> String {
        if quality.lossPercent > 0 { return "Your connection is losing \(quality.lossPercent)% of the audio." }
        if quality.rttMilliseconds >= quality.jitterMilliseconds * 4 {
            return "Your connection is slow: sound takes \(quality.rttMilliseconds) ms to reach the room and back."
        }
        return "Your connection is uneven (\(quality.jitterMilliseconds) ms of jitter): the audio may break up."
    }

    /// A speaker's network quality in `/who`: "signal 4/5", with the loss when it is poor, "no media" at 0.
    static func signalWords(_ quality: PeerQuality) -> String {
        if quality.score == 0 { return "no media" }
        let words = "signal \(quality.score)/\(PeerQuality.best)"
        return quality.isPoor ? words + ", poor: losing \(quality.lossPercent)%" : words
    }

    /// The room's topic, for `/topic` alone and the start of `/who`.
    public static func topic(_ room: RoomState) -> String {
        room.topic.isEmpty ? "This room has no topic." : "Topic: \"\(room.topic)\"."
    }

    /// The most audience names `/who` lists before it says how many more there are.
    static let whoAudienceNames = 30

    /// Who is where, for `/who`: the topic (when there is one), the stage (with mute and your volumes), the raised hands in order with their
    /// waiting times and pending invitations (for those who run the stage; others hear their own place), the
    /// invitations of people without a raised hand, and the audience.
    public static func who(_ state: AppState) -> String {
        let room = state.room
        let now = state.now
        func waited(_ since: Timestamp) -> String { formatWaiting(seconds: Int(max(0, now - since) / 1000)) }
        func invitation(_ id: PeerID) -> String? {
            guard let pending = room.invitations[id] else { return nil }
            let by = pending.by == room.selfID ? "you" : room.inviterName(pending.by)
            return "invited by \(by) \(waited(pending.at)) ago"
        }
        let stage = room.stage.map { peer -> String in
            var parts = [room.roles.label(of: peer.role), peer.muted ? "muted" : "live"]
            if !peer.micWorking { parts.append("microphone not working") }
            if peer.id == room.selfID { parts.append("you") }
            if let volume = state.volumes[peer.id] { parts.append("\(volume) % for you") }
            if let quality = room.quality[peer.id] { parts.append(signalWords(quality)) }
            return peer.name + " (" + parts.joined(separator: ", ") + ")"
        }
        var sentences = room.topic.isEmpty ? [] : [topic(room)]
        if let recorded = recordingWho(state) { sentences.append(recorded) }
        if let streamed = streamingWho(state) { sentences.append(streamed) }
        sentences.append("On stage: " + (stage.isEmpty ? "nobody" : stage.joined(separator: ", ")) + ".")
        let hands = room.raisedHands
        if hands.count == 0 {
            sentences.append("No raised hands.")
        } else if state.seesWholeQueue {
            let entries = hands.enumerated().map { index, peer -> String in
                var parts = [peer.handRaisedAt.map(waited) ?? "0m00s"]
                if let invited = invitation(peer.id) { parts.append(invited) }
                return "\(index + 1). \(peer.name) (" + parts.joined(separator: ", ") + ")"
            }
            sentences.append("Raised hands, in order: " + entries.joined(separator: ", ") + ".")
        } else {
            let place = room.selfID.flatMap { room.queuePosition(of: $0) }.map { "; yours is \(ordinal($0))" } ?? ""
            sentences.append("\(hands.count) raised \(hands.count == 1 ? "hand" : "hands")\(place).")
        }
        if state.seesWholeQueue {
            let invitedListeners = room.audience.filter { room.invitations[$0.id] != nil }
            if !invitedListeners.isEmpty {
                let entries = invitedListeners.map { "\($0.name) (\(invitation($0.id) ?? ""))" }
                sentences.append("Invited from the audience: " + entries.joined(separator: ", ") + ".")
            }
        }
        let audience = room.audience
        if audience.count == 0 {
            sentences.append("Nobody else is listening.")
        } else {
            let names = audience.prefix(whoAudienceNames).map(\.name)
            let more = audience.count - names.count
            sentences.append(
                "Listening (\(formatCount(audience.count))): " + names.joined(separator: ", ")
                    + (more > 0 ? " and \(formatCount(more)) more" : "") + ".")
        }
        return sentences.joined(separator: " ")
    }

    /// The commands line mode understands, for `/help` there: the one table of commands.
    public static var plainHelp: String {
        let entries = Command.usages
        let width = entries.map(\.usage.count).max() ?? 0
        return entries.map { $0.usage + String(repeating: " ", count: width - $0.usage.count + 2) + $0.summary }
            .joined(separator: "\n") + "\nA line that does not start with / is said to everyone."
    }
}
