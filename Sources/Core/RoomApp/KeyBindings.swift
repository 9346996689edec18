import RoomCore
import TermUI

/// What a key does in the room view, with no dialog or command line open. The key pressed goes along with it,
/// for the commands whose keys differ only in direction (the arrows, `+` and `-`) or in the prompt they open
/// (`/` and `:`).
public enum KeyCommand: Sendable, Equatable, CaseIterable {
    case toggleMute
    case pushToTalk
    case toggleHand
    case moveSelection
    case openActions
    case inviteSelected
    case inviteNext
    case withdrawSelected
    case moveToAudience
    case stepUp
    case muteSelected
    case muteAll
    case lowerSelectedHand
    case clearHands
    case removeSelected
    case toggleRecording
    case changeVolume
    case openChat
    case openCommandLine
    case react
    case toggleChat
    case scrollChat
    case clearNotice
    case showStats
    case retryNow
    case suspend
    case showHelp
    case leave

    /// Whether the command asks something of the room (or opens a way to), rather than moving around the screen,
    /// showing help or leaving. Once the room is over these only say why nothing can be asked any more.
    var actsOnRoom: Bool {
        switch self {
        case .toggleMute, .pushToTalk, .toggleHand, .openActions, .inviteSelected, .inviteNext, .withdrawSelected,
            .moveToAudience, .stepUp, .muteSelected, .muteAll, .lowerSelectedHand,
            .clearHands, .removeSelected, .toggleRecording, .openChat, .openCommandLine, .react,
            .retryNow, .showStats:
            true
        case .moveSelection, .changeVolume, .toggleChat, .scrollChat, .clearNotice, .suspend, .showHelp, .leave:
            false
        }
    }
}

/// A key hint the status line may show: its place in the order of importance, and its words for the person's
/// situation now (`nil` when it does not apply).
public struct StatusHint: Sendable {
    /// Lower is more important: on a narrow line the most important hints that fit are kept.
    public var rank: Int
    /// The words beside the key, from the status line (role, microphone, hand, whether the room is over) and the
    /// number of chat messages waiting while the pane is hidden.
    public var words: @Sendable (_ status: RoomScreenModel.StatusLine, _ unreadChat: Int) -> String?
}

/// One row of the room view's key table: the keys, what they do, and how each view says it. Dispatch, the help
/// overlay, the status line's hints and the key table of docs/ui.md are all made from these rows.
public struct KeyBinding: Sendable {
    /// The keys, shown in the help, the docs and (the first) the status line.
    public var keys: [Key]
    /// Other keys that do the same, listed only in the docs (the help's key column is narrow).
    public var alternatives: [Key]
    /// What the keys do.
    public var command: KeyCommand
    /// The help overlay's words.
    public var help: String
    /// The docs' words for what the keys do, in full.
    public var does: String
    /// What someone whose role does not allow it is told, for the docs ("" when it is for everyone).
    public var refusal: String
    /// The status line's hint, for the keys worth a hint.
    public var hint: StatusHint?

    init(
        _ keys: [Key], also alternatives: [Key] = [], _ command: KeyCommand, help: String, does: String,
        refusal: String = "", hint: StatusHint? = nil
    ) {
        self.keys = keys
        self.alternatives = alternatives
        self.command = command
        self.help = help
        self.does = does
        self.refusal = refusal
        self.hint = hint
    }
}

/// The room view's keys: one table, many views.
public enum KeyBindings {
    /// Whether the person runs the stage (a host or moderator, as the screen names roles) in a room not yet over:
    /// the hints for inviting and for the actions menu are theirs.
    private static func isRunningTheStage(_ status: RoomScreenModel.StatusLine) -> Bool {
        !status.roomOver && (status.role == .host || status.role == .moderator)
    }

    /// Every key of the room view, in the order the help lists them.
    public static let room: [KeyBinding] = [
        KeyBinding(
            [.char("m")], .toggleMute, help: "mute / unmute yourself (speakers)", does: "mute / unmute yourself",
            refusal: "\"only hosts, moderators and speakers can speak\"",
            hint: StatusHint(rank: 10) { status, _ in
                status.roomOver ? nil : status.micMuted.map { $0 ? "unmute" : "mute" }
            }),
        KeyBinding(
            [.char(" ")], .pushToTalk, help: "push to talk: hold, or tap to latch (speakers)",
            does: "push to talk: a tap latches the microphone open or shut", refusal: "same as `m`",
            hint: StatusHint(rank: 40) { status, _ in !status.roomOver && status.role == .speaker ? "talk" : nil }),
        KeyBinding(
            [.char("r")], .toggleHand, help: "raise / lower your hand (audience)", does: "raise / lower your hand",
            refusal: "\"you are already on the stage\"",
            hint: StatusHint(rank: 50) { status, _ in
                guard !status.roomOver, status.role == .audience else { return nil }
                if status.handRaised { return "lower hand" }
                // With raising hands turned off, r is only refused: it is not offered.
                return status.handsOff ? nil : "raise hand"
            }),
        KeyBinding(
            [.up, .down, .left, .right, .char("h"), .char("j"), .char("k"), .char("l")],
            also: [.home, .end], .moveSelection, help: "move the selection",
            does: "move the selection: `←→` `hl` the previous / next person, across sections in screen order; "
                + "`↑↓` `jk` a row, past the end of a section into the next (same column); `Home` `End` the first "
                + "/ last person"),
        KeyBinding(
            [.enter], .openActions, help: "actions for the selected peer",
            does: "the actions menu for the selected person (only the actions you may take on them)",
            refusal: "\"there is nothing you can do for Eli here\"",
            hint: StatusHint(rank: 30) { status, _ in isRunningTheStage(status) ? "actions" : nil }),
        KeyBinding(
            [.char("i")], .inviteSelected, help: "invite the selected peer to speak",
            does: "invite the selected person to speak", refusal: "from the role table"),
        KeyBinding(
            [.char("n")], .inviteNext, help: "invite the next raised hand not invited yet",
            does: "invite the first raised hand in the queue that has no pending invitation",
            refusal: "from the role table; \"no raised hands to invite\"",
            hint: StatusHint(rank: 20) { status, _ in isRunningTheStage(status) ? "invite next" : nil }),
        KeyBinding(
            [.char("w")], .withdrawSelected, help: "withdraw the selected peer's invitation",
            does: "take back the selected person's pending invitation to speak",
            refusal: "from the role table; \"Eli has no pending invitation\""),
        KeyBinding(
            [.char("a")], .moveToAudience, help: "move the selected peer to the audience",
            does: "move the selected person to the audience (yourself: step down, after a question)",
            refusal: "from the role table"),
        KeyBinding(
            [.char("u")], .stepUp, help: "step back up to the role you stepped down from",
            does: "step back up to the role you stepped down from (as far as your token allows)",
            refusal: "\"you cannot raise your own role; a host or moderator can move you\""),
        KeyBinding(
            [.char("M")], .muteSelected, help: "mute the selected peer",
            does: "mute the selected person (yourself: mute)", refusal: "from the role table"),
        KeyBinding(
            [.char("Z")], .muteAll, help: "mute every speaker but you (asks first)",
            does: "mute everyone on the stage below you, after a confirmation (`/muteall`)",
            refusal: "from the role table, before asking"),
        KeyBinding(
            [.char("L")], .lowerSelectedHand, help: "lower the selected raised hand",
            does: "lower the selected person's raised hand (`/lower NAME`; yourself: lower your hand)",
            refusal: "from the role table; \"Eli's hand is not raised\""),
        KeyBinding(
            [.char("C")], .clearHands, help: "lower every raised hand (asks first)",
            does: "lower every raised hand, after a confirmation (`/clearhands`)",
            refusal: "from the role table, before asking; \"no raised hands to lower\""),
        KeyBinding(
            [.char("x")], .removeSelected, help: "remove the selected peer (asks first)",
            does: "remove the selected person, after a confirmation", refusal: "from the role table, before asking"),
        KeyBinding(
            [.char("R")], .toggleRecording, help: "start recording the room; stop it (asks first)",
            does: "start recording the room (everyone sees `● REC`); while it is recorded, stop after a "
                + "confirmation (`/record`, `/record stop`)",
            refusal: "from the role table (\"Only hosts and moderators can start and stop recording.\")"),
        KeyBinding(
            [.char("+"), .char("-")], also: [.char("=")], .changeVolume,
            help: "selected speaker louder / quieter (for you)",
            does: "the selected speaker louder / quieter for you, by 10 % (0–200 %); `=` is `+` unshifted",
            refusal: "\"you do not hear yourself; …\", "
                + "\"Eli is not on the stage; to set their volume for later, type /volume Eli PERCENT\""),
        KeyBinding(
            [.char("c")], .openChat, help: "say something to the room",
            does: "the chat line: what you type is said to everyone (a line starting with `/` is a command)",
            hint: StatusHint(rank: 60) { status, _ in status.roomOver ? nil : "chat" }),
        KeyBinding(
            [.char("e")], .react, help: "react: clap, up, haha, heart or wave",
            does: "the command line with `/react ` typed: add clap, up, haha, heart or wave (👏 👍 😂 ❤️ ✋) and "
                + "press Enter; the reaction shows beside your name for a few seconds"),
        KeyBinding(
            [.char("/"), .char(":")], .openCommandLine, help: "type a command (/help lists them)",
            does: "the command line: every line is a command (its prompt is the key pressed)"),
        KeyBinding(
            [.tab], .toggleChat, help: "show / hide chat and events",
            does: "show / hide chat and events; the status line shows the unread count while hidden",
            hint: StatusHint(rank: 1) { _, unread in unread > 0 ? "chat (\(formatCount(unread)))" : nil }),
        KeyBinding(
            [.pageUp, .pageDown], also: [.wheelUp, .wheelDown], .scrollChat, help: "scroll chat and events",
            does: "scroll chat and events a page (the mouse wheel three lines); new lines while scrolled up are "
                + "counted, not scrolled into view; `PgDn` at the bottom follows the newest again"),
        KeyBinding([.escape], .clearNotice, help: "clear the notice", does: "clear the notice"),
        KeyBinding(
            [.char("s")], .showStats, help: "speaking time and turns (hosts, moderators)",
            does: "show / hide each person's speaking time and turns since the room went live, most first, asked "
                + "of the server again every 2 s while shown (`/stats`)",
            refusal: "\"Only hosts and moderators can see how long each person has spoken.\""),
        KeyBinding(
            [.ctrl("r")], .retryNow, help: "reconnect now (while reconnecting)",
            does: "while the connection is down, try again now instead of waiting for the next try",
            hint: StatusHint(rank: 5) { status, _ in status.reconnecting ? "retry now" : nil }),
        KeyBinding(
            [.ctrl("z")], .suspend, help: "suspend (fg comes back)",
            does: "suspend to the shell, as in vim or htop; `fg` brings the room back (the server counts you as "
                + "gone after 15 s stopped, and the screen then reconnects)"),
        KeyBinding(
            [.char("?")], also: [.function(1)], .showHelp, help: "show / hide this help",
            does: "help (scroll with `jk`, close with `?` or `Esc`)",
            hint: StatusHint(rank: 0) { _, _ in "help" }),
        KeyBinding(
            [.char("q")], also: [.ctrl("c"), .ctrl("d")], .leave, help: "leave (hosts are asked first)",
            does: "leave; hosts (who may end the room) are asked first",
            hint: StatusHint(rank: 70) { _, _ in "leave" }),
    ]

    private static let byKey: [Key: KeyCommand] = {
        var table: [Key: KeyCommand] = [:]
        for binding in room {
            // A key listed twice keeps its first row (the key table's tests refuse such a table).
            for key in binding.keys + binding.alternatives where table[key] == nil { table[key] = binding.command }
        }
        return table
    }()

    /// What `key` does in the room view, or nil when it does nothing there.
    public static func command(for key: Key) -> KeyCommand? { byKey[key] }

    /// The status line's hints for this situation, most important first.
    public static func hints(for status: RoomScreenModel.StatusLine, unreadChat: Int) -> [KeyHint] {
        var ranked: [(rank: Int, hint: KeyHint)] = []
        for binding in room {
            guard let hint = binding.hint, let key = binding.keys.first, let words = hint.words(status, unreadChat)
            else { continue }
            ranked.append((hint.rank, KeyHint(name(of: key, glyphs: .unicode), words)))
        }
        return ranked.sorted { $0.rank < $1.rank }.map(\.hint)
    }

    /// How a key reads on screen and in the docs.
    public static func name(of key: Key, glyphs: Glyphs) -> String {
        switch key {
        case .char(" "): "space"
        case .char(let c): String(c)
        case .ctrl(let c): "Ctrl-" + c.uppercased()
        case .enter: "Enter"
        case .escape: "Esc"
        case .tab: "Tab"
        case .backTab: "Shift-Tab"
        case .backspace: "Backspace"
        case .delete: "Delete"
        case .up: glyphs.arrows[0]
        case .down: glyphs.arrows[1]
        case .left: glyphs.arrows[2]
        case .right: glyphs.arrows[3]
        case .home: "Home"
        case .end: "End"
        case .pageUp: "PgUp"
        case .pageDown: "PgDn"
        case .function(let n): "F\(n)"
        case .wheelUp: "wheel up"
        case .wheelDown: "wheel down"
        case .resize: "resize"
        case .unknown(let code): "key \(code)"
        }
    }

    /// Keys as they read together: the four arrows as one word (`↑↓←→`, or `arrows` where their glyphs are
    /// words), a run of single letters as one word (`hjkl`), anything else on its own.
    static func words(for keys: [Key], glyphs: Glyphs) -> [String] {
        var words: [String] = []
        var letters = ""
        var index = 0
        func flushLetters() {
            if !letters.isEmpty { words.append(letters) }
            letters = ""
        }
        while index < keys.count {
            let key = keys[index]
            if keys[index...].starts(with: [.up, .down, .left, .right]) {
                flushLetters()
                words.append(glyphs.arrows.allSatisfy { $0.count == 1 } ? glyphs.arrows.joined() : "arrows")
                index += 4
                continue
            }
            if case .char(let c) = key, c.isLetter, c.isLowercase, keys.count > 1 {
                letters.append(c)
            } else {
                flushLetters()
                words.append(name(of: key, glyphs: glyphs))
            }
            index += 1
        }
        flushLetters()
        return words
    }

    /// The help's key column for a row.
    public static func label(_ keys: [Key], glyphs: Glyphs) -> String {
        words(for: keys, glyphs: glyphs).joined(separator: " ")
    }

    /// The lines of the help overlay: every key of the room view, the actions menu's entries (each key works in
    /// the room view too), the keys of each dialog, then every command, all from their tables.
    public static func helpLines(glyphs: Glyphs) -> [KeyHint] {
        var lines = room.map { KeyHint(label($0.keys, glyphs: glyphs), $0.help) }
        func heading(_ text: String) {
            lines.append(KeyHint("", ""))
            lines.append(KeyHint("", text))
        }
        heading("In the actions menu (Enter)")
        lines += PeerAction.allCases.map { KeyHint($0.key, $0.help) }
        for dialog in DialogKeys.all {
            heading(dialog.title)
            lines += dialog.bindings.map { KeyHint(label($0.keys, glyphs: glyphs), $0.help) }
        }
        heading("Commands")
        lines += Command.usages.map { KeyHint($0.usage, $0.summary) }
        return lines
    }

    /// The key table of docs/ui.md, in Markdown.
    public static var markdownTable: String {
        var lines = ["| key | does | refused with |", "|---|---|---|"]
        for binding in room {
            let keys = words(for: binding.keys, glyphs: .unicode).map { "`\($0)`" }.joined(separator: " ")
            let also = words(for: binding.alternatives, glyphs: .unicode).map { "`\($0)`" }.joined(separator: " ")
            let cell = also.isEmpty ? keys : keys + ", also " + also
            lines.append("| \(cell) | \(binding.does) |" + (binding.refusal.isEmpty ? " |" : " \(binding.refusal) |"))
        }
        return lines.joined(separator: "\n")
    }

    /// The dialogs' key table of docs/ui.md, in Markdown.
    public static var dialogMarkdownTable: String {
        var lines = ["| dialog | keys | do |", "|---|---|---|"]
        lines.append(
            "| actions menu | "
                + PeerAction.allCases.map { "`\($0.key)`" }.joined(separator: " ")
                + " | the entry with that key (each works in the room view too) |")
        for dialog in DialogKeys.all {
            for binding in dialog.bindings {
                let keys = words(for: binding.keys, glyphs: .unicode).map { "`\($0)`" }.joined(separator: " ")
                lines.append("| \(dialog.name) | \(keys) | \(binding.help) |")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// One key row of a dialog: the keys, what they do there, and the help's words.
public struct DialogBinding<Action: Sendable & Equatable>: Sendable {
    public var keys: [Key]
    public var action: Action
    public var help: String

    init(_ keys: [Key], _ action: Action, _ help: String) {
        self.keys = keys
        self.action = action
        self.help = help
    }
}

/// A dialog's keys: its title in the help, its name in the docs, and its rows.
public struct DialogKeyTable: Sendable {
    public var title: String
    public var name: String
    public var bindings: [(keys: [Key], help: String)]
}

/// What a key does in each dialog. Each dialog's dispatch looks its keys up in its table, and the help and the
/// docs list the same rows.
public enum DialogKeys {
    /// The actions menu's own keys (its entries' keys are `PeerAction.key`).
    public enum MenuAction: Sendable, Equatable { case next, previous, choose, close, leave }
    /// A confirmation's keys.
    public enum ConfirmAction: Sendable, Equatable { case toggle, confirm, choose, cancel, leave }
    /// The invitation prompt's keys.
    public enum InvitationAction: Sendable, Equatable { case accept, decline, toggle, choose, leave, help }
    /// The help overlay's keys.
    public enum HelpAction: Sendable, Equatable { case close, down, up, pageDown, pageUp, leave }

    public static let menu: [DialogBinding<MenuAction>] = [
        DialogBinding([.down, .char("j"), .tab], .next, "next entry"),
        DialogBinding([.up, .char("k"), .backTab], .previous, "previous entry"),
        DialogBinding([.enter, .right], .choose, "do the chosen entry"),
        DialogBinding([.escape, .char("q"), .left, .char("h")], .close, "close the menu"),
        DialogBinding([.ctrl("c")], .leave, "close, and leave the room"),
    ]

    public static let confirmation: [DialogBinding<ConfirmAction>] = [
        DialogBinding([.left, .right, .char("h"), .char("l"), .tab, .backTab], .toggle, "switch between the buttons"),
        DialogBinding([.char("y")], .confirm, "go ahead"),
        DialogBinding([.enter], .choose, "the chosen button (Cancel at first)"),
        DialogBinding([.escape, .char("n")], .cancel, "cancel"),
        DialogBinding([.ctrl("c")], .leave, "cancel; at the leave question, leave (a second Ctrl-C leaves)"),
    ]

    public static let invitation: [DialogBinding<InvitationAction>] = [
        DialogBinding([.char("a"), .char("y")], .accept, "accept: join the stage muted"),
        DialogBinding([.char("d"), .char("n"), .escape], .decline, "decline"),
        DialogBinding([.left, .right, .char("h"), .char("l"), .tab, .backTab], .toggle, "switch between the buttons"),
        DialogBinding([.enter], .choose, "the chosen button"),
        DialogBinding([.char("q"), .ctrl("c")], .leave, "leave the room"),
        DialogBinding([.char("?")], .help, "show / hide the help over the invitation"),
    ]

    public static let help: [DialogBinding<HelpAction>] = [
        DialogBinding([.char("?"), .escape, .char("q"), .enter, .function(1)], .close, "close the help"),
        DialogBinding([.down, .char("j")], .down, "scroll down a line"),
        DialogBinding([.up, .char("k")], .up, "scroll up a line"),
        DialogBinding([.pageDown, .char(" ")], .pageDown, "scroll down a page"),
        DialogBinding([.pageUp], .pageUp, "scroll up a page"),
        DialogBinding([.ctrl("c")], .leave, "close, and leave the room"),
    ]

    /// What a key does in the lobby's list.
    public enum LobbyCommand: Sendable, Equatable {
        case quit, up, down, pageUp, pageDown, first, last, join, open, refresh, help, clearNotice
    }

    /// The lobby's keys: its dispatch (`reduceLobby`) looks them up here, and the docs' lobby key table is made
    /// from the same rows.
    public static let lobby: [DialogBinding<LobbyCommand>] = [
        DialogBinding([.up, .char("k")], .up, "choose the room above"),
        DialogBinding([.down, .char("j")], .down, "choose the room below"),
        DialogBinding([.pageUp], .pageUp, "five rooms up"),
        DialogBinding([.pageDown], .pageDown, "five rooms down"),
        DialogBinding([.home, .char("g")], .first, "the first room"),
        DialogBinding([.end, .char("G")], .last, "the last room"),
        DialogBinding([.enter], .join, "join the chosen room (`q` in the room comes back)"),
        DialogBinding([.char("n")], .open, "open a new room, with you as its host (where the server allows it)"),
        DialogBinding([.char("r")], .refresh, "ask for the whole list again"),
        DialogBinding([.char("?"), .function(1)], .help, "say the keys"),
        DialogBinding([.escape], .clearNotice, "clear the notice"),
        DialogBinding([.char("q"), .ctrl("c")], .quit, "quit"),
    ]

    /// The lobby's key table of docs/ui.md, in Markdown.
    public static var lobbyMarkdownTable: String {
        var lines = ["| lobby key | does |", "|---|---|"]
        for binding in lobby {
            let keys = KeyBindings.words(for: binding.keys, glyphs: .unicode).map { "`\($0)`" }.joined(separator: " ")
            lines.append("| \(keys) | \(binding.help) |")
        }
        return lines.joined(separator: "\n")
    }

    /// The dialogs in the order the help lists them.
    public static var all: [DialogKeyTable] {
        [
            DialogKeyTable(
                title: "In the actions menu, also", name: "actions menu", bindings: menu.map { ($0.keys, $0.help) }),
            DialogKeyTable(
                title: "When asked to confirm", name: "confirmation",
                bindings: confirmation.map { ($0.keys, $0.help) }),
            DialogKeyTable(
                title: "Invited to speak", name: "invitation", bindings: invitation.map { ($0.keys, $0.help) }),
            DialogKeyTable(title: "In this help", name: "help", bindings: help.map { ($0.keys, $0.help) }),
        ]
    }

    /// What `key` does in a dialog with these rows.
    static func action<Action>(for key: Key, in table: [DialogBinding<Action>]) -> Action? {
        table.first { $0.keys.contains(key) }?.action
    }
}

/// The help overlay's lines for the state's glyphs.
func helpLines(glyphs: Glyphs) -> [KeyHint] { KeyBindings.helpLines(glyphs: glyphs) }
