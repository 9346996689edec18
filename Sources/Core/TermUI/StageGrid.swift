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
