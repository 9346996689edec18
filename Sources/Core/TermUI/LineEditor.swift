/// What a key did to the command line.
public enum LineEditorOutcome: Hashable, Sendable {
    /// Still editing.
    case editing
    /// Enter: the line, without its prompt, is done.
    case submitted(String)
    /// Escape (or Backspace on an empty line): the command line closes.
    case cancelled
    /// The key means nothing to the editor.
    case ignored
}

/// A single-line editor for the `/` and `:` command line, with history. Pure: keys in, text and cursor out.
public struct LineEditor: Hashable, Sendable {
    /// What is shown before the text: the key that opened a command line (`/` or `:`), or the chat line's prompt.
    public var prompt: String
    /// The text being edited.
    public private(set) var characters: [Character]
    /// The cursor, between characters: 0 is before the first.
    public private(set) var cursor: Int
    /// Submitted lines, oldest first.
    public private(set) var history: [String]
    private var historyIndex: Int?
    private var draft: [Character] = []
    /// How many lines of history to keep.
    public let historyLimit: Int

    /// An empty line with the given prompt and history.
    public init(prompt: String = "/", text: String = "", history: [String] = [], historyLimit: Int = 100) {
        self.prompt = prompt
        characters = Array(text)
        cursor = characters.count
        self.history = Array(history.suffix(max(0, historyLimit)))
        self.historyLimit = max(0, historyLimit)
    }

    /// The text being edited.
    public var text: String { String(characters) }

    /// Clears the line for a new command, keeping the history.
    public mutating func reopen(prompt: String) {
        self.prompt = prompt
        characters = []
        cursor = 0
        historyIndex = nil
        draft = []
    }

    /// Applies one key.
    public mutating func handle(_ key: Key) -> LineEditorOutcome {
        switch key {
        case .char(let character):
            insert(character)
        case .enter:
            let line = text
            if !line.isEmpty && history.last != line {
                history.append(line)
                if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
            }
            characters = []
            cursor = 0
            historyIndex = nil
            return .submitted(line)
        case .escape, .ctrl("c"):
            return .cancelled
        case .backspace, .ctrl("h"):
            if characters.isEmpty { return .cancelled }
            if cursor > 0 {
                characters.remove(at: cursor - 1)
                cursor -= 1
            }
        case .delete, .ctrl("d"):
            if cursor < characters.count { characters.remove(at: cursor) }
        case .left, .ctrl("b"):
            cursor = max(0, cursor - 1)
        case .right, .ctrl("f"):
            cursor = min(characters.count, cursor + 1)
        case .home, .ctrl("a"):
            cursor = 0
        case .end, .ctrl("e"):
            cursor = characters.count
        case .ctrl("u"):
            characters.removeFirst(cursor)
            cursor = 0
        case .ctrl("k"):
            characters.removeLast(characters.count - cursor)
        case .ctrl("w"):
            deleteWordBackward()
        case .up, .ctrl("p"):
            historyUp()
        case .down, .ctrl("n"):
            historyDown()
        default:
            return .ignored
        }
        return .editing
    }

    /// Inserts `character` at the cursor; control characters are refused.
    public mutating func insert(_ character: Character) {
        guard DisplayWidth.of(character) > 0 else { return }
        characters.insert(character, at: cursor)
        cursor += 1
    }

    private mutating func deleteWordBackward() {
        var start = cursor
        while start > 0 && characters[start - 1] == " " { start -= 1 }
        while start > 0 && characters[start - 1] != " " { start -= 1 }
        characters.removeSubrange(start..<cursor)
        cursor = start
    }

    private mutating func historyUp() {
        guard !history.isEmpty else { return }
        let next: Int
        if let index = historyIndex {
            next = max(0, index - 1)
        } else {
            draft = characters
            next = history.count - 1
        }
        historyIndex = next
        characters = Array(history[next])
        cursor = characters.count
    }

    private mutating func historyDown() {
        guard let index = historyIndex else { return }
        if index + 1 < history.count {
            historyIndex = index + 1
            characters = Array(history[index + 1])
        } else {
            historyIndex = nil
            characters = draft
        }
        cursor = characters.count
    }

    /// Draws the prompt and text into the first row of `area`, scrolled so the cursor shows; the cursor cell is
    /// drawn in reverse video, since the terminal's own cursor stays hidden.
    public func render(into buffer: inout CellBuffer, area: Rect, style: Style = .plain) {
        guard !area.isEmpty else { return }
        let row = area.row(0)
        buffer.fill(row, style: style)
        let promptWidth = DisplayWidth.of(prompt)
        buffer.put(prompt, x: row.x, y: row.y, style: style, clip: row)
        let room = row.width - promptWidth
        guard room > 0 else { return }
        let widths = characters.map { DisplayWidth.of($0) }
        let cursorWidth = cursor < widths.count ? widths[cursor] : 1
        // Start from the cursor and take characters to the left while they fit.
        var first = cursor
        var used = cursorWidth
        while first > 0 && used + widths[first - 1] <= room {
            first -= 1
            used += widths[first]
        }
        var column = row.x + promptWidth
        var index = first
        while index < characters.count && column + widths[index] <= row.right {
            let cellStyle = index == cursor ? style.patched(with: Style(reverse: true)) : style
            column += buffer.set(characters[index], x: column, y: row.y, style: cellStyle, clip: row)
            index += 1
        }
        if cursor == characters.count && column < row.right {
            buffer.set(" ", x: column, y: row.y, style: style.patched(with: Style(reverse: true)), clip: row)
        }
    }
}
