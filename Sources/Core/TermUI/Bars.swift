/// The header line: the recording mark while recording, then room, topic, head count, connection and round-trip
/// time.
public struct HeaderBar: Sendable {
    /// What to show.
    public var header: RoomScreenModel.Header

    /// Creates a header bar.
    public init(_ header: RoomScreenModel.Header) { self.header = header }

    /// The right-hand side, longest first; the bar uses the longest that leaves room for the room name.
    func rightVariants(glyphs: Glyphs) -> [(text: String, problem: Bool)] {
        let count = "\(formatCount(header.peopleCount)) here"
        let dot = " \(glyphs.dot) "
        switch header.connection {
        case .connected(let rtt):
            let mark = glyphs.connection[0]
            var variants: [(String, Bool)] = []
            if let rtt { variants.append(("\(mark) connected \(rtt) ms\(dot)\(count)", false)) }
            variants += [("\(mark) connected\(dot)\(count)", false), ("\(mark) \(count)", false), (mark, false)]
            return variants
        case .connecting:
            let mark = glyphs.connection[1]
            return [("\(mark) connecting\(glyphs.ellipsis)", true), (mark, true)]
        case .reconnecting(let attempt):
            let mark = glyphs.connection[1]
            return [
                ("\(mark) reconnecting (try \(attempt))\(dot)\(count)", true), ("\(mark) reconnecting", true),
                (mark, true),
            ]
        case .disconnected:
            let mark = glyphs.connection[2]
            return [("\(mark) disconnected", true), (mark, true)]
        }
    }

    /// Draws into the first row of `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        var row = area.row(0)
        let glyphs = theme.glyphs
        let style = theme.style(.header)
        buffer.fill(row, style: style)
        // Whatever keeps the room beyond the people in it is shown first and never dropped, at any width.
        if header.recording {
            let end = buffer.put(
                glyphs.recording, x: row.x + 1, y: row.y, style: style.patched(with: theme.style(.recording)),
                clip: row)
            row = Rect(x: end, y: row.y, width: max(0, row.right - end), height: 1)
            // The rest needs a space before it and something to show.
            guard row.width >= 3 else { return }
        }
        if header.streaming {
            let end = buffer.put(
                glyphs.live, x: row.x + 1, y: row.y, style: style.patched(with: theme.style(.recording)), clip: row)
            row = Rect(x: end, y: row.y, width: max(0, row.right - end), height: 1)
            guard row.width >= 3 else { return }
        }
        var room = " \(header.room)"
        if !header.topic.isEmpty { room += " \(glyphs.dash) \"\(header.topic)\"" }
        // The product name is the first thing to go on a narrow screen; the room's name and topic matter more than
        // the connection's details, which shrink to the mark before the topic is cut.
        let left = row.width >= 60 ? " Clubroom \(glyphs.dot)" + room : room
        buffer.putHeader(
            left: left, right: rightVariants(glyphs: glyphs), keepingLeft: DisplayWidth.of(left), row: row,
            style: style, theme: theme)
    }
}

/// A key and what it does: a hint in the status line (in one or two words), a line of the help (with an empty
/// key, a heading or a blank line), an entry of the actions menu.
public struct KeyHint: Hashable, Sendable {
    /// The key or command as shown, e.g. `m`, `Enter` or `/mute NAME`.
    public var key: String
    /// What it does.
    public var action: String

    /// Creates a key hint.
    public init(_ key: String, _ action: String) {
        self.key = key
        self.action = action
    }
}

extension CellBuffer {
    /// Draws a header row in `style`: `left` from the left edge and, at the right, the first of `variants`
    /// (fullest first) that leaves `leftWidth` columns for the left, else the last; a problem is drawn in the
    /// error style. The left is cut to the columns the right leaves. The room's and the lobby's headers share it.
    mutating func putHeader(
        left: String, right variants: [(text: String, problem: Bool)], keepingLeft leftWidth: Int, row: Rect,
        style: Style, theme: Theme
    ) {
        let ellipsis = theme.glyphs.ellipsis
        let right =
            variants.first { DisplayWidth.of($0.text) + 2 + leftWidth <= row.width } ?? variants.last ?? ("", false)
        let rightWidth = DisplayWidth.of(right.text)
        let leftRoom = row.width - rightWidth - 2
        if leftRoom > 0 {
            put(
                DisplayWidth.truncate(left, to: leftRoom, ellipsis: ellipsis), x: row.x, y: row.y, style: style,
                clip: row)
        }
        let x = max(row.x, row.right - rightWidth - 1)
        put(
            DisplayWidth.truncate(right.text, to: row.right - x, ellipsis: ellipsis), x: x, y: row.y,
            style: right.problem ? style.patched(with: theme.style(.error)) : style, clip: row)
    }
}

/// The status line: who you are, your role and microphone, and the keys that apply to you.
public struct StatusBar: Sendable {
    /// Who you are and the hints to show, most important first.
    public var status: RoomScreenModel.StatusLine

    /// Creates a status bar.
    public init(_ status: RoomScreenModel.StatusLine) {
        self.status = status
    }

    /// The microphone's state (or, for listeners, whether the hand is up): the first thing on the line.
    public var micState: String {
        switch status.micMuted {
        case .some where status.micMissing: "no mic"
        case .some(true): "mic muted"
        case .some(false): "mic on"
        case .none: status.handRaised ? "hand raised" : "listening"
        }
    }

    /// The role as the line names it: the audience are listeners.
    var roleWord: String { status.role == .audience ? "listener" : status.role.rawValue }

    /// The left-hand side: the microphone first, then who you are; on a narrow line it is cut from the end.
    public func identity(glyphs: Glyphs) -> String {
        let dot = " \(glyphs.dot) "
        let signal = status.signal.map { "\(dot)signal \(glyphs.signalBars($0))" } ?? ""
        let playing = status.playing.map { "\(dot)\(glyphs.playing) \(glyphs.plain($0))" } ?? ""
        return " \(micState)\(dot)you: \(status.name)\(dot)\(roleWord)\(signal)\(playing)"
    }

    /// Draws into the first row of `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let row = area.row(0)
        let style = theme.style(.status)
        buffer.fill(row, style: style)
        var left = identity(glyphs: theme.glyphs)
        // What rang stays marked, after the microphone, until a key is pressed.
        let dot = " \(theme.glyphs.dot) "
        let alert = status.alert.map { "\(theme.glyphs.notice) \($0)" }
        if let alert {
            let mic = " \(micState)"
            left = mic + dot + alert + String(left.dropFirst(mic.count))
        }
        let ordered = status.hints
        // Keep the most important hints that fit beside at least a short identity, then show them in the
        // familiar order: the role's own keys first, help last.
        var kept: [KeyHint] = []
        var used = 0
        // Who you are comes first on a screen of reasonable width; on a narrow one keep at least a short identity.
        let leftWidth = min(DisplayWidth.of(left), row.width >= 60 ? row.width / 2 : 16)
        for hint in ordered {
            let width = DisplayWidth.of(hint.key) + 1 + DisplayWidth.of(hint.action) + 2
            if leftWidth + 2 + used + width <= row.width {
                kept.append(hint)
                used += width
            }
        }
        let shown = kept.dropFirst() + kept.prefix(1)
        let hintsWidth = used
        let leftRoom = row.width - hintsWidth - 2
        if leftRoom > 0 {
            buffer.put(
                DisplayWidth.truncate(left, to: leftRoom, ellipsis: theme.glyphs.ellipsis), x: row.x, y: row.y,
                style: style, clip: row)
            if let alert {
                let start = row.x + 1 + DisplayWidth.of(micState) + DisplayWidth.of(dot)
                let width = min(DisplayWidth.of(alert), max(0, row.x + leftRoom - start))
                buffer.setStyle(
                    Rect(x: start, y: row.y, width: width, height: 1), style: theme.style(.error), patch: true)
            }
        }
        var x = row.right - hintsWidth
        let keyStyle = style.patched(with: theme.style(.key))
        for hint in shown {
            x = buffer.put(hint.key, x: x, y: row.y, style: keyStyle, clip: row)
            x = buffer.put(" " + hint.action + "  ", x: x, y: row.y, style: style, clip: row)
        }
    }
}

/// A notice or problem, drawn where the rule above the status line would be: wrapped at spaces onto as many rows
/// as the area has (the screen gives it two when it does not fit on one), the later rows indented under the
/// text. A notice longer than that ends with the last whole word that fits and `…`; the event log keeps it whole.
public struct NoticeLine: Sendable {
    /// What to say.
    public var notice: RoomScreenModel.Notice

    /// Creates a notice line.
    public init(_ notice: RoomScreenModel.Notice) { self.notice = notice }

    /// How far the rows after the first are indented: under the text, past the first row's ` ! `.
    static let indent = 3

    func text(theme: Theme) -> String { (notice.isError ? " ! " : " ") + theme.glyphs.plain(notice.text) }

    /// The notice's rows at `width`, a column kept free at the right; the later rows without their indent.
    func lines(width: Int, theme: Theme) -> [String] {
        let first = max(1, width - 1)
        return wrap(text(theme: theme), width: first, continuation: max(1, first - Self.indent))
    }

    /// How many rows the notice takes at `width`.
    public func rowsNeeded(width: Int, theme: Theme) -> Int {
        max(1, lines(width: width, theme: theme).count)
    }

    /// Draws into `area`.
    public func render(into buffer: inout CellBuffer, area: Rect, theme: Theme) {
        guard !area.isEmpty else { return }
        let style = theme.style(notice.isError ? .error : .notice)
        buffer.fill(area, style: style)
        let lines = lines(width: area.width, theme: theme)
        for (index, line) in lines.prefix(area.height).enumerated() {
            let indent = index == 0 ? "" : String(repeating: " ", count: Self.indent)
            var shown = line
            if index == area.height - 1 && lines.count > area.height {
                // The rest does not fit: its first words that leave room for " …", cut at a space.
                let room = max(1, area.width - 1 - indent.count - 2)
                let rest = lines[index...].joined(separator: " ")
                shown = (wrap(rest, width: room).first ?? "") + " " + theme.glyphs.ellipsis
            }
            buffer.put(
                DisplayWidth.truncate(indent + shown, to: area.width, ellipsis: theme.glyphs.ellipsis), x: area.x,
                y: area.y + index, style: style, clip: area)
        }
    }
}
