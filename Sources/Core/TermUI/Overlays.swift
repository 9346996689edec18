/// A framed box with a title in its top border; its inside is cleared.
public struct Box: Sendable {
    /// The title, drawn in the top border.
    public var title: String
    /// Text drawn in the bottom border, e.g. which key closes the box.
    public var footer: String

    /// Creates a box.
    public init(title: String, footer: String = "") {
        self.title = title
        self.footer = footer
    }

    /// Draws the frame into `area` and returns the inside (the whole area when too small for a frame).
    @discardableResult
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) -> Rect {
        guard !area.isEmpty else { return area }
        let style = theme.style(.overlay)
        buffer.fill(area, style: style)
        guard area.width >= 4, area.height >= 3 else { return area }
        let g = theme.glyphs
        for x in area.x..<area.right {
            buffer.put(g.horizontal, x: x, y: area.y, style: style)
            buffer.put(g.horizontal, x: x, y: area.bottom - 1, style: style)
        }
        for y in area.y..<area.bottom {
            buffer.put(g.vertical, x: area.x, y: y, style: style)
            buffer.put(g.vertical, x: area.right - 1, y: y, style: style)
        }
        buffer.put(g.corners[0], x: area.x, y: area.y, style: style)
        buffer.put(g.corners[1], x: area.right - 1, y: area.y, style: style)
        buffer.put(g.corners[2], x: area.x, y: area.bottom - 1, style: style)
        buffer.put(g.corners[3], x: area.right - 1, y: area.bottom - 1, style: style)
        let room = area.width - 4
        if !title.isEmpty && room > 2 {
            let text = " " + DisplayWidth.truncate(title, to: room - 2, ellipsis: g.ellipsis) + " "
            buffer.put(text, x: area.x + 2, y: area.y, style: style.patched(with: Style(bold: true)))
        }
        if !footer.isEmpty && room > 2 {
            let text = " " + DisplayWidth.truncate(footer, to: room - 2, ellipsis: g.ellipsis) + " "
            buffer.put(text, x: area.right - 2 - DisplayWidth.of(text), y: area.bottom - 1, style: style)
        }
        return Rect(x: area.x + 2, y: area.y + 1, width: area.width - 4, height: area.height - 2)
    }
}

/// Draws two buttons on one row, the chosen one marked and highlighted.
func renderButtons(
    _ labels: [String], chosen: Int, into buffer: inout CellBuffer, row: Rect, theme: Theme
) {
    guard !row.isEmpty else { return }
    var x = row.x
    for (index, label) in labels.enumerated() {
        let isChosen = index == chosen
        let mark = isChosen ? theme.glyphs.selection : " "
        x = buffer.put(mark, x: x, y: row.y, style: theme.style(.selection), clip: row)
        x = buffer.put(
            "[ \(label) ]", x: x, y: row.y, style: isChosen ? theme.style(.button) : theme.style(.overlay), clip: row)
        x = buffer.put("  ", x: x, y: row.y, style: theme.style(.overlay), clip: row)
    }
}

/// Lays out a dialog's inside: wrapped text from the top, then a blank line, the buttons and a key hint. The
/// buttons always get a row, so the choice stays possible on a small screen; the hint, the blank line and then
/// the end of the text give way first. Returns the row of the last text line when all the text was drawn.
@discardableResult
func renderDialogBody(
    text: [(String, Style)], buttons: [String], chosen: Int, hint: String, into buffer: inout CellBuffer,
    inside: Rect, theme: Theme
) -> Int? {
    guard !inside.isEmpty else { return nil }
    let lines = text.flatMap { entry in wrap(entry.0, width: inside.width).map { ($0, entry.1) } }
    var footer = 1
    if inside.height >= lines.count + 3 { footer = 3 } else if inside.height >= lines.count + 2 { footer = 2 }
    let textRows = max(0, inside.height - footer)
    var lastTextRow: Int?
    for (index, line) in lines.prefix(textRows).enumerated() {
        var content = line.0
        if index == textRows - 1 && lines.count > textRows {
            content = DisplayWidth.truncate(
                content + " " + theme.glyphs.ellipsis, to: inside.width, ellipsis: theme.glyphs.ellipsis)
        }
        buffer.put(content, x: inside.x, y: inside.y + index, style: line.1, clip: inside)
        lastTextRow = inside.y + index
    }
    let buttonRow = inside.y + min(inside.height - 1, textRows + (footer == 3 ? 1 : 0))
    renderButtons(
        buttons, chosen: chosen, into: &buffer, row: Rect(x: inside.x, y: buttonRow, width: inside.width, height: 1),
        theme: theme)
    if footer == 3 || (footer == 2 && inside.height >= 2 && buttonRow + 1 < inside.bottom) {
        buffer.put(hint, x: inside.x, y: buttonRow + 1, style: theme.style(.secondary), clip: inside)
    }
    return lines.count <= textRows ? lastTextRow : nil
}

/// The key list: each key with what it does, under headings, scrolling on a short screen.
public struct HelpOverlay: Sendable {
    /// The lines: a key and its meaning, or (with an empty key) a heading or a blank line.
    public var lines: [KeyHint]
    /// The first line shown, for scrolling on small screens.
    public var scroll: Int = 0

    /// The highest useful scroll position for `lineCount` rows in an area of `height` rows.
    public static func maximumScroll(lineCount: Int, height: Int) -> Int {
        max(0, lineCount - max(0, height - 2))
    }

    /// The highest useful scroll position for `lines` in an area of `width` by `height`, counting wrapped rows.
    public static func maximumScroll(lines: [KeyHint], width: Int, height: Int) -> Int {
        maximumScroll(
            lineCount: rows(lines: lines, width: frame(lines: lines, width: width).inside).count, height: height)
    }

    /// The box's width and its inside width for `lines` in an area `width` columns wide.
    static func frame(lines: [KeyHint], width: Int) -> (box: Int, inside: Int) {
        let keyWidth = lines.reduce(0) { max($0, DisplayWidth.of($1.key)) }
        let textWidth = lines.reduce(0) { max($0, DisplayWidth.of($1.action)) }
        // The key, two spaces, the text, two free columns at the right (see `rows`), and the frame.
        let box = min(max(0, width), keyWidth + 2 + textWidth + 2 + 4)
        return (box, max(0, box - 4))
    }

    /// The rows the help shows at `width` inside the box: a description that does not fit wraps under its key,
    /// and a key wider than the key column (a third of the width) stands on its own row with its description
    /// below, so no row is cut.
    static func rows(lines: [KeyHint], width: Int) -> [(key: String, text: String, heading: Bool)] {
        guard width > 0 else { return [] }
        let keyColumn = min(lines.reduce(0) { max($0, DisplayWidth.of($1.key)) }, width / 3)
        // The last two columns stay free: the mark that says more is below goes there.
        let textWidth = max(1, width - keyColumn - 4)
        var rows: [(key: String, text: String, heading: Bool)] = []
        for line in lines {
            if line.key.isEmpty {
                rows += wrap(line.action, width: max(1, width - 2)).map { ("", $0, true) }
                continue
            }
            var pieces = wrap(line.action, width: textWidth)
            if DisplayWidth.of(line.key) > keyColumn {
                rows += wrap(line.key, width: max(1, width - 2)).map { ($0, "", false) }
            } else {
                rows.append((line.key, pieces.removeFirst(), false))
            }
            rows += pieces.map { ("", $0, false) }
        }
        return rows
    }

    /// Draws the help centred in `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let (boxWidth, insideWidth) = Self.frame(lines: lines, width: area.width)
        let rows = Self.rows(lines: lines, width: insideWidth)
        let box = area.centered(width: boxWidth, height: rows.count + 2)
        let inside = Box(title: "Keys", footer: "? or Esc closes").render(into: &buffer, area: box, theme: theme)
        guard !inside.isEmpty else { return }
        let shown = inside.width == insideWidth ? rows : Self.rows(lines: lines, width: inside.width)
        let first = min(max(0, scroll), max(0, shown.count - inside.height))
        let keyColumn = min(lines.reduce(0) { max($0, DisplayWidth.of($1.key)) }, inside.width / 3)
        for index in 0..<min(inside.height, shown.count - first) {
            let row = shown[first + index]
            let y = inside.y + index
            if row.heading {
                buffer.put(row.text, x: inside.x, y: y, style: Style(bold: true), clip: inside)
                continue
            }
            buffer.put(row.key, x: inside.x, y: y, style: theme.style(.key), clip: inside)
            buffer.put(row.text, x: inside.x + keyColumn + 2, y: y, style: theme.style(.overlay), clip: inside)
        }
        if first + inside.height < shown.count {
            buffer.put(theme.glyphs.ellipsis, x: inside.right - 1, y: inside.bottom - 1, style: theme.style(.secondary))
        }
    }
}

/// The prompt an invited listener sees: accept or decline, with a microphone level preview.
public struct InvitationPrompt: Sendable {
    /// The invitation.
    public var invitation: RoomScreenModel.Invitation

    /// Creates an invitation prompt.
    public init(_ invitation: RoomScreenModel.Invitation) { self.invitation = invitation }

    /// Draws the prompt centred in `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let g = theme.glyphs
        var lines: [(String, Style)] = [
            ("\(invitation.from) invites you to the stage.", Style(bold: true)),
            ("You join muted; press m when you want to talk.", theme.style(.overlay)),
        ]
        if invitation.recorded {
            lines.append(
                (
                    "\(g.recording) This room is being recorded: what you say on stage is kept.",
                    theme.style(.recording)
                ))
        }
        if invitation.streamed {
            lines.append(
                (
                    "\(g.live) This room is streamed live: what you say on stage goes out as you say it.",
                    theme.style(.recording)
                ))
        }
        if let seconds = invitation.secondsLeft {
            lines.append(("Answer within \(formatWaiting(seconds: seconds)).", theme.style(.secondary)))
        }
        let device = invitation.micName.map { "Microphone \($0)" } ?? "Microphone"
        if let problem = invitation.micProblem {
            lines.append(("\(device): \(g.plain(problem))", theme.style(.error)))
        } else if invitation.micLevel == nil {
            lines.append(("\(device): opening\(g.ellipsis)", theme.style(.overlay)))
        } else {
            lines.append(("\(device):", theme.style(.overlay)))
        }
        let width = min(area.width, 52)
        let textRows = lines.reduce(0) { $0 + wrap($1.0, width: max(1, width - 4)).count }
        let box = area.centered(width: width, height: textRows + 5)
        let inside = Box(title: "Invitation to speak").render(into: &buffer, area: box, theme: theme)
        guard !inside.isEmpty else { return }
        let arrows = g.arrows.allSatisfy { $0.count == 1 } ? g.arrows[2] + g.arrows[3] : "Left/Right"
        let micRow = renderDialogBody(
            text: lines, buttons: ["Accept (a)", "Decline (d)"], chosen: invitation.acceptSelected ? 0 : 1,
            hint: "Enter chooses \(g.dot) \(arrows) switch", into: &buffer, inside: inside,
            theme: theme)
        if let level = invitation.micLevel, invitation.micProblem == nil, let row = micRow {
            // The bar goes after the device's name on its line (the name may have wrapped onto it).
            let label = wrap(lines[lines.count - 1].0, width: max(1, inside.width)).last ?? ""
            let start = inside.x + DisplayWidth.of(label) + 1
            let barArea = Rect(x: start, y: row, width: min(20, inside.right - start), height: 1)
            LevelBar(level: level).render(into: &buffer, area: barArea.intersection(inside), theme: theme)
        }
    }
}

/// A question before a destructive action, saying what will happen. "Cancel" is the safe default.
public struct ConfirmationDialog: Sendable {
    /// The confirmation.
    public var confirmation: RoomScreenModel.Confirmation

    /// Creates a confirmation dialog.
    public init(_ confirmation: RoomScreenModel.Confirmation) { self.confirmation = confirmation }

    /// Draws the dialog centred in `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let width = min(area.width, 52)
        let message = wrap(confirmation.message, width: max(1, width - 4))
        let box = area.centered(width: width, height: message.count + 5)
        let inside = Box(title: confirmation.title).render(into: &buffer, area: box, theme: theme)
        guard !inside.isEmpty else { return }
        let g = theme.glyphs
        renderDialogBody(
            text: [(confirmation.message, theme.style(.overlay))], buttons: [confirmation.confirmLabel, "Cancel"],
            chosen: confirmation.confirmSelected ? 0 : 1, hint: "Enter chooses \(g.dot) Esc cancels", into: &buffer,
            inside: inside, theme: theme)
    }
}

/// The actions offered for one peer, each with its key.
public struct ActionMenuOverlay: Sendable {
    /// The menu.
    public var menu: RoomScreenModel.ActionMenu

    /// Creates an action menu overlay.
    public init(_ menu: RoomScreenModel.ActionMenu) { self.menu = menu }

    /// Draws the menu centred in `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let widest = menu.items.reduce(0) { max($0, DisplayWidth.of($1.key) + 2 + DisplayWidth.of($1.action)) }
        let box = area.centered(
            width: max(widest + 6, DisplayWidth.of(menu.peerName) + 8), height: menu.items.count + 2)
        let inside = Box(title: menu.peerName, footer: "Esc closes").render(into: &buffer, area: box, theme: theme)
        guard !inside.isEmpty else { return }
        let first = scrollStart(selectedRow: menu.selected, total: menu.items.count, visible: inside.height)
        for row in 0..<min(inside.height, menu.items.count - first) {
            let index = first + row
            let item = menu.items[index]
            let y = inside.y + row
            let chosen = index == menu.selected
            if chosen {
                buffer.put(theme.glyphs.selection, x: inside.x - 1, y: y, style: theme.style(.selection), clip: box)
            }
            let x = buffer.put(item.key, x: inside.x, y: y, style: theme.style(.key), clip: inside)
            buffer.put(
                String(repeating: " ", count: max(1, 3 - DisplayWidth.of(item.key))) + item.action, x: x, y: y,
                style: chosen ? theme.style(.selection) : theme.style(.overlay), clip: inside)
        }
    }
}
