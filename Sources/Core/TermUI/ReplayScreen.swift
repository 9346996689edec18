/// What the replay of a recording shows: the room screen as it was at the moment being played (its stage,
/// audience and chat, drawn by `RoomScreen`), under a header naming the recording and over a line saying where
/// the replay is and which keys apply.
public struct ReplayScreenModel: Hashable, Sendable {
    /// The room as it was; its header and status line are replaced by the replay's own.
    public var room: RoomScreenModel
    /// Whether the replay is paused.
    public var paused: Bool
    /// Whether it played to the end.
    public var ended: Bool
    /// Where it is and how long it is: "00:12 / 01:01".
    public var position: String
    /// The keys, most important first.
    public var hints: [KeyHint]

    public init(room: RoomScreenModel, paused: Bool, ended: Bool, position: String, hints: [KeyHint]) {
        self.room = room
        self.paused = paused
        self.ended = ended
        self.position = position
        self.hints = hints
    }
}

/// The replay's screen, as a pure function of its model.
public enum ReplayScreen {
    /// Draws the whole screen for `model` into `buffer`.
    public static func render(_ model: ReplayScreenModel, into buffer: inout CellBuffer, theme: Theme) {
        RoomScreen.render(model.room, into: &buffer, theme: theme)
        let area = buffer.area
        guard !area.isEmpty else { return }
        let glyphs = theme.glyphs
        if area.height > 1 {
            let row = area.row(0)
            let style = theme.style(.header)
            buffer.fill(row, style: style)
            var left = " \(model.room.header.room)"
            if !model.room.header.topic.isEmpty { left += " \(glyphs.dash) \"\(model.room.header.topic)\"" }
            left = glyphs.plain((row.width >= 60 ? " Replay \(glyphs.dot)" : "") + left)
            let count = "\(formatCount(model.room.header.peopleCount)) here"
            buffer.putHeader(
                left: left, right: [(count, false), ("", false)], keepingLeft: DisplayWidth.of(left), row: row,
                style: style, theme: theme)
        }
        let row = area.row(area.height - 1)
        let style = theme.style(.status)
        buffer.fill(row, style: style)
        let state = model.ended ? "ended" : model.paused ? "paused" : "playing"
        let mark =
            glyphs == .ascii ? (model.paused || model.ended ? "||" : ">") : (model.paused || model.ended ? "⏸" : "▶")
        let left = " \(mark) \(state) \(model.position)"
        var used = 0
        var kept: [KeyHint] = []
        let hints = model.hints.map { KeyHint(glyphs.plain($0.key), glyphs.plain($0.action)) }
        for hint in hints {
            let width = DisplayWidth.of(hint.key) + 1 + DisplayWidth.of(hint.action) + 2
            if DisplayWidth.of(left) + 2 + used + width <= row.width {
                kept.append(hint)
                used += width
            }
        }
        buffer.put(
            DisplayWidth.truncate(left, to: max(0, row.width - used), ellipsis: glyphs.ellipsis), x: row.x, y: row.y,
            style: style.patched(with: theme.style(.key)), clip: row)
        var x = row.right - used
        let keyStyle = style.patched(with: theme.style(.key))
        for hint in kept {
            x = buffer.put(hint.key, x: x, y: row.y, style: keyStyle, clip: row)
            x = buffer.put(" " + hint.action + "  ", x: x, y: row.y, style: style, clip: row)
        }
    }
}
