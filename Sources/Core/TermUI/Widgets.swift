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
