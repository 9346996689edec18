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
    case moveToAudience
    case muteSelected
    case removeSelected
    case changeVolume
    case openCommandLine
    case toggleChat
    case clearNotice
    case showHelp
    case leave

    /// Whether the command asks something of the room (or opens a way to), rather than moving around the screen,
    /// showing help or leaving. Once the room is over these only say why nothing can be asked any more.
    var actsOnRoom: Bool {
        switch self {
        case .toggleMute, .pushToTalk, .toggleHand, .openActions, .inviteSelected, .inviteNext, .moveToAudience,
            .muteSelected, .removeSelected, .openCommandLine:
            true
        case .moveSelection, .changeVolume, .toggleChat, .clearNotice, .showHelp, .leave:
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

    public init(
        rank: Int, words: @escaping @Sendable (_ status: RoomScreenModel.StatusLine, _ unreadChat: Int) -> String?
    ) {
        self.rank = rank
        self.words = words
    }
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
                return status.handRaised ? "lower hand" : "raise hand"
            }),
        KeyBinding(
            [.up, .down, .left, .right, .char("h"), .char("j"), .char("k"), .char("l")],
            also: [.home, .end, .pageUp, .pageDown], .moveSelection, help: "move the selection",
            does: "move the selection: `←→` `hl` the previous / next person, across sections in screen order; "
                + "`↑↓` `jk` a row, past the end of a section into the next (same column); `Home` `End` the first "
                + "/ last person; `PgUp` `PgDn` five rows"),
        KeyBinding(
            [.enter], .openActions, help: "actions for the selected peer",
            does: "the actions menu for the selected person (only the actions you may take on them)",
            refusal: "\"there is nothing you can do for Eli here\"",
            hint: StatusHint(rank: 30) { status, _ in isRunningTheStage(status) ? "actions" : nil }),
        KeyBinding(
            [.char("i")], .inviteSelected, help: "invite the selected peer to speak",
            does: "invite the selected person to speak", refusal: "from the role table"),
        KeyBinding(
            [.char("n")], .inviteNext, help: "invite the next raised hand",
            does: "invite the head of the raised-hand queue",
            refusal: "from the role table; \"no raised hands to invite\"",
            hint: StatusHint(rank: 20) { status, _ in isRunningTheStage(status) ? "invite next" : nil }),
        KeyBinding(
            [.char("a")], .moveToAudience, help: "move the selected peer to the audience",
            does: "move the selected person to the audience (yourself: step down)", refusal: "from the role table"),
        KeyBinding(
            [.char("M")], .muteSelected, help: "mute the selected peer",
            does: "mute the selected person (yourself: mute)", refusal: "from the role table"),
        KeyBinding(
            [.char("x")], .removeSelected, help: "remove the selected peer (asks first)",
            does: "remove the selected person, after a confirmation", refusal: "from the role table, before asking"),
        KeyBinding(
            [.char("+"), .char("-")], also: [.char("=")], .changeVolume,
            help: "selected speaker louder / quieter (for you)",
            does: "the selected speaker louder / quieter for you, by 10 % (0–200 %); `=` is `+` unshifted",
            refusal: "\"you do not hear yourself; …\", "
                + "\"Eli is not on the stage; to set their volume for later, type /volume Eli PERCENT\""),
        KeyBinding(
            [.char("/"), .char(":")], .openCommandLine, help: "open the command line",
            does: "the command line (its prompt is the key pressed)",
            hint: StatusHint(rank: 60) { status, _ in status.roomOver ? nil : "chat" }),
        KeyBinding(
            [.tab], .toggleChat, help: "show / hide chat and events",
            does: "show / hide chat and events; the status line shows the unread count while hidden",
            hint: StatusHint(rank: 1) { _, unread in unread > 0 ? "chat (\(formatCount(unread)))" : nil }),
        KeyBinding([.escape], .clearNotice, help: "clear the notice", does: "clear the notice"),
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

    /// The commands the help lists after the keys.
    static let helpCommands: [(usage: String, summary: String)] = [
        ("/chat TEXT", "say something to the room"),
        ("/invite NAME", "invite someone to speak"),
        ("/mute NAME", "mute someone"),
        ("/volume NAME", "with a percent 0-200: how loud they are to you"),
        ("/topic TEXT", "change the topic"),
        ("/end", "end the room (hosts; asks first)"),
    ]

    /// The lines of the help overlay: every key of the room view, then the main commands.
    public static func helpLines(glyphs: Glyphs) -> [RoomScreenModel.HelpLine] {
        var lines = room.map { RoomScreenModel.HelpLine(key: label($0.keys, glyphs: glyphs), text: $0.help) }
        lines.append(RoomScreenModel.HelpLine(key: "", text: ""))
        lines.append(RoomScreenModel.HelpLine(key: "", text: "Commands"))
        lines += helpCommands.map { RoomScreenModel.HelpLine(key: $0.usage, text: $0.summary) }
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
}

/// The help overlay's lines for the state's glyphs.
func helpLines(glyphs: Glyphs) -> [RoomScreenModel.HelpLine] { KeyBindings.helpLines(glyphs: glyphs) }
