/// Each person's speaking time and turns, most first, as the screen's panel and line mode's table show them.
public struct SpeakingTable: Hashable, Sendable {
    /// One person's line.
    public struct Row: Hashable, Sendable {
        public var name: String
        /// Speaking time in milliseconds.
        public var milliseconds: Int64
        public var turns: Int
        /// Whether they are talking as the tally was made.
        public var talking: Bool

        /// Creates a row.
        public init(name: String, milliseconds: Int64, turns: Int, talking: Bool) {
            self.name = name
            self.milliseconds = milliseconds
            self.turns = turns
            self.talking = talking
        }
    }

    /// The people, most speaking time first; nil until the server's first answer.
    public var rows: [Row]?

    /// Creates a table (nil rows: the answer has not come yet).
    public init(rows: [Row]?) {
        self.rows = rows
    }

    /// A speaking time as minutes and seconds, `m:ss` (whole seconds, cut down; minutes go past 59).
    public static func clock(milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds) / 1000
        let rest = seconds % 60
        return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
    }

    /// "1 turn", "3 turns".
    public static func turns(_ count: Int) -> String {
        count == 1 ? "1 turn" : "\(count) turns"
    }

    /// The columns of each row, aligned: the name padded to the widest, the time right-aligned, the turns, and
    /// `talking` for those talking now.
    public static func columns(_ rows: [Row]) -> [String] {
        let nameWidth = rows.reduce(0) { max($0, DisplayWidth.of($1.name)) }
        let clocks = rows.map { clock(milliseconds: $0.milliseconds) }
        let clockWidth = clocks.reduce(0) { max($0, $1.count) }
        return zip(rows, clocks).map { row, clock in
            let name = row.name + String(repeating: " ", count: nameWidth - DisplayWidth.of(row.name))
            let time = String(repeating: " ", count: clockWidth - clock.count) + clock
            let line = "\(name)  \(time)  \(turns(row.turns))"
            return row.talking ? line + "  talking" : line
        }
    }
}

/// The speaking-time panel (`s`): a line per person who has spoken since the room went live, most first.
public struct StatsOverlay: Sendable {
    /// What it shows.
    public var table: SpeakingTable

    /// Creates the panel.
    public init(_ table: SpeakingTable) { self.table = table }

    /// The panel's title.
    public static let title = "Speaking time"
    /// Its bottom border: how to close it.
    public static let footer = "s or Esc closes"

    /// The lines the panel shows: the aligned rows, or a sentence while there are none.
    public var lines: [String] {
        guard let rows = table.rows else { return ["Asking the server…"] }
        guard !rows.isEmpty else { return ["No one has spoken since the room went live."] }
        return SpeakingTable.columns(rows)
    }

    /// Draws the panel centred in `area`: as many lines as fit, the last marked when more are cut off.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let lines = self.lines.map(theme.glyphs.plain)
        let widest = lines.reduce(DisplayWidth.of(Self.title) + 4) { max($0, DisplayWidth.of($1)) }
        let box = area.centered(
            width: max(widest, DisplayWidth.of(Self.footer) + 2) + 4, height: lines.count + 2)
        let inside = Box(title: Self.title, footer: Self.footer).render(into: &buffer, area: box, theme: theme)
        guard !inside.isEmpty else { return }
        for (index, line) in lines.prefix(inside.height).enumerated() {
            let cut = index == inside.height - 1 && lines.count > inside.height
            let text = DisplayWidth.truncate(
                cut ? line + " " + theme.glyphs.ellipsis : line, to: inside.width, ellipsis: theme.glyphs.ellipsis)
            buffer.put(text, x: inside.x, y: inside.y + index, style: theme.style(.overlay), clip: inside)
        }
    }
}
