/// A terminal colour as the theme names it; the adapter maps it to what the terminal offers.
public enum Color: Hashable, Sendable {
    /// The terminal's own foreground or background.
    case terminalDefault
    /// One of the 16 ANSI colours, 0–15 (8–15 are the bright ones).
    case ansi(UInt8)
    /// One of the 256 xterm colours.
    case indexed(UInt8)
}

/// How a cell is drawn: colours and attributes.
public struct Style: Hashable, Sendable {
    /// The foreground colour.
    public var foreground: Color = .terminalDefault
    /// The background colour.
    public var background: Color = .terminalDefault
    /// Bold (or bright) text.
    public var bold: Bool = false
    /// Dim text.
    public var dim: Bool = false
    /// Foreground and background swapped.
    public var reverse: Bool = false
    /// Underlined text.
    public var underline: Bool = false

    /// The terminal's default look.
    public static let plain = Style()

    /// This style with the attributes of `other` added and its colours used where `other` sets them.
    public func patched(with other: Style) -> Style {
        Style(
            foreground: other.foreground == .terminalDefault ? foreground : other.foreground,
            background: other.background == .terminalDefault ? background : other.background,
            bold: bold || other.bold, dim: dim || other.dim, reverse: reverse || other.reverse,
            underline: underline || other.underline)
    }
}
