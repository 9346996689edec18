import RoomCore
import TermUI

/// Room events as sentences, for the event pane and for line mode (`--plain`).
public enum Narration {
    /// A sentence about an event, and whether it belongs in the event pane (line mode says every sentence).
    public struct Sentence: Sendable, Equatable {
        public var text: String
        public var logged: Bool

        public init(_ text: String, logged: Bool = true) {
            self.text = text
            self.logged = logged
        }
    }

    static func name(_ id: PeerID?, _ state: AppState) -> String? {
        // The server names no actor (an empty identity) when it acted itself, e.g. on an accepted invitation.
        guard let id, !id.rawValue.isEmpty else { return nil }
        if id == state.room.selfID { return "you" }
        return state.room.peers[id]?.name ?? id.rawValue
    }

    static func capitalized(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst()
    }

    static func article(_ word: String) -> String {
        guard let first = word.first else { return word }
        return ("aeiou".contains(first.lowercased()) ? "an " : "a ") + word
    }

    /// The sentence for an event that was applied; `context` is what the state held before it.
    static func sentence(for event: ServerEvent, context: EventContext, state: AppState) -> Sentence? {
        let room = state.room
        let selfID = room.selfID
        switch event {
        case .joined(let snapshot):
            guard let me = room.me else { return nil }
            let role = room.roles.label(of: me.role)
            let people = room.peers.count
            var text =
                "You joined \(snapshot.roomID) as \(me.name) (\(role)). \(people) \(people == 1 ? "person" : "people") here: "
                + "\(room.stage.count) on stage, \(room.raisedHands.count) raised \(room.raisedHands.count == 1 ? "hand" : "hands"), "
                + "\(room.audience.count) listening."
            if !snapshot.topic.isEmpty { text += " Topic: \"\(snapshot.topic)\"." }
            if context.hadSnapshot { text = "Back in the room. " + text }
            return Sentence(text)
        case .peerJoined(let peer):
            return Sentence("\(peer.name) joined.")
        case .peerLeft(let id):
            if id == selfID { return Sentence("You left the room.") }
            return Sentence("\(context.subjectName ?? id.rawValue) left.")
        case .roleChanged(let id, let role, let by):
            let label = room.roles.label(of: role)
            let onStage = room.roles.isOnStage(role)
            let wasOnStage = context.subjectRole.map { room.roles.isOnStage($0) } ?? false
            if id == selfID {
                if onStage && !wasOnStage {
                    let can = room.roles.can(role, .publishAudio)
                    let how = state.lineMode ? "type /unmute" : "press m"
                    return Sentence(
                        "You are on the stage now as \(label)" + (can ? "; you are muted, \(how) to talk." : "."))
                }
                if !onStage { return Sentence("You are back in the audience.") }
                return Sentence("You are now \(article(label)).")
            }
            let who = context.subjectName ?? id.rawValue
            let actor = by.flatMap { $0 == id ? nil : name($0, state) }.map(capitalized)
            if onStage && !wasOnStage {
                return Sentence(
                    actor.map { "\($0) brought \(who) on stage as \(label)." } ?? "\(who) joined the stage as \(label)."
                )
            }
            if !onStage {
                return Sentence(actor.map { "\($0) moved \(who) to the audience." } ?? "\(who) left the stage.")
            }
            return Sentence(actor.map { "\($0) made \(who) \(article(label))." } ?? "\(who) is now \(article(label)).")
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
                return Sentence("\(capitalized(actor)) muted \(who).")
            }
            if id == selfID {
                return Sentence(muted ? "You are muted." : "You are live: others hear you.", logged: false)
            }
            return Sentence("\(who) \(muted ? "muted" : "unmuted").", logged: false)
        case .speakers:
            return nil
        case .chat(let message):
            let from = message.from == selfID ? "You" : message.fromName
            switch message.to {
            case .everyone: return Sentence("\(from) said: \(message.text)")
            case .peer: return Sentence("\(from) (privately): \(message.text)")
            case .role(let role): return Sentence("\(from) (to \(room.roles.label(of: role))s): \(message.text)")
            }
        case .invitedToSpeak(let by):
            let who = capitalized(name(by, state) ?? by.rawValue)
            if state.lineMode { return Sentence("\(who) invited you to speak. Type /accept or /decline.") }
            return Sentence("\(who) invited you to speak. Press a to accept or d to decline.")
        case .inviteDeclined:
            // RoomCore's notice says it on the status line (and line mode says the notice).
            return nil
        case .askedToMute(let by):
            let how = state.lineMode ? "Type /mute." : "Press m."
            return Sentence("\(capitalized(name(by, state) ?? by.rawValue)) asks you to mute. \(how)")
        case .removed(let id, let reason, let by):
            if id == selfID { return Sentence(endingNotice(room)) }
            let who = context.subjectName ?? id.rawValue
            let actor = by.flatMap { name($0, state) }.map(capitalized)
            let why = reason.isEmpty ? "" : ": \(reason)"
            return Sentence((actor.map { "\($0) removed \(who)" } ?? "\(who) was removed") + why + ".")
        case .roomEnded:
            return Sentence(endingNotice(room))
        case .topicChanged(let topic, let by):
            let actor = by.flatMap { name($0, state) }.map(capitalized) ?? "The server"
            return Sentence(topic.isEmpty ? "\(actor) cleared the topic." : "\(actor) set the topic: \"\(topic)\".")
        case .listingChanged(let listed, let by):
            let actor = by.flatMap { name($0, state) }.map(capitalized) ?? "The server"
            return Sentence(
                listed
                    ? "\(actor) listed the room: it shows in the lobby."
                    : "\(actor) unlisted the room: it no longer shows in the lobby; links to it still work.")
        case .inviteLink(let invite):
            let label = room.roles.label(of: invite.role)
            let valid = lifetime(invite.expiresAt - state.now)
            return Sentence("Invite link for \(label)s, valid \(valid): \(invite.link)")
        case .reconnecting(let attempt):
            return Sentence("Connection lost; reconnecting (try \(attempt)). Your place is kept.")
        case .reconnected:
            return Sentence("Reconnected.")
        case .error:
            return nil
        }
    }

    /// How long something lasts, to the nearest minute, in the largest unit it is a whole number of: "7 days",
    /// "2 hours", "90 minutes", "1 minute" ("30 seconds" under a minute).
    static func lifetime(_ milliseconds: Int64) -> String {
        func unit(_ count: Int64, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        let seconds = max(0, milliseconds + 500) / 1000
        if seconds < 60 { return unit(seconds, "second") }
        let minutes = (seconds + 30) / 60
        if minutes % (24 * 60) == 0 { return unit(minutes / (24 * 60), "day") }
        if minutes % 60 == 0 { return unit(minutes / 60, "hour") }
        return unit(minutes, "minute")
    }

    /// Who speaks now, for line mode: said when the current speaker changes.
    static func speaking(_ id: PeerID, _ state: AppState) -> String? {
        guard let peer = state.room.peers[id] else { return nil }
        return id == state.room.selfID ? "You are speaking." : "\(peer.name) is speaking."
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
        case .left:
            return "You are no longer in the room; you may have joined from somewhere else."
        case nil:
            return ""
        }
    }

    /// A server error in plain words, with what to do next.
    public static func explainError(code: String, message: String) -> String {
        let said = message.isEmpty ? "" : message.prefix(1).uppercased() + message.dropFirst()
        switch code {
        case "forbidden": return said.isEmpty ? "The server refused: your role does not allow that." : said
        case "not_found": return (said.isEmpty ? "No such person or role" : said) + "; they may have just left."
        case "conflict": return (said.isEmpty ? "That cannot be done right now" : said) + "."
        case "rate_limited": return "Too many requests at once; the server dropped one. Wait a second and try again."
        case "room_ended": return "The room has ended. Press q to close."
        case "room_full": return "The room is full. Try again later."
        case "internal": return "The server failed to do that. Try again in a moment."
        default: return said.isEmpty ? "The server reported a problem (\(code))." : said
        }
    }

    /// Who is where, for `/who`.
    public static func who(_ state: AppState) -> String {
        let room = state.room
        let stage = room.stage.map { peer -> String in
            var text = peer.name + " (\(room.roles.label(of: peer.role))"
            if peer.muted { text += ", muted" }
            if let volume = state.volumes[peer.id] { text += ", \(volume) % for you" }
            text += ")"
            return text
        }
        let hands = room.raisedHands.count
        return "On stage: " + (stage.isEmpty ? "nobody" : stage.joined(separator: ", ")) + ". "
            + "\(hands) raised \(hands == 1 ? "hand" : "hands"), \(room.audience.count) listening."
    }

    /// The commands line mode understands, for `/help` there.
    public static var plainHelp: String {
        let entries =
            Command.usages.filter { $0.name != "help" } + clientCommands + [("help", "/help", "show this help")]
        let width = entries.map(\.usage.count).max() ?? 0
        return entries.map { $0.usage + String(repeating: " ", count: width - $0.usage.count + 2) + $0.summary }
            .joined(separator: "\n") + "\nA line that does not start with / is said to everyone."
    }
}
