/// What the lobby screen shows: the server's live rooms, most listeners first, and what just happened.
public struct LobbyScreenModel: Hashable, Sendable {
    /// Someone on a room's stage, as the list names them.
    public struct StageName: Hashable, Sendable {
        public enum Badge: Hashable, Sendable { case host, moderator, none }
        public var name: String
        public var badge: Badge

        public init(_ name: String, badge: Badge = .none) {
            self.name = name
            self.badge = badge
        }
    }

    /// One live room.
    public struct Entry: Hashable, Sendable {
        /// The room's name, as in `/rooms/ROOM`.
        public var room: String
        /// Its topic; empty when none is set (the name is shown instead).
        public var topic: String
        /// Who is on stage (the first few).
        public var stage: [StageName]
        /// Everyone on stage, named or not.
        public var onStage: Int
        public var listeners: Int
        public var raisedHands: Int
        /// How long it has been live, e.g. `12m`, `1h05m`.
        public var age: String
        /// Whether the room is being recorded: its row starts with `● REC` (`[REC]` in ASCII), before anyone
        /// walks in.
        public var recording: Bool
        /// Whether the room streams live: its row shows `● LIVE` (`[LIVE]` in ASCII), before anyone walks in.
        public var streaming: Bool
        /// A few listeners by name (the selected room shows them on a row of its own).
        public var audience: [String]

        public init(
            room: String, topic: String, stage: [StageName], onStage: Int, listeners: Int, raisedHands: Int,
            age: String, recording: Bool = false, streaming: Bool = false, audience: [String] = []
        ) {
            self.audience = audience
            self.streaming = streaming
            self.recording = recording
            self.room = room
            self.topic = topic
            self.stage = stage
            self.onStage = onStage
            self.listeners = listeners
            self.raisedHands = raisedHands
            self.age = age
        }
    }

    public enum Connection: Hashable, Sendable {
        case connecting
        case connected
        case reconnecting(attempt: Int)
        case disconnected
    }

    /// The dialog that opens a new room: its two fields, which one is typed in, and the last problem.
    public struct Form: Hashable, Sendable {
        public var name: LineEditor
        public var topic: LineEditor
        public var onTopic: Bool
        public var problem: String?
        /// Whether the server's answer is awaited.
        public var waiting: Bool

        public init(name: LineEditor, topic: LineEditor, onTopic: Bool, problem: String?, waiting: Bool) {
            self.name = name
            self.topic = topic
            self.onTopic = onTopic
            self.problem = problem
            self.waiting = waiting
        }
    }

    /// The server, as people read it (`rooms.example.org`, `127.0.0.1:7480`).
    public var server: String
    public var connection: Connection
    /// Whether the first list has arrived (before it, the screen says it is connecting).
    public var listed: Bool
    public var entries: [Entry]
    /// The selected entry's index.
    public var selected: Int?
    /// What happened lately (rooms started and ended), oldest first.
    public var happenings: [String]
    public var notice: RoomScreenModel.Notice?
    /// The room being joined, while the connection to it opens.
    public var joining: String?
    /// What an empty lobby suggests, below the line that says it is empty.
    public var emptyAdvice: [String]
    /// Whether `n` opens a room here (the key hints offer it).
    public var mayOpen: Bool
    /// The dialog that opens a room, while it is open.
    public var form: Form?

    public init(
        server: String, connection: Connection, listed: Bool, entries: [Entry], selected: Int?,
        happenings: [String] = [], notice: RoomScreenModel.Notice? = nil, joining: String? = nil,
        emptyAdvice: [String] = LobbyScreen.emptyAdvice, mayOpen: Bool = false, form: Form? = nil
    ) {
        self.emptyAdvice = emptyAdvice
        self.mayOpen = mayOpen
        self.form = form
        self.server = server
        self.connection = connection
        self.listed = listed
        self.entries = entries
        self.selected = selected
        self.happenings = happenings
        self.notice = notice
        self.joining = joining
    }
}

/// The lobby screen, drawn as a pure function of a `LobbyScreenModel`.
///
/// From the top: the header (server, connection, how many rooms), the list of live rooms (two rows each: the
/// topic with its listeners, raised hands and age; then who is on stage and the room's name), what happened
/// lately (rooms that started and ended) when there is room for it, a rule or the notice, and the key hints.
/// See docs/ui.md, "The lobby".
public enum LobbyScreen {
    /// The rows one room takes.
    public static let rowsPerEntry = 2
    /// The most lines of what happened lately that are shown.
    public static let happeningRows = 3

    /// Draws the whole screen for `model` into `buffer`, replacing what was there.
    public static func render(_ model: LobbyScreenModel, into buffer: inout CellBuffer, theme: Theme) {
        let area = buffer.area
        buffer.fill(area)
        guard !area.isEmpty else { return }
        let bottom = area.row(area.height - 1)
        renderHints(model, into: &buffer, row: bottom, theme: theme)
        if area.height == 1 { return }
        renderHeader(model, into: &buffer, row: area.row(0), theme: theme)
        if area.height >= 3 {
            let ruleRow = area.row(area.height - 2)
            if let notice = model.notice {
                NoticeLine(notice).render(into: &buffer, area: ruleRow, theme: theme)
            } else {
                Rule().render(into: &buffer, area: ruleRow, theme: theme)
            }
        }
        let middle = Rect(x: area.x, y: area.y + 1, width: area.width, height: max(0, area.height - 3))
        guard !middle.isEmpty else { return }
        // What happened lately gets its title and up to three lines once the list keeps room for three rooms.
        let wanted = min(happeningRows, model.happenings.count)
        let happeningHeight = wanted > 0 && middle.height >= 2 + 3 * rowsPerEntry + 1 + wanted ? wanted + 1 : 0
        let list = Rect(x: middle.x, y: middle.y, width: middle.width, height: middle.height - happeningHeight)
        renderList(model, into: &buffer, area: list, theme: theme)
        defer { if let form = model.form { renderForm(form, into: &buffer, area: middle, theme: theme) } }
        if happeningHeight > 0 {
            let pane = Rect(x: middle.x, y: list.bottom, width: middle.width, height: happeningHeight)
            SectionHeader("Happening").render(into: &buffer, area: pane.row(0), theme: theme)
            for (offset, line) in model.happenings.suffix(wanted).enumerated() {
                let row = pane.row(offset + 1)
                let text = " \(theme.glyphs.event) " + line
                buffer.put(
                    DisplayWidth.truncate(text, to: row.width, ellipsis: theme.glyphs.ellipsis), x: row.x, y: row.y,
                    style: theme.style(.secondary), clip: row)
            }
        }
    }

    /// The header: the server on the left, the connection and the number of rooms on the right.
    static func renderHeader(_ model: LobbyScreenModel, into buffer: inout CellBuffer, row: Rect, theme: Theme) {
        let glyphs = theme.glyphs
        let style = theme.style(.header)
        buffer.fill(row, style: style)
        let left = (row.width >= 60 ? " Clubroom \(glyphs.dot) lobby \(glyphs.dash) " : " ") + model.server
        let count = model.entries.count
        let rooms = "\(formatCount(count)) live \(count == 1 ? "room" : "rooms")"
        let dot = " \(glyphs.dot) "
        let variants: [(text: String, problem: Bool)]
        switch model.connection {
        case .connected:
            variants = [("\(glyphs.connection[0]) connected\(dot)\(rooms)", false), (rooms, false)]
        case .connecting:
            variants = [("\(glyphs.connection[1]) connecting\(glyphs.ellipsis)", true), (glyphs.connection[1], true)]
        case .reconnecting(let attempt):
            variants = [
                ("\(glyphs.connection[1]) reconnecting (try \(attempt))", true), (glyphs.connection[1], true),
            ]
        case .disconnected:
            variants = [("\(glyphs.connection[2]) disconnected", true), (glyphs.connection[2], true)]
        }
        buffer.putHeader(
            left: left, right: variants, keepingLeft: min(DisplayWidth.of(left), 12), row: row, style: style,
            theme: theme)
    }

    /// The title and the rooms, scrolled to keep the selection in view.
    static func renderList(_ model: LobbyScreenModel, into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let count = model.entries.count
        SectionHeader(model.listed ? "Live rooms (\(formatCount(count)))" : "Live rooms").render(
            into: &buffer, area: area.row(0), theme: theme)
        let rows = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        guard !rows.isEmpty else { return }
        if !model.listed || model.entries.isEmpty {
            let text: String
            if !model.listed {
                text =
                    model.connection == .disconnected
                    ? "Not connected." : "Connecting to \(model.server)\(theme.glyphs.ellipsis)"
            } else {
                text = "No live rooms right now. New rooms appear here as they start."
            }
            buffer.put(
                DisplayWidth.truncate("  " + text, to: rows.width, ellipsis: theme.glyphs.ellipsis), x: rows.x,
                y: rows.y, style: theme.style(.secondary), clip: rows)
            // An empty lobby says what a person can do instead of waiting: as many of its lines as fit.
            guard model.listed, model.connection != .disconnected else { return }
            let advice = model.emptyAdvice.flatMap { wrap($0, width: max(1, rows.width - 2)) }
            for (index, line) in advice.prefix(max(0, rows.height - 1)).enumerated() {
                buffer.put("  " + line, x: rows.x, y: rows.y + 1 + index, style: theme.style(.secondary), clip: rows)
            }
            return
        }
        // One room per row when two do not fit a single room.
        let perEntry = rows.height >= rowsPerEntry ? rowsPerEntry : 1
        // The selected room shows a few of its listeners on a row of its own, when two rooms still fit besides.
        let preview =
            perEntry == rowsPerEntry && model.selected.map { !model.entries[$0].audience.isEmpty } == true
                && rows.height >= 2 * rowsPerEntry + 1 ? 1 : 0
        let visible = max(1, (rows.height - preview) / perEntry)
        let first = scrollStart(selectedRow: model.selected, total: count, visible: visible)
        let last = min(count, first + visible) - 1
        let moreBelow = first + visible < count
        var top = rows.y
        for index in first...last {
            let height = perEntry + (index == model.selected ? preview : 0)
            let entryArea = Rect(x: rows.x, y: top, width: rows.width, height: height)
            top += height
            // More rooms below than fit: the last row says so at its right end (as the audience grid does),
            // with a space before it so it is not read as part of a name.
            let marked = moreBelow && index == last
            renderEntry(
                model.entries[index], selected: index == model.selected, joining: model.joining,
                into: &buffer, area: entryArea, theme: theme,
                reserve: marked ? 2 : 0)
            if marked {
                let row = entryArea.row(entryArea.height - 1)
                buffer.put(theme.glyphs.ellipsis, x: row.right - 1, y: row.y, style: theme.style(.secondary), clip: row)
            }
        }
    }

    /// The numbers on the right of a room's first row, longest first: the row uses the longest that leaves the
    /// title at least a dozen columns.
    static func statsVariants(_ entry: LobbyScreenModel.Entry, glyphs: Glyphs) -> [String] {
        let dot = " \(glyphs.dot) "
        let listening = "\(formatCount(entry.listeners)) listening"
        let hands =
            entry.raisedHands > 0
            ? "\(dot)\(formatCount(entry.raisedHands)) \(entry.raisedHands == 1 ? "hand" : "hands")" : ""
        return [
            listening + hands + dot + entry.age, listening + dot + entry.age, listening, formatCount(entry.listeners),
        ]
    }

    /// Who is on stage, as the second row says it: `★ Ana, ◆ Bo, Chen +2 on stage`.
    static func stageText(_ entry: LobbyScreenModel.Entry, glyphs: Glyphs) -> String {
        if entry.onStage == 0 { return "nobody on stage" }
        let names = entry.stage.map { name -> String in
            switch name.badge {
            case .host: "\(glyphs.host) \(name.name)"
            case .moderator: "\(glyphs.moderator) \(name.name)"
            case .none: name.name
            }
        }
        let more = entry.onStage - entry.stage.count
        return names.joined(separator: ", ") + (more > 0 ? " +\(more)" : "") + " on stage"
    }

    /// Draws one room; `reserve` columns at the right end of its last row are left for the "more" mark.
    static func renderEntry(
        _ entry: LobbyScreenModel.Entry, selected: Bool, joining: String?, into buffer: inout CellBuffer,
        area: Rect, theme: Theme, reserve: Int = 0
    ) {
        let glyphs = theme.glyphs
        let base = selected ? theme.style(.selection) : Style.plain
        let secondary = selected ? base : theme.style(.secondary)
        if selected { buffer.fill(area, style: base) }
        var first = area.row(0)
        if area.height == 1 { first.width = max(0, first.width - reserve) }
        let marker = selected ? glyphs.selection : " "
        let title = entry.topic.isEmpty ? entry.room : entry.topic
        var stats = statsVariants(entry, glyphs: glyphs).last ?? ""
        for variant in statsVariants(entry, glyphs: glyphs) where DisplayWidth.of(variant) + 16 <= first.width {
            stats = variant
            break
        }
        if joining == entry.room { stats = "joining\(glyphs.ellipsis)" }
        let statsWidth = DisplayWidth.of(stats)
        var x = buffer.put(" \(marker) ", x: first.x, y: first.y, style: base, clip: first)
        if entry.recording {
            x = buffer.put(
                glyphs.recording, x: x, y: first.y, style: base.patched(with: theme.style(.recording)), clip: first)
            x = buffer.put(" ", x: x, y: first.y, style: base, clip: first)
        }
        if entry.streaming {
            x = buffer.put(
                glyphs.live, x: x, y: first.y, style: base.patched(with: theme.style(.recording)), clip: first)
            x = buffer.put(" ", x: x, y: first.y, style: base, clip: first)
        }
        let titleRoom = first.right - x - statsWidth - 2
        if titleRoom > 0 {
            x = buffer.put(
                DisplayWidth.truncate(title, to: titleRoom, ellipsis: glyphs.ellipsis), x: x, y: first.y,
                style: base.patched(with: Style(bold: true)), clip: first)
        }
        buffer.put(
            stats, x: max(x + 1, first.right - statsWidth - 1), y: first.y, style: base, clip: first)
        guard area.height >= 2 else { return }
        var second = area.row(1)
        second.width = max(0, second.width - reserve)
        let name = entry.topic.isEmpty ? "" : entry.room
        let nameWidth = DisplayWidth.of(name)
        let stageRoom = second.width - 5 - (nameWidth > 0 ? nameWidth + 3 : 1)
        if stageRoom > 0 {
            buffer.put(
                DisplayWidth.truncate(stageText(entry, glyphs: glyphs), to: stageRoom, ellipsis: glyphs.ellipsis),
                x: second.x + 5, y: second.y, style: secondary, clip: second)
        }
        if nameWidth > 0, nameWidth + 8 <= second.width {
            buffer.put(name, x: second.right - nameWidth - 1, y: second.y, style: secondary, clip: second)
        }
        guard area.height >= 3 else { return }
        var third = area.row(2)
        third.width = max(0, third.width - reserve)
        if third.width > 6 {
            buffer.put(
                DisplayWidth.truncate(audienceText(entry), to: third.width - 6, ellipsis: glyphs.ellipsis),
                x: third.x + 5, y: third.y, style: secondary, clip: third)
        }
    }

    /// A few of the selected room's listeners: `listening: Hana, Ivo, Jun and 1,194 more`.
    static func audienceText(_ entry: LobbyScreenModel.Entry) -> String {
        let more = entry.listeners - entry.audience.count
        var names = entry.audience
        if more > 0 { names.append("\(formatCount(more)) more") }
        let list =
            names.count == 1
            ? names[0] : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
        return "listening: " + list
    }

    /// The dialog that opens a room, centred over the list: the two fields, the problem or what Enter does,
    /// and the keys.
    static func renderForm(_ form: LobbyScreenModel.Form, into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let width = min(area.width, 60)
        let box = area.centered(width: width, height: min(area.height, 7))
        let inside = Box(title: "Open a room", footer: "Esc cancels").render(into: &buffer, area: box, theme: theme)
        guard !inside.isEmpty else { return }
        let style = theme.style(.overlay)
        let focused = style.patched(with: Style(bold: true))
        let fields: [(LineEditor, Bool)] = [(form.name, !form.onTopic), (form.topic, form.onTopic)]
        for (offset, field) in fields.enumerated() where offset < inside.height {
            let row = inside.row(offset)
            if field.1, !form.waiting {
                field.0.render(into: &buffer, area: row, style: focused)
            } else {
                buffer.fill(row, style: style)
                let text = field.0.prompt + field.0.text
                buffer.put(
                    DisplayWidth.truncate(text, to: row.width, ellipsis: theme.glyphs.ellipsis), x: row.x, y: row.y,
                    style: style, clip: row)
            }
        }
        let message: String
        let messageStyle: Style
        if let problem = form.problem {
            message = problem
            messageStyle = style.patched(with: theme.style(.error))
        } else if form.waiting {
            message = "Opening \(form.name.text)\(theme.glyphs.ellipsis)"
            messageStyle = style
        } else {
            message =
                form.onTopic
                ? "Enter opens the room, with you as its host." : "Letters, digits, - _ . (no spaces); Enter goes on."
            messageStyle = theme.style(.secondary)
        }
        let lines = wrap(message, width: max(1, inside.width)).prefix(max(0, inside.height - 3))
        for (offset, line) in lines.enumerated() {
            buffer.put(line, x: inside.x, y: inside.y + 3 + offset, style: messageStyle, clip: inside)
        }
    }

    /// What a person can do in a lobby with no live room, below the sentence that says so (docs/ui.md, "The
    /// lobby"): open a room they have a link for, start one as its host, or wait; and how to quit.
    public static let emptyAdvice = [
        "Have a link to a room? Press q, then run: clubroom join LINK",
        "To start a room, its host joins it with a host's room link (clubroom invite --room NAME --role host, on "
            + "the server); it is listed here once someone is in it.",
        "Or wait here for one to start. q quits.",
    ]

    /// The keys of the lobby, in the order the status line offers them; the last fall away on narrow screens.
    public static func hints(for model: LobbyScreenModel, glyphs: Glyphs) -> [KeyHint] {
        // Arrows are one column each in Unicode; in ASCII they are words ("Up/Down").
        let arrows =
            glyphs.arrows[0].count == 1
            ? glyphs.arrows[0] + glyphs.arrows[1] : glyphs.arrows[0] + "/" + glyphs.arrows[1]
        var hints: [KeyHint] = []
        if model.form != nil {
            return [KeyHint("Tab", "next field"), KeyHint("Enter", "go on"), KeyHint("Esc", "cancel")]
        }
        if !model.entries.isEmpty { hints.append(KeyHint("Enter", "join")) }
        if model.mayOpen { hints.append(KeyHint("n", "new room")) }
        hints.append(KeyHint("q", "quit"))
        if model.entries.count > 1 { hints.append(KeyHint(arrows, "choose")) }
        hints.append(KeyHint("r", "refresh"))
        return hints
    }

    static func renderHints(_ model: LobbyScreenModel, into buffer: inout CellBuffer, row: Rect, theme: Theme) {
        let style = theme.style(.status)
        buffer.fill(row, style: style)
        let keyStyle = style.patched(with: theme.style(.key))
        var x = row.x + 1
        for hint in hints(for: model, glyphs: theme.glyphs) {
            let width = DisplayWidth.of(hint.key) + 1 + DisplayWidth.of(hint.action)
            guard x + width <= row.right else { break }
            x = buffer.put(hint.key, x: x, y: row.y, style: keyStyle, clip: row)
            x = buffer.put(" " + hint.action + "  ", x: x, y: row.y, style: style, clip: row)
        }
    }
}
