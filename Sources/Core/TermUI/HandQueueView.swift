/// The raised-hand queue: every hand for hosts and moderators (with the pending invitations on a line of their
/// own above), the viewer's own place for others.
public struct HandQueueView: Sendable {
    /// The queue as the viewer may see it.
    public var queue: RoomScreenModel.HandQueue
    /// Pending invitations, shown above the queue (only with the whole queue).
    public var invitations: [RoomScreenModel.InvitationEntry]
    /// The selected hand, if the selection is in the queue.
    public var selected: Int?

    /// Creates a hand queue view.
    public init(
        queue: RoomScreenModel.HandQueue, invitations: [RoomScreenModel.InvitationEntry] = [], selected: Int?
    ) {
        self.queue = queue
        self.invitations = invitations
        self.selected = selected
    }

    /// The narrowest a name gets before the queue takes fewer columns.
    static let nameWidth = 10
    static let timeWidth = 5
    /// "invited", shown in place of the waiting time.
    static let invitedWidth = 7

    struct Layout {
        var count: Int
        var columnWidth: Int
        var positionWidth: Int
        var nameWidth: Int
        var timeWidth: Int
    }

    func layout(_ entries: [RoomScreenModel.HandEntry], width: Int) -> Layout {
        let positionWidth = String(entries.map(\.position).max() ?? 1).count
        let timeWidth = entries.contains { $0.invited } ? Self.invitedWidth : Self.timeWidth
        let available = max(0, width - 1)
        let fixed = 1 + positionWidth + 2 + 1 + timeWidth
        let count = max(1, available / (fixed + Self.nameWidth + 4))
        let columnWidth = available / count
        // The names use the width the columns have (up to the longest name), so a wide screen shows them whole.
        var longest = 0
        for entry in entries {
            longest = max(longest, DisplayWidth.of(entry.name))
            if longest >= columnWidth { break }
        }
        let nameWidth = max(0, min(max(Self.nameWidth, longest), columnWidth - fixed - 2))
        return Layout(
            count: count, columnWidth: columnWidth, positionWidth: positionWidth, nameWidth: nameWidth,
            timeWidth: timeWidth)
    }

    /// How many hands share a row in `width` columns (1 when only the viewer's own place is shown).
    public func columnCount(width: Int) -> Int {
        guard case .full(let entries) = queue, !entries.isEmpty else { return 1 }
        return layout(entries, width: width).count
    }

    /// How many rows the queue wants in `width` columns, the invitations' line included.
    public func rowsNeeded(width: Int) -> Int {
        guard case .full(let entries) = queue else { return 1 }
        let line = invitations.isEmpty ? 0 : 1
        guard !entries.isEmpty else { return max(1, line) }
        let count = layout(entries, width: width).count
        return (entries.count + count - 1) / count + line
    }

    /// The invitations' line: `Invited: Eli (by Ana, 0m12s) · Kai (by you, 1m03s)`. When that does not fit in
    /// `width` columns, the names alone with the count and the oldest's wait (`Invited (2, oldest 1m03s): Eli,
    /// Kai`), so every invitee's name shows for as long as names fit; who sent each is in the chat pane and `/who`.
    func invitationsLine(glyphs: Glyphs, width: Int = .max) -> String {
        let full =
            "Invited: "
            + invitations.map { "\($0.name) (by \($0.by), \(formatWaiting(seconds: $0.seconds)))" }
            .joined(separator: " \(glyphs.dot) ")
        guard DisplayWidth.of(full) > width, invitations.count > 1 else { return full }
        let oldest = invitations.map(\.seconds).max() ?? 0
        return "Invited (\(invitations.count), oldest \(formatWaiting(seconds: oldest))): "
            + invitations.map(\.name).joined(separator: ", ")
    }

    /// Draws into `area`, scrolled so the selected hand shows.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        buffer.fill(area)
        let glyphs = theme.glyphs
        let secondary = theme.style(.secondary)
        switch queue {
        case .ownPlace(let position, let total):
            let text: String
            if let position {
                text = "  Your hand is up: \(ordinal(position)) of \(formatCount(total)) in the queue"
            } else if total == 0 {
                text = "  No raised hands"
            } else {
                text = "  \(formatCount(total)) raised \(total == 1 ? "hand" : "hands")"
            }
            buffer.put(
                DisplayWidth.truncate(text, to: area.width, ellipsis: glyphs.ellipsis), x: area.x, y: area.y,
                style: position == nil ? secondary : theme.style(.notice), clip: area)
        case .full(let entries):
            var grid = area
            if !invitations.isEmpty {
                buffer.put(
                    DisplayWidth.truncate(
                        "  " + invitationsLine(glyphs: glyphs, width: area.width - 2), to: area.width,
                        ellipsis: glyphs.ellipsis),
                    x: area.x, y: area.y, style: theme.style(.notice), clip: area)
                grid = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
            }
            guard !grid.isEmpty else { return }
            guard !entries.isEmpty else {
                buffer.put("  No raised hands", x: grid.x, y: grid.y, style: secondary, clip: grid)
                return
            }
            let layout = layout(entries, width: grid.width)
            let count = layout.count
            let totalRows = (entries.count + count - 1) / count
            let first = scrollStart(selectedRow: selected.map { $0 / count }, total: totalRows, visible: grid.height)
            for visibleRow in 0..<min(grid.height, totalRows - first) {
                for column in 0..<count {
                    let index = (first + visibleRow) * count + column
                    guard index < entries.count else { break }
                    let cell = Rect(
                        x: grid.x + 1 + column * layout.columnWidth, y: grid.y + visibleRow, width: layout.columnWidth,
                        height: 1
                    ).intersection(grid)
                    let entry = entries[index]
                    let isSelected = index == selected
                    if isSelected {
                        buffer.put(glyphs.selection, x: cell.x, y: cell.y, style: theme.style(.selection), clip: cell)
                    }
                    let number = String(entry.position) + "."
                    let padded = String(repeating: " ", count: max(0, layout.positionWidth + 1 - number.count)) + number
                    var x = buffer.put(padded + " ", x: cell.x + 1, y: cell.y, style: .plain, clip: cell)
                    let nameWidth = min(layout.nameWidth, max(0, cell.right - x - layout.timeWidth - 1))
                    let nameStyle = isSelected ? theme.style(.selection) : Style.plain
                    buffer.put(
                        DisplayWidth.truncate(entry.name, to: nameWidth, ellipsis: glyphs.ellipsis), x: x, y: cell.y,
                        style: nameStyle, clip: cell)
                    x += nameWidth + 1
                    if entry.invited {
                        buffer.put("invited", x: x, y: cell.y, style: theme.style(.notice), clip: cell)
                    } else {
                        buffer.put(
                            formatWaiting(seconds: entry.waitingSeconds), x: x, y: cell.y, style: secondary, clip: cell)
                    }
                }
            }
            if first + grid.height < totalRows {
                buffer.put(glyphs.ellipsis, x: grid.right - 1, y: grid.bottom - 1, style: secondary)
            }
            if first > 0 { buffer.put(glyphs.ellipsis, x: grid.right - 1, y: grid.y, style: secondary) }
        }
    }
}
