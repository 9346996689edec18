/// A run of adjacent changed cells in one row that share a style: what the terminal must write.
public struct DiffRun: Hashable, Sendable {
    /// The first column.
    public var x: Int
    /// The row.
    public var y: Int
    /// The text to write; wide characters appear once and cover two columns.
    public var text: String
    /// The style of every cell in the run.
    public var style: Style
    /// How many columns the run covers.
    public var width: Int
}

extension CellBuffer {
    /// The runs to write to turn a screen showing `previous` into one showing this buffer.
    ///
    /// Runs hold only cells that changed, merged while they are adjacent and styled alike. A wide character
    /// is written whole: if either of its halves changed, the run covers both. When the sizes differ, every
    /// non-blank cell is written, as after a clear.
    public func diff(from previous: CellBuffer) -> [DiffRun] {
        let sameSize = previous.width == width && previous.height == height
        var runs: [DiffRun] = []
        var changed = [Bool](repeating: false, count: width)
        for row in 0..<height {
            let base = row * width
            var any = false
            for column in 0..<width {
                let cell = cells[base + column]
                changed[column] = sameSize ? cell != previous.cells[base + column] : cell != .blank
                any = any || changed[column]
            }
            guard any else { continue }
            for column in 0..<width where changed[column] {
                if cells[base + column].isContinuation {
                    if column > 0 { changed[column - 1] = true }
                } else if column + 1 < width, cells[base + column + 1].isContinuation {
                    changed[column + 1] = true
                }
            }
            var current: DiffRun?
            for column in 0..<width {
                guard changed[column] else {
                    if let run = current { runs.append(run) }
                    current = nil
                    continue
                }
                let cell = cells[base + column]
                if var run = current, run.style == cell.style || cell.isContinuation {
                    run.text += cell.text
                    run.width += 1
                    current = run
                } else {
                    if let run = current { runs.append(run) }
                    current = DiffRun(x: column, y: row, text: cell.text, style: cell.style, width: 1)
                }
            }
            if let run = current { runs.append(run) }
        }
        return runs
    }
}
