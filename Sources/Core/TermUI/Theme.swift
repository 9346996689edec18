/// How many colours the terminal may use.
public enum ColorLevel: Int, Hashable, Sendable, Comparable, CaseIterable {
    /// No colour at all: attributes (bold, dim, reverse, underline) only. Chosen when `NO_COLOR` is set.
    case none
    /// The 16 ANSI colours.
    case ansi16
    /// The 256 xterm colours.
    case ansi256

    public static func < (lhs: ColorLevel, rhs: ColorLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level the environment asks for: none when `NO_COLOR` is set (to anything non-empty) or `TERM` is
    /// `dumb`, 256 when `TERM` mentions `256color` or `COLORTERM` is set, else 16. The terminal may still
    /// offer fewer colours; the adapter lowers the level to what it has.
    public static func detect(environment: [String: String]) -> ColorLevel {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .none }
        let term = environment["TERM"] ?? ""
        if term == "dumb" { return .none }
        if term.contains("256color") || !(environment["COLORTERM"] ?? "").isEmpty { return .ansi256 }
        return .ansi16
    }
}

/// What a piece of the screen means; the theme turns each into a style.
public enum SemanticRole: Hashable, Sendable, CaseIterable {
    /// The host's badge and name.
    case host
    /// A moderator's badge and name.
    case moderator
    /// A speaker's name.
    case speaker
    /// The name of whoever is speaking now.
    case activeSpeaker
    /// A muted speaker's mute mark.
    case muted
    /// The level bar of a speaker.
    case level
    /// The selected peer.
    case selection
    /// The header line.
    case header
    /// Section header lines.
    case section
    /// The status line.
    case status
    /// Key names in hints and help.
    case key
    /// Less important text: waiting times, events, counts.
    case secondary
    /// Problems the person should act on.
    case error
    /// Informational notices.
    case notice
    /// Frames and text of overlays.
    case overlay
    /// The chosen button in an overlay.
    case button
    /// The mark that the room is being recorded (`● REC`): red, and bold so it stands out without colour too.
    case recording
}

/// The characters the screen draws with: Unicode, or ASCII only for `--ascii`.
public struct Glyphs: Hashable, Sendable {
    /// The host's badge.
    public var host: String
    /// A moderator's badge.
    public var moderator: String
    /// A speaker whose microphone is open.
    public var micOpen: String
    /// A muted speaker.
    public var micMuted: String
    /// A speaker whose microphone does not work (their client could not open it or lost it).
    public var micFailed: String
    /// Level bar steps, lowest first.
    public var bars: [String]
    /// An unlit level bar cell after the first.
    public var barEmpty: String
    /// Horizontal rule.
    public var horizontal: String
    /// Vertical rule.
    public var vertical: String
    /// Box corners: top left, top right, bottom left, bottom right.
    public var corners: [String]
    /// Cut-off text.
    public var ellipsis: String
    /// Separator between header and status fields.
    public var dot: String
    /// Dash between room and topic.
    public var dash: String
    /// Starts a room event in the chat pane.
    public var event: String
    /// Marks the selected peer.
    public var selection: String
    /// Connection state marks: connected, connecting or reconnecting, disconnected.
    public var connection: [String]
    /// Arrow keys as shown in help: up, down, left, right.
    public var arrows: [String]
    /// Between a chat message's sender and where it went: `Eve → speakers`.
    public var to: String
    /// Starts a notice kept in the chat pane.
    public var notice: String
    /// Network quality scores 0 (no media) to 5, one cell each: signal bars of rising height.
    public var signal: [String] = ["×", "▁", "▂", "▄", "▆", "█"]
    /// Marks, for hosts and moderators, a speaker whose connection is poor.
    public var poorSignal = "!"

    /// The signal bars for a score (clamped to 0–5).
    public func signalBars(_ score: Int) -> String { signal[min(signal.count - 1, max(0, score))] }

    /// Beside the name of someone playing a file into the room; one column.
    public var playing: String

    /// The header's mark while the room is being recorded (`● REC`, `[REC]` in ASCII), and the lobby's beside a
    /// recorded room.
    public var recording = "\u{25CF} REC"
    /// The header's mark while the room streams live (`● LIVE`, `[LIVE]` in ASCII), and the lobby's beside such a
    /// room; in the recording's style.
    public var live = "\u{25CF} LIVE"

    /// Unicode symbols and block elements.
    public static let unicode = Glyphs(
        host: "★", moderator: "◆", micOpen: "🎙", micMuted: "🔇", micFailed: "🚫",
        bars: ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"],
        barEmpty: " ", horizontal: "─", vertical: "│", corners: ["┌", "┐", "└", "┘"], ellipsis: "…", dot: "·",
        dash: "—", event: "·", selection: "›", connection: ["●", "◐", "○"], arrows: ["↑", "↓", "←", "→"], to: "→",
        notice: "!", playing: "♪")

    /// Printable ASCII only.
    public static let ascii = Glyphs(
        host: "*", moderator: "+", micOpen: "[o]", micMuted: "[m]", micFailed: "[x]",
        bars: ["_", "#", "#", "#", "#", "#", "#", "#"],
        barEmpty: " ", horizontal: "-", vertical: "|", corners: ["+", "+", "+", "+"], ellipsis: "~", dot: "|",
        dash: "-", event: "-", selection: ">", connection: ["o", "~", "x"], arrows: ["Up", "Down", "Left", "Right"],
        to: "->", notice: "!", signal: ["x", "1", "2", "3", "4", "5"], playing: "@", recording: "[REC]",
        live: "[LIVE]")

    /// `text` as the glyph set can show it: in ASCII, the typographic characters the program's own sentences and
    /// other programs' messages use (curly quotes, dashes, the ellipsis, arrows, bullets) become their ASCII
    /// spellings; anything else outside ASCII is kept, since names are shown as people wrote them.
    public func plain(_ text: String) -> String {
        guard self == .ascii, !text.utf8.allSatisfy({ $0 < 0x80 }) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\u{2018}", "\u{2019}", "\u{201A}", "\u{2032}": result += "'"
            case "\u{201C}", "\u{201D}", "\u{201E}", "\u{2033}", "\u{00AB}", "\u{00BB}": result += "\""
            case "\u{2013}", "\u{2212}": result += "-"
            case "\u{2014}": result += "-"
            case "\u{2026}": result += "..."
            case "\u{2192}": result += "->"
            case "\u{2190}": result += "<-"
            case "\u{00B7}", "\u{2022}": result += "|"
            case "\u{00A0}": result += " "
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// Styles for every semantic role at one colour level, plus the glyph set.
public struct Theme: Sendable {
    /// The colour level the styles were made for.
    public let level: ColorLevel
    /// The characters to draw with.
    public let glyphs: Glyphs
    private let styles: [SemanticRole: Style]

    /// The standard theme at `level`, with ASCII glyphs when `ascii` is true.
    public init(level: ColorLevel, ascii: Bool = false) {
        self.level = level
        glyphs = ascii ? .ascii : .unicode
        var styles: [SemanticRole: Style] = [:]
        for role in SemanticRole.allCases { styles[role] = Theme.style(for: role, level: level) }
        self.styles = styles
    }

    /// The style for `role`.
    public func style(_ role: SemanticRole) -> Style { styles[role] ?? .plain }

    // Without colour only attributes remain, so every role that must stand out gets one of bold, reverse,
    // underline or dim; with colour the same attributes stay, so meaning never rests on colour alone.
    private static func style(for role: SemanticRole, level: ColorLevel) -> Style {
        func pick(_ ansi: UInt8, _ indexed: UInt8) -> Color {
            switch level {
            case .none: return .terminalDefault
            case .ansi16: return .ansi(ansi)
            case .ansi256: return .indexed(indexed)
            }
        }
        switch role {
        case .host: return Style(foreground: pick(11, 220), bold: true)
        case .moderator: return Style(foreground: pick(14, 45), bold: true)
        case .speaker: return Style()
        case .activeSpeaker: return Style(foreground: pick(10, 48), bold: true, underline: level == .none)
        case .muted: return Style(foreground: pick(9, 203))
        case .level: return Style(foreground: pick(2, 41))
        case .selection: return Style(reverse: true)
        case .header: return Style(bold: true)
        case .section: return Style(foreground: pick(4, 67), dim: level == .none)
        case .status: return Style(reverse: true)
        case .key: return Style(foreground: pick(6, 80), bold: true)
        case .secondary: return Style(foreground: pick(8, 245), dim: level == .none)
        case .error: return Style(foreground: pick(9, 196), bold: true)
        case .notice: return Style(foreground: pick(3, 179))
        case .overlay: return Style()
        case .button: return Style(bold: true, reverse: true)
        case .recording: return Style(foreground: pick(9, 196), bold: true)
        }
    }
}
