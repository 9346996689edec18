/// One terminal cell: what is written there (a piece of a grapheme cluster, see `DisplayWidth.pieces(of:)`) and
/// its style.
///
/// A wide character (two columns) lives in its left cell; the right cell is a continuation, which draws nothing
/// of its own and keeps the same style.
public struct Cell: Hashable, Sendable {
    /// The spacing character (with its combining marks) drawn here; empty for a continuation cell.
    public var text: String
    /// How the cell is drawn.
    public var style: Style
    /// True for the right half of a wide character.
    public var isContinuation: Bool

    /// Creates a cell.
    public init(_ text: String, style: Style = .plain, isContinuation: Bool = false) {
        self.text = text
        self.style = style
        self.isContinuation = isContinuation
    }

    /// A space in the default style.
    public static let blank = Cell(" ")
}

/// A grid of cells that widgets draw into; the terminal adapter only ever draws differences between two of them.
public struct CellBuffer: Hashable, Sendable {
    /// Columns.
    public let width: Int
    /// Rows.
    public let height: Int
    /// Cells, row by row.
    public private(set) var cells: [Cell]

    /// A buffer of blank cells; negative sizes become zero.
    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    /// The whole buffer as a rectangle.
    public var area: Rect { Rect(width: width, height: height) }

    /// The cell at column `x`, row `y`; a blank cell outside the buffer.
    public subscript(x: Int, y: Int) -> Cell {
        guard x >= 0, y >= 0, x < width, y < height else { return .blank }
        return cells[y * width + x]
    }

    /// Puts one grapheme cluster at (`x`, `y`) and returns how many columns it took.
    ///
    /// The cluster is written as `DisplayWidth.pieces(of:)` gives it, one piece a cell (two for a wide piece), so
    /// the cells hold exactly what a terminal advances by. Nothing outside `clip` (or the buffer) changes. A wide
    /// piece that does not fit whole becomes a space. Writing over either half of a wide character turns its other
    /// half into a space, so no half is left over.
    @discardableResult
    public mutating func set(_ character: Character, x: Int, y: Int, style: Style, clip: Rect? = nil) -> Int {
        let bounds = clip.map { $0.intersection(area) } ?? area
        guard y >= bounds.y, y < bounds.bottom, x >= bounds.x, x < bounds.right else { return 0 }
        if let columns = DisplayWidth.plainWidth(character) {
            guard columns > 0 else { return 0 }
            return setPiece(String(character), columns: columns, x: x, y: y, style: style, bounds: bounds)
        }
        var column = x
        for piece in DisplayWidth.pieces(of: character) {
            guard column < bounds.right else { break }
            column += setPiece(piece.text, columns: piece.width, x: column, y: y, style: style, bounds: bounds)
        }
        return column - x
    }

    private mutating func setPiece(_ text: String, columns: Int, x: Int, y: Int, style: Style, bounds: Rect) -> Int {
        if columns == 2 && x + 1 < bounds.right {
            release(x: x, y: y)
            release(x: x + 1, y: y)
            cells[y * width + x] = Cell(text, style: style)
            cells[y * width + x + 1] = Cell("", style: style, isContinuation: true)
            return 2
        }
        release(x: x, y: y)
        cells[y * width + x] = Cell(columns == 2 ? " " : text, style: style)
        return 1
    }

    /// Writes `text` from (`x`, `y`) rightwards, clipped to `clip` (or the buffer) and to `maxWidth` columns.
    /// Control characters are skipped. Returns the column after the last cell written.
    @discardableResult
    public mutating func put(
        _ text: some StringProtocol, x: Int, y: Int, style: Style, maxWidth: Int? = nil, clip: Rect? = nil
    ) -> Int {
        var bounds = clip.map { $0.intersection(area) } ?? area
        if let maxWidth {
            bounds = bounds.intersection(Rect(x: x, y: y, width: max(0, maxWidth), height: 1))
        }
        guard y >= bounds.y, y < bounds.bottom else { return x }
        var column = x
        for character in text {
            if column >= bounds.right { break }
            let columns = DisplayWidth.of(character)
            if columns == 0 { continue }
            if column < bounds.x {
                column += columns
                continue
            }
            column += set(character, x: column, y: y, style: style, clip: bounds)
        }
        return column
    }

    /// Fills `rect` with `character` (a space unless given) in `style`.
    public mutating func fill(_ rect: Rect, with character: Character = " ", style: Style = .plain) {
        let target = rect.intersection(area)
        guard !target.isEmpty else { return }
        let columns = DisplayWidth.of(character)
        guard columns == 1 else {
            fillCellByCell(target, with: character, columns: max(1, columns), style: style)
            return
        }
        // Every cell inside is overwritten, so only wide characters straddling the left or right edge need their
        // outer half blanked; the rest is plain assignment, which matters since every widget clears its area.
        let cell = Cell(String(character), style: style)
        for row in target.y..<target.bottom {
            release(x: target.x, y: row)
            release(x: target.right - 1, y: row)
            let base = row * width
            for column in target.x..<target.right { cells[base + column] = cell }
        }
    }

    private mutating func fillCellByCell(_ target: Rect, with character: Character, columns: Int, style: Style) {
        for row in target.y..<target.bottom {
            var column = target.x
            while column < target.right {
                let wrote = set(character, x: column, y: row, style: style, clip: target)
                column += wrote > 0 ? wrote : columns
            }
        }
    }

    /// Changes the style of every cell in `rect`, keeping their text; `patch` adds to each cell's style when true.
    public mutating func setStyle(_ rect: Rect, style: Style, patch: Bool = false) {
        let target = rect.intersection(area)
        guard !target.isEmpty else { return }
        for row in target.y..<target.bottom {
            for column in target.x..<target.right {
                let index = row * width + column
                cells[index].style = patch ? cells[index].style.patched(with: style) : style
            }
        }
    }

    /// The buffer as plain text, one string per row, trailing spaces kept; used by golden tests.
    public func lines() -> [String] {
        (0..<height).map { row in
            var line = ""
            for column in 0..<width where !cells[row * width + column].isContinuation {
                line += cells[row * width + column].text
            }
            return line
        }
    }

    /// Before overwriting the cell at (`x`, `y`), blanks the other half of a wide character it belongs to.
    private mutating func release(x: Int, y: Int) {
        let index = y * width + x
        let cell = cells[index]
        if cell.isContinuation, x > 0 {
            cells[index - 1] = Cell(" ", style: cells[index - 1].style)
            cells[index] = Cell(" ", style: cell.style)
        } else if x + 1 < width, cells[index + 1].isContinuation {
            cells[index + 1] = Cell(" ", style: cells[index + 1].style)
        }
    }
}
