import RoomCore
import TermUI

/// The lobby in sentences: what line mode prints and what the screen's "Happening" pane shows.
public enum LobbyNarration {
    /// What line mode understands.
    public static let help =
        "Type a room's number or name to join it (or /join NAME); /rooms lists the rooms again; /open NAME TOPIC "
        + "opens a new room with you as its host, where the server allows it; /quit leaves. In a room, /leave comes "
        + "back here."

    /// A room as line mode names it: its topic and its name, or its name alone.
    static func title(_ listing: RoomListing) -> String {
        listing.topic.isEmpty ? listing.room : "\(listing.topic) (\(listing.room))"
    }

    /// Who is on stage, in words: "Ana (host), Bo (moderator), Chen and 2 more".
    static func stage(_ listing: RoomListing) -> String {
        guard listing.onStage > 0 else { return "nobody" }
        var names = listing.stage.map { member -> String in
            member.role == .host || member.role == .moderator ? "\(member.name) (\(member.role.rawValue))" : member.name
        }
        let more = listing.onStage - listing.stage.count
        if more > 0 { names.append("\(more) more") }
        return English.list(names)
    }

    /// How long ago, in words: "just now", "12 minutes ago", "2 hours ago".
    static func ago(_ milliseconds: Int64) -> String {
        let minutes = max(0, milliseconds) / 60_000
        if minutes < 1 { return "just now" }
        if minutes < 60 { return "\(minutes) minute\(minutes == 1 ? "" : "s") ago" }
        let hours = minutes / 60
        if hours < 48 { return "\(hours) hour\(hours == 1 ? "" : "s") ago" }
        return "\(hours / 24) days ago"
    }

    /// One room, for a listing: "Friday terminal hour (lobby): 1,204 listening, 3 hands up; on stage: Ana (host),
    /// Bo (moderator) and Chen; started 12 minutes ago."
    static func line(_ listing: RoomListing, now: Timestamp) -> String {
        var text =
            "\(title(listing)): \(listing.recording ? "being recorded; " : "")"
            + (listing.streaming.isEmpty ? "" : "streamed live; ") + "\(formatCount(listing.listeners)) listening"
        if !listing.audience.isEmpty {
            let more = listing.listeners - listing.audience.count
            text += " (" + English.list(listing.audience + (more > 0 ? ["\(formatCount(more)) more"] : [])) + ")"
        }
        if listing.raisedHands > 0 {
            text += ", \(formatCount(listing.raisedHands)) \(listing.raisedHands == 1 ? "hand" : "hands") up"
        }
        return text + "; on stage: \(stage(listing)); started \(ago(now - listing.startedAt))."
    }

    /// The whole list, numbered, with how to join; `renumber` receives the order the numbers refer to.
    public static func listing(_ state: LobbyState, renumber: inout [String]) -> String {
        renumber = state.order
        guard !state.order.isEmpty else {
            let start: String
            if state.mayOpen {
                start = "To start a room, type /open NAME TOPIC (e.g. /open jazz Late night jazz): you are its host."
            } else if state.openRooms == .hosts {
                start =
                    "On this server, people with a host's lobby link start rooms (/open NAME TOPIC); ask a host for "
                    + "one, or for a link to their room."
            } else {
                start =
                    "To start a room, its host joins it with a host's room link (clubroom invite --room NAME --role "
                    + "host, on the server)."
            }
            return "No live rooms right now; new rooms are announced here as they start. Have a link to a room? "
                + "Type /quit, then run: clubroom join LINK. \(start) Or wait here; /quit leaves."
        }
        let count = state.order.count
        var lines = ["\(count) live \(count == 1 ? "room" : "rooms"), most listeners first:"]
        for (index, room) in state.order.enumerated() {
            guard let listing = state.rooms[room] else { continue }
            lines.append("\(index + 1). " + line(listing, now: state.now))
        }
        lines.append("Type a number or a room's name to join; /rooms lists them again; /quit leaves.")
        return lines.joined(separator: "\n")
    }

    /// The sentence for a change worth announcing (a room starting, ending, being listed or unlisted, a new
    /// topic), or nil for counts changing. `before` is what the lobby held for the room.
    public static func happening(_ change: ListingChange, before: RoomListing?) -> String? {
        switch change {
        case .added(let listing, let why):
            // A room the lobby already showed (the list it just got held it) is no news.
            if before != nil { return nil }
            let onStage = listing.onStage > 0 ? " \(stage(listing)) on stage." : ""
            switch why {
            case .started: return "Room started: \(title(listing)).\(onStage)"
            case .listed: return "Now listed: \(title(listing)).\(onStage)"
            }
        case .updated(let listing):
            guard let before else { return nil }
            if before.recording != listing.recording {
                return listing.recording
                    ? "\(title(listing)) is being recorded now." : "\(title(listing)) is no longer being recorded."
            }
            if before.streaming.isEmpty != listing.streaming.isEmpty {
                return listing.streaming.isEmpty
                    ? "\(title(listing)) is no longer streamed live." : "\(title(listing)) is streamed live now."
            }
            guard before.topic != listing.topic else { return nil }
            return listing.topic.isEmpty
                ? "\(listing.room) has no topic now." : "\(listing.room) is now \"\(listing.topic)\"."
        case .removed(let room, let why):
            let name = before.map(title) ?? room
            switch why {
            case .ended: return "Room ended: \(name)."
            case .empty: return "Room ended: \(name); everyone left."
            case .unlisted: return "No longer listed: \(name)."
            }
        }
    }
}

/// The lobby's state as the screen shows it.
public enum LobbyScreenMapper {
    /// How long a room has been live, compactly: `now`, `12m`, `1h05m`, `2d03h`.
    public static func age(_ milliseconds: Int64) -> String {
        let minutes = max(0, milliseconds) / 60_000
        if minutes < 1 { return "now" }
        if minutes < 60 { return "\(minutes)m" }
        if minutes < 24 * 60 { return "\(minutes / 60)h" + (minutes % 60 < 10 ? "0" : "") + "\(minutes % 60)m" }
        let hours = minutes / 60
        return "\(hours / 24)d" + (hours % 24 < 10 ? "0" : "") + "\(hours % 24)h"
    }

    /// What an empty lobby suggests, after the line that says it is empty: open a room with a link, start one
    /// (`n` where this lobby may; else who may, or how a host starts one), or wait.
    public static func emptyAdvice(_ state: LobbyState) -> [String] {
        let start: String
        if state.mayOpen {
            start = "Press n to start a room: you give it a name and a topic, and you are its host."
        } else if state.openRooms == .hosts {
            start =
                "On this server, people with a host's lobby link start rooms (n); ask a host for one, or for a "
                + "link to their room."
        } else {
            start =
                "To start a room, its host joins it with a host's room link (clubroom invite --room NAME --role "
                + "host, on the server); it is listed here once someone is in it."
        }
        return [
            "Have a link to a room? Press q, then run: clubroom join LINK", start,
            "Or wait here for one to start. q quits.",
        ]
    }

    public static func model(_ state: LobbyState) -> LobbyScreenModel {
        let entries = state.order.compactMap { room -> LobbyScreenModel.Entry? in
            guard let listing = state.rooms[room] else { return nil }
            return LobbyScreenModel.Entry(
                room: listing.room, topic: listing.topic,
                stage: listing.stage.map { member in
                    LobbyScreenModel.StageName(
                        member.name,
                        badge: member.role == .host ? .host : member.role == .moderator ? .moderator : .none)
                }, onStage: listing.onStage, listeners: listing.listeners, raisedHands: listing.raisedHands,
                age: age(state.now - listing.startedAt), recording: listing.recording,
                streaming: !listing.streaming.isEmpty, audience: listing.audience)
        }
        let connection: LobbyScreenModel.Connection
        switch state.connection {
        case .connecting: connection = .connecting
        case .connected: connection = .connected
        case .reconnecting(let attempt): connection = .reconnecting(attempt: attempt)
        case .disconnected: connection = .disconnected
        }
        return LobbyScreenModel(
            server: state.server, connection: connection, listed: state.listed, entries: entries,
            selected: state.selectedIndex, happenings: state.happenings,
            notice: state.notice.map { RoomScreenModel.Notice($0.text, isError: $0.kind != .info) },
            joining: state.joining, emptyAdvice: emptyAdvice(state), mayOpen: state.mayOpen,
            form: state.form.map { form in
                LobbyScreenModel.Form(
                    name: form.name, topic: form.topic, onTopic: form.onTopic, problem: form.problem,
                    waiting: form.sent != nil)
            })
    }
}
