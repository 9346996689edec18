/// Splits `text` into lines of at most `width` columns (the lines after the first at most `continuation`, when
/// given, for text whose later lines are indented), at spaces where it can.
public func wrap(_ text: String, width firstWidth: Int, continuation: Int? = nil) -> [String] {
    let laterWidth = continuation ?? firstWidth
    guard firstWidth > 0, laterWidth > 0 else { return [] }
    var lines: [String] = []
    var line = ""
    var lineWidth = 0
    var lastSpace: String.Index?
    for character in text {
        let width = lines.isEmpty ? firstWidth : laterWidth
        let w = DisplayWidth.of(character)
        if w == 0 && character != " " { continue }
        if character == " " && lineWidth + w > width {
            // The line is full at the end of a word: it breaks here, not at the space before that word.
            lines.append(line)
            line = ""
            lineWidth = 0
            lastSpace = nil
            continue
        }
        if lineWidth + w > width {
            if let space = lastSpace {
                let rest = String(line[line.index(after: space)...])
                lines.append(String(line[..<space]))
                line = rest
            } else {
                lines.append(line)
                line = ""
            }
            lineWidth = DisplayWidth.of(line)
            lastSpace = nil
            if character == " " && line.isEmpty { continue }
        }
        if character == " " { lastSpace = line.endIndex }
        line.append(character)
        lineWidth += w
    }
    if !line.isEmpty || lines.isEmpty { lines.append(line) }
    return lines
}

/// Chat messages and room events, newest at the bottom, wrapped to the width; scrolled up, it keeps its place
/// and counts what arrived below.
public struct ChatPane: Sendable {
    /// The lines, oldest first.
    public var lines: [RoomScreenModel.ChatLine]
    /// How many of the newest lines are scrolled out of view below.
    public var scroll: Int
    /// Lines that arrived while scrolled up.
    public var below: Int

    /// Creates a chat pane.
    public init(lines: [RoomScreenModel.ChatLine], scroll: Int = 0, below: Int = 0) {
        self.lines = lines
        self.scroll = max(0, min(scroll, max(0, lines.count - 1)))
        self.below = below
    }

    /// A line as text, how many columns of it are bold (the sender), and its style.
    static func text(of line: RoomScreenModel.ChatLine, theme: Theme) -> (text: String, prefix: Int, style: Style) {
        switch line {
        case .message(let from, let body, let to):
            let head = to.map { "\(from) \(theme.glyphs.to) \($0): " } ?? "\(from): "
            return (head + body, DisplayWidth.of(head), .plain)
        case .event(let body):
            return (theme.glyphs.event + " " + theme.glyphs.plain(body), 0, theme.style(.secondary))
        case .notice(let body, let isError):
            return (
                theme.glyphs.notice + " " + theme.glyphs.plain(body), 0, theme.style(isError ? .error : .notice)
            )
        }
    }

    /// How many rows all the lines take at `width` (capped at `limit`), for sharing the screen's rows.
    public func rowsNeeded(width: Int, theme: Theme, limit: Int = 200) -> Int {
        guard !lines.isEmpty else { return 1 }
        let textWidth = width - 2
        guard textWidth > 0 else { return 1 }
        var rows = 0
        for line in lines.reversed() {
            rows += wrap(Self.text(of: line, theme: theme).text, width: textWidth).count
            if rows >= limit { return limit }
        }
        return rows
    }

    /// Draws into `area`, the newest shown lines last.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        buffer.fill(area)
        guard !lines.isEmpty else {
            buffer.put("  No messages yet", x: area.x, y: area.y, style: theme.style(.secondary), clip: area)
            return
        }
        let textWidth = area.width - 2
        guard textWidth > 0 else { return }
        // Scrolled up, the last row says so and how much is below.
        var rowsForText = area.height
        if scroll > 0, area.height >= 2 {
            rowsForText -= 1
            let down = theme.glyphs.arrows[1].count == 1 ? theme.glyphs.arrows[1] + " " : ""
            let text =
                below > 0
                ? "\(down)\(formatCount(below)) new below \(theme.glyphs.dot) PgDn"
                : "\(down)more below \(theme.glyphs.dot) PgDn"
            buffer.put(
                DisplayWidth.truncate(" " + text, to: area.width, ellipsis: theme.glyphs.ellipsis), x: area.x,
                y: area.bottom - 1, style: theme.style(.notice), clip: area)
        }
        var rows: [(text: String, prefix: Int, style: Style)] = []
        // Only the newest lines above the scroll can show, so wrap from there and stop once the area is full.
        // Lines show whole: the pane starts with the oldest line that fits whole, and the rows above it stay
        // blank. Only a newest line taller than the whole pane shows in part: from its start, cut with an
        // ellipsis, never as its last piece.
        for line in lines.dropLast(scroll).reversed() {
            let (text, prefix, style) = Self.text(of: line, theme: theme)
            var wrapped = wrap(text, width: textWidth)
            let room = rowsForText - rows.count
            if wrapped.count > room {
                guard rows.isEmpty, room > 0 else { break }
                let rest = wrapped[(room - 1)...].joined(separator: " ")
                wrapped =
                    Array(wrapped.prefix(room - 1))
                    + [DisplayWidth.truncate(rest, to: textWidth - (room > 1 ? 1 : 0), ellipsis: theme.glyphs.ellipsis)]
            }
            for (index, piece) in wrapped.enumerated().reversed() {
                rows.append((index == 0 ? piece : " " + piece, index == 0 ? prefix : 0, style))
            }
            if rows.count >= rowsForText { break }
        }
        let shown = rows.prefix(rowsForText).reversed()
        var y = area.y + rowsForText - shown.count
        for row in shown {
            let end = buffer.put(row.text, x: area.x + 1, y: y, style: row.style, clip: area)
            if row.prefix > 0 {
                buffer.setStyle(
                    Rect(x: area.x + 1, y: y, width: min(row.prefix, end - area.x - 1), height: 1),
                    style: Style(bold: true), patch: true)
            }
            y += 1
        }
    }
}
