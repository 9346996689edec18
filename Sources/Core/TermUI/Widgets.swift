/// Formats how long someone has waited: `0m09s`, `4m12s`, `1h02m`, `2d03h`. Negative times count as zero.
public func formatWaiting(seconds: Int) -> String {
    let s = max(0, seconds)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    if s < 3600 { return "\(s / 60)m\(two(s % 60))s" }
    if s < 86_400 { return "\(s / 3600)h\(two(s % 3600 / 60))m" }
    return "\(s / 86_400)d\(two(s % 86_400 / 3600))h"
}

/// English ordinal of a positive number: `1st`, `2nd`, `3rd`, `4th`, `11th`, `22nd`.
public func ordinal(_ n: Int) -> String {
    let tens = n % 100
    if (11...13).contains(tens) { return "\(n)th" }
    switch n % 10 {
    case 1: return "\(n)st"
    case 2: return "\(n)nd"
    case 3: return "\(n)rd"
    default: return "\(n)th"
    }
}

/// The first row to show so that `selectedRow` is visible when `visible` of `total` rows fit.
func scrollStart(selectedRow: Int?, total: Int, visible: Int) -> Int {
    guard visible > 0, total > visible, let row = selectedRow, row >= visible else { return 0 }
    return min(row - visible + 1, total - visible)
}

/// A section title across the width: ` ─ Stage ──────`.
public struct SectionHeader: Sendable {
    /// The title, with any count already in it.
    public var title: String

    /// Creates a section header.
    public init(_ title: String) { self.title = title }

    /// Draws into the first row of `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let row = area.row(0)
        let style = theme.style(.section)
        let rule = theme.glyphs.horizontal
        buffer.fill(row, style: style)
        var x = buffer.put(" " + rule + " ", x: row.x, y: row.y, style: style, clip: row)
        let label = DisplayWidth.truncate(title, to: row.right - x - 1, ellipsis: theme.glyphs.ellipsis)
        x = buffer.put(label, x: x, y: row.y, style: style.patched(with: Style(bold: true)), clip: row)
        if x < row.right { x = buffer.put(" ", x: x, y: row.y, style: style, clip: row) }
        while x < row.right { x = buffer.put(rule, x: x, y: row.y, style: style, clip: row) }
    }
}

/// A horizontal rule across the first row of an area.
public struct Rule: Sendable {
    /// Creates a rule.
    public init() {}

    /// Draws into the first row of `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let row = area.row(0)
        var x = buffer.put(" ", x: row.x, y: row.y, style: theme.style(.section), clip: row)
        while x < row.right { x = buffer.put(theme.glyphs.horizontal, x: x, y: row.y, style: theme.style(.section)) }
    }
}

/// A speaker's level as a rising ramp of bars; the first cell always shows, so a silent speaker has a baseline.
public struct LevelBar: Sendable {
    /// The level, 0–100, with rise, hold and fall already applied.
    public var level: Int

    /// Creates a level bar.
    public init(level: Int) { self.level = level }

    /// How many cells are lit out of `width`.
    public func litCells(width: Int) -> Int {
        guard width > 1 else { return max(0, width) }
        let clamped = min(100, max(0, level))
        return 1 + (clamped * (width - 1) + 50) / 100
    }

    /// Draws into the first row of `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let row = area.row(0)
        let bars = theme.glyphs.bars
        let level = min(100, max(0, self.level))
        let lit = litCells(width: row.width)
        for index in 0..<row.width {
            let glyph: String
            if index >= lit {
                glyph = theme.glyphs.barEmpty
            } else if row.width == 1 {
                glyph = bars[level * bars.count / 101]
            } else if index == 0 {
                glyph = level > 0 && bars[0] == "_" ? bars[1] : bars[0]
            } else {
                glyph = bars[(index * (bars.count - 1) + (row.width - 1) / 2) / (row.width - 1)]
            }
            buffer.put(glyph, x: row.x + index, y: row.y, style: theme.style(.level), clip: row)
        }
    }
}

/// The people on stage in columns: badge, name and role, level bar, microphone.
public struct StageGrid: Sendable {
    /// The entries, in display order.
    public var entries: [RoomScreenModel.StageEntry]
    /// The selected entry, if the selection is on stage.
    public var selected: Int?

    /// Creates a stage grid.
    public init(entries: [RoomScreenModel.StageEntry], selected: Int?) {
        self.entries = entries
        self.selected = selected
    }

    /// How the stage is laid out in a given width.
    struct Layout {
        var columns: Int
        var columnWidth: Int
        var labelWidth: Int
        var barWidth: Int
        var micWidth: Int
        /// A space and the volume (`70%`, up to `200%`) after the microphone mark; 0 when none is shown.
        var volumeWidth: Int
        /// The signal bars and the poor mark after the name, with a space: 0 when nobody's is measured.
        var signalWidth: Int
    }

    static let signalWidth = 3

    static let barWidth = 5
    static let volumeWidth = 5

    func layout(width: Int, glyphs: Glyphs) -> Layout {
        let micWidth = max(
            DisplayWidth.of(glyphs.micOpen), DisplayWidth.of(glyphs.micMuted), DisplayWidth.of(glyphs.micFailed))
        let available = max(0, width - 1)
        let longest = entries.reduce(0) { max($0, DisplayWidth.of(label(for: $1))) }
        let wantedLabel = min(18, max(12, longest))
        let signal = entries.contains { $0.signal != nil } ? Self.signalWidth : 0
        let fixed = 3 + 1 + Self.barWidth + 2 + micWidth + signal
        let columns = max(1, min(max(1, entries.count), available / (fixed + wantedLabel + 4)))
        let columnWidth = available / columns
        // A volume other than 100 % takes its room from the label, and goes before the level bar does.
        var volume = entries.contains { $0.volume != nil } ? Self.volumeWidth : 0
        var labelWidth = min(wantedLabel, columnWidth - fixed - 1 - volume)
        if volume > 0 && labelWidth < 6 {
            volume = 0
            labelWidth = min(wantedLabel, columnWidth - fixed - 1)
        }
        var barWidth = Self.barWidth
        var mic = micWidth
        if labelWidth < 6 {
            barWidth = 0
            labelWidth = columnWidth - 3 - 1 - micWidth
        }
        if labelWidth < 3 {
            mic = 0
            labelWidth = columnWidth - 3
        }
        return Layout(
            columns: columns, columnWidth: columnWidth, labelWidth: max(0, labelWidth), barWidth: barWidth,
            micWidth: mic, volumeWidth: volume, signalWidth: signal)
    }

    /// How many entries share a row in `width` columns.
    public func columnCount(width: Int, glyphs: Glyphs) -> Int { layout(width: width, glyphs: glyphs).columns }

    /// How many rows the stage wants in `width` columns.
    public func rowsNeeded(width: Int, glyphs: Glyphs) -> Int {
        guard !entries.isEmpty else { return 1 }
        let columns = layout(width: width, glyphs: glyphs).columns
        return (entries.count + columns - 1) / columns
    }

    func roleSuffix(_ role: RoomScreenModel.Role) -> String {
        switch role {
        case .host: return " (host)"
        case .moderator: return " (mod)"
        case .speaker, .audience: return ""
        }
    }

    /// What follows the name: the role, and the reaction just sent.
    func suffix(for entry: RoomScreenModel.StageEntry) -> String {
        roleSuffix(entry.role) + (entry.reaction.map { " " + $0 } ?? "")
    }

    func label(for entry: RoomScreenModel.StageEntry) -> String { entry.name + suffix(for: entry) }

    /// Draws into `area`, scrolled so the selected entry shows.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        buffer.fill(area)
        let glyphs = theme.glyphs
        guard !entries.isEmpty else {
            buffer.put("  Nobody on stage yet", x: area.x, y: area.y, style: theme.style(.secondary), clip: area)
            return
        }
        let layout = layout(width: area.width, glyphs: glyphs)
        let totalRows = (entries.count + layout.columns - 1) / layout.columns
        let first = scrollStart(
            selectedRow: selected.map { $0 / layout.columns }, total: totalRows, visible: area.height)
        for visibleRow in 0..<min(area.height, totalRows - first) {
            let y = area.y + visibleRow
            for column in 0..<layout.columns {
                let index = (first + visibleRow) * layout.columns + column
                guard index < entries.count else { break }
                let x = area.x + 1 + column * layout.columnWidth
                let cell = Rect(x: x, y: y, width: layout.columnWidth, height: 1).intersection(area)
                draw(entries[index], selected: index == selected, at: cell, layout: layout, theme: theme)
            }
        }
        if first + area.height < totalRows {
            buffer.put(glyphs.ellipsis, x: area.right - 1, y: area.bottom - 1, style: theme.style(.secondary))
        }
        if first > 0 {
            buffer.put(glyphs.ellipsis, x: area.right - 1, y: area.y, style: theme.style(.secondary))
        }

        func draw(
            _ entry: RoomScreenModel.StageEntry, selected: Bool, at cell: Rect, layout: Layout, theme: Theme
        ) {
            let y = cell.y
            if selected { buffer.put(glyphs.selection, x: cell.x, y: y, style: theme.style(.selection), clip: cell) }
            switch entry.role {
            case .host: buffer.put(glyphs.host, x: cell.x + 1, y: y, style: theme.style(.host), clip: cell)
            case .moderator:
                buffer.put(glyphs.moderator, x: cell.x + 1, y: y, style: theme.style(.moderator), clip: cell)
            case .speaker, .audience: break
            }
            if entry.playing {
                buffer.put(glyphs.playing, x: cell.x + 2, y: y, style: theme.style(.speaker), clip: cell)
            }
            var nameStyle = theme.style(entry.speaking ? .activeSpeaker : .speaker)
            if selected { nameStyle = nameStyle.patched(with: theme.style(.selection)) }
            // The role suffix (and a reaction) stays while the name keeps at least four columns (or all of a
            // shorter name).
            let after = self.suffix(for: entry)
            let suffixWidth = DisplayWidth.of(after)
            let text: String
            if suffixWidth == 0 || layout.labelWidth - suffixWidth >= min(4, DisplayWidth.of(entry.name)) {
                text =
                    DisplayWidth.truncate(entry.name, to: layout.labelWidth - suffixWidth, ellipsis: glyphs.ellipsis)
                    + after
            } else {
                text = DisplayWidth.truncate(entry.name, to: layout.labelWidth, ellipsis: glyphs.ellipsis)
            }
            buffer.put(text, x: cell.x + 3, y: y, style: nameStyle, clip: cell)
            var x = cell.x + 3 + layout.labelWidth + 1
            if layout.signalWidth > 0 {
                if let signal = entry.signal {
                    let style = theme.style(entry.poor ? .error : .secondary)
                    buffer.put(glyphs.signalBars(signal), x: x, y: y, style: style, clip: cell)
                    if entry.poor { buffer.put(glyphs.poorSignal, x: x + 1, y: y, style: style, clip: cell) }
                }
                x += layout.signalWidth
            }
            if layout.barWidth > 0 {
                LevelBar(level: entry.muted || entry.micFailed ? 0 : entry.level).render(
                    into: &buffer, area: Rect(x: x, y: y, width: layout.barWidth, height: 1).intersection(cell),
                    theme: theme)
                x += layout.barWidth + 2
            }
            if layout.micWidth > 0 {
                let glyph = entry.micFailed ? glyphs.micFailed : entry.muted ? glyphs.micMuted : glyphs.micOpen
                let style = theme.style(entry.micFailed ? .error : entry.muted ? .muted : .speaker)
                buffer.put(glyph, x: x, y: y, style: style, clip: cell)
                x += layout.micWidth
            }
            if layout.volumeWidth > 0, let volume = entry.volume {
                let text = "\(volume)%"
                let pad = max(0, layout.volumeWidth - 1 - text.count)
                buffer.put(text, x: x + 1 + pad, y: y, style: theme.style(.secondary), clip: cell)
            }
        }
    }
}

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

/// The audience as a grid of names, as many columns as fit, scrolled to keep the selection in view.
///
/// A large audience is given as a window: `names` are the members from position `offset` on, so a client need
/// not copy ten thousand names for a screen that shows a hundred. Positions (`offset`, `selected`) count from the
/// start of the whole audience.
public struct AudienceGrid: Sendable {
    /// Names in display order, starting at position `offset` of the whole audience.
    public var names: [String]
    /// The position of `names[0]` in the whole audience.
    public var offset: Int
    /// Everyone in the audience; more than `offset + names.count` when only some names are given.
    public var total: Int
    /// The selected position in the whole audience, if the selection is in the audience.
    public var selected: Int?

    /// Creates an audience grid.
    public init(names: [String], offset: Int = 0, total: Int, selected: Int?) {
        self.names = names
        self.offset = max(0, offset)
        self.total = total
        self.selected = selected
    }

    func columns(width: Int) -> (count: Int, width: Int, nameWidth: Int) {
        var longest = 0
        for name in names {
            longest = max(longest, DisplayWidth.of(name))
            if longest >= 12 { break }
        }
        let nameWidth = min(12, max(6, longest))
        let available = max(0, width - 4)
        let count = max(1, available / (nameWidth + 2))
        return (count, available / count, nameWidth)
    }

    /// How many names share a row in `width` columns.
    public func columnCount(width: Int) -> Int { columns(width: width).count }

    /// How many rows the grid wants in `width` columns.
    public func rowsNeeded(width: Int) -> Int {
        guard !names.isEmpty else { return 1 }
        let count = columns(width: width).count
        return (offset + names.count + count - 1) / count
    }

    /// Draws into `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        buffer.fill(area)
        let glyphs = theme.glyphs
        let secondary = theme.style(.secondary)
        guard !names.isEmpty else {
            let text = total == 0 ? "  Nobody in the audience" : "  \(formatCount(total)) listening"
            buffer.put(text, x: area.x, y: area.y, style: secondary, clip: area)
            return
        }
        let (count, columnWidth, nameWidth) = columns(width: area.width)
        let known = offset + names.count
        let totalRows = (known + count - 1) / count
        let first = scrollStart(selectedRow: selected.map { $0 / count }, total: totalRows, visible: area.height)
        let inner = Rect(x: area.x, y: area.y, width: max(0, area.width - 2), height: area.height)
        for visibleRow in 0..<min(area.height, totalRows - first) {
            for column in 0..<count {
                let position = (first + visibleRow) * count + column
                guard position < known else { break }
                guard position >= offset else { continue }
                let x = area.x + 2 + column * columnWidth
                let y = area.y + visibleRow
                let isSelected = position == selected
                if isSelected {
                    buffer.put(glyphs.selection, x: x, y: y, style: theme.style(.selection), clip: inner)
                }
                let fitted = DisplayWidth.truncate(
                    names[position - offset], to: min(nameWidth, max(0, inner.right - x - 1)),
                    ellipsis: glyphs.ellipsis)
                buffer.put(fitted, x: x + 1, y: y, style: isSelected ? theme.style(.selection) : .plain, clip: inner)
            }
        }
        let hiddenBelow = first + area.height < totalRows || known < total
        if hiddenBelow && area.width >= 2 {
            buffer.put(glyphs.ellipsis, x: area.right - 2, y: area.bottom - 1, style: secondary, clip: area)
        }
        if first > 0 && area.width >= 2 {
            buffer.put(glyphs.ellipsis, x: area.right - 2, y: area.y, style: secondary, clip: area)
        }
    }
}

/// Splits `text` into lines of at most `width` columns, at spaces where it can.
public func wrap(_ text: String, width: Int) -> [String] {
    guard width > 0 else { return [] }
    var lines: [String] = []
    var line = ""
    var lineWidth = 0
    var lastSpace: String.Index?
    for character in text {
        let w = DisplayWidth.of(character)
        if w == 0 && character != " " { continue }
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
        // Only the newest lines above the scroll can show, so wrap from there and stop once the area is full. A
        // line that does not fit whole shows from its start, cut with an ellipsis, never as its last piece.
        for line in lines.dropLast(scroll).reversed() {
            let (text, prefix, style) = Self.text(of: line, theme: theme)
            var wrapped = wrap(text, width: textWidth)
            let room = rowsForText - rows.count
            if wrapped.count > room {
                guard room > 0 else { break }
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
