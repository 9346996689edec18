import Testing

@testable import TermUI

@Suite("Cell buffer and diff")
struct BufferTests {
    @Test func wideCharactersTakeTwoCells() {
        var buffer = CellBuffer(width: 6, height: 1)
        let end = buffer.put("a王b", x: 0, y: 0, style: .plain)
        #expect(end == 4)
        #expect(buffer[1, 0].text == "王")
        #expect(buffer[2, 0].isContinuation)
        #expect(buffer.lines() == ["a王b  "])
    }

    @Test func overwritingHalfAWideCharacterClearsTheOtherHalf() {
        var buffer = CellBuffer(width: 4, height: 1)
        buffer.put("王小", x: 0, y: 0, style: .plain)
        buffer.put("x", x: 1, y: 0, style: .plain)
        #expect(buffer.lines() == [" x小"])
        buffer.put("y", x: 2, y: 0, style: .plain)
        #expect(buffer.lines() == [" xy "])
        #expect(!buffer[3, 0].isContinuation)
    }

    /// Emoji names used to be measured as two columns and written whole: ncurses then laid out a ZWJ family as
    /// eight columns and a skin tone as four, and the row spilled into the next. The cells now hold what every
    /// terminal advances alike, and the diff writes exactly that.
    @Test func cellsHoldWhatTheTerminalAdvancesBy() {
        var buffer = CellBuffer(width: 12, height: 1)
        let end = buffer.put("👨‍👩‍👧‍👦👍🏽❤️का|", x: 0, y: 0, style: .plain)
        #expect(end == 8)
        #expect(buffer.lines() == ["👨👍❤का|    "])
        #expect((0..<8).map { buffer[$0, 0].text } == ["👨", "", "👍", "", "❤", "क", "ा", "|"])
        let runs = buffer.diff(from: CellBuffer(width: 12, height: 1))
        #expect(runs.map(\.text) == ["👨👍❤का|"])
        #expect(runs.map(\.width) == [8])
    }

    @Test func aWideCharacterThatDoesNotFitBecomesASpace() {
        var buffer = CellBuffer(width: 3, height: 1)
        buffer.put("ab王", x: 0, y: 0, style: .plain)
        #expect(buffer.lines() == ["ab "])
        #expect(!buffer[2, 0].isContinuation)
    }

    @Test func writingIsClipped() {
        var buffer = CellBuffer(width: 5, height: 2)
        buffer.put("abcdefgh", x: 2, y: 1, style: .plain)
        buffer.put("zzz", x: -2, y: 0, style: .plain)
        buffer.put("never", x: 0, y: 5, style: .plain)
        #expect(buffer.lines() == ["z    ", "  abc"])
        buffer.put("12345", x: 0, y: 0, style: .plain, maxWidth: 2)
        #expect(buffer.lines()[0] == "12   ")
    }

    @Test func emptyBufferIsSafe() {
        var buffer = CellBuffer(width: 0, height: 0)
        buffer.put("x", x: 0, y: 0, style: .plain)
        buffer.fill(Rect(width: 3, height: 3), with: "#")
        #expect(buffer.lines() == [])
        #expect(buffer.diff(from: CellBuffer(width: 0, height: 0)) == [])
        let negative = CellBuffer(width: -3, height: 2)
        #expect(negative.width == 0)
    }

    @Test func changingOneCellYieldsOneRun() {
        var before = CellBuffer(width: 10, height: 3)
        before.put("hello", x: 0, y: 1, style: .plain)
        var after = before
        after.put("j", x: 0, y: 1, style: .plain)
        #expect(after.diff(from: before) == [DiffRun(x: 0, y: 1, text: "j", style: .plain, width: 1)])
        #expect(before.diff(from: before) == [])
    }

    @Test func adjacentChangesMergeAndStyleChangesSplit() {
        let before = CellBuffer(width: 10, height: 1)
        var after = before
        let bold = Style(bold: true)
        after.put("ab", x: 1, y: 0, style: .plain)
        after.put("cd", x: 3, y: 0, style: bold)
        after.put("e", x: 8, y: 0, style: .plain)
        #expect(
            after.diff(from: before) == [
                DiffRun(x: 1, y: 0, text: "ab", style: .plain, width: 2),
                DiffRun(x: 3, y: 0, text: "cd", style: bold, width: 2),
                DiffRun(x: 8, y: 0, text: "e", style: .plain, width: 1),
            ])
    }

    @Test func wideCharacterEditsAreWrittenWhole() {
        var before = CellBuffer(width: 6, height: 1)
        before.put("a王b", x: 0, y: 0, style: .plain)
        var after = before
        after.put("小", x: 1, y: 0, style: .plain)
        #expect(after.diff(from: before) == [DiffRun(x: 1, y: 0, text: "小", style: .plain, width: 2)])

        // Replacing a wide character with two narrow ones writes both cells.
        var narrow = before
        narrow.put("xy", x: 1, y: 0, style: .plain)
        #expect(narrow.diff(from: before) == [DiffRun(x: 1, y: 0, text: "xy", style: .plain, width: 2)])

        // Putting a wide character over two narrow ones, where only the right cell differs in text.
        var base = CellBuffer(width: 4, height: 1)
        base.put("ab", x: 0, y: 0, style: .plain)
        var wide = base
        wide.put("王", x: 0, y: 0, style: .plain)
        #expect(wide.diff(from: base) == [DiffRun(x: 0, y: 0, text: "王", style: .plain, width: 2)])
    }

    @Test func resizedBufferRedrawsEveryNonBlankCell() {
        var small = CellBuffer(width: 3, height: 1)
        small.put("abc", x: 0, y: 0, style: .plain)
        var large = CellBuffer(width: 5, height: 2)
        large.put("ab", x: 0, y: 1, style: .plain)
        #expect(large.diff(from: small) == [DiffRun(x: 0, y: 1, text: "ab", style: .plain, width: 2)])
    }

    @Test func applyingTheDiffReproducesTheBuffer() {
        var before = CellBuffer(width: 80, height: 24)
        RoomScreen.render(Scenes.sketch(), into: &before, theme: Theme(level: .ansi16))
        var model = Scenes.sketch()
        model.stage[0].level = 10
        model.stage[2].speaking = true
        model.header.peopleCount = 1205
        var after = CellBuffer(width: 80, height: 24)
        RoomScreen.render(model, into: &after, theme: Theme(level: .ansi16))
        var replay = before
        for run in after.diff(from: before) {
            replay.put(run.text, x: run.x, y: run.y, style: run.style)
        }
        #expect(replay == after)
        #expect(after.diff(from: before).count < 10)
    }

    @Test func splitsShareOutTheSpace() {
        let area = Rect(x: 0, y: 0, width: 10, height: 20)
        #expect(
            area.splitRows([.length(3), .fill(1), .length(2)]).map(\.height) == [3, 15, 2])
        #expect(area.splitColumns([.percentage(50), .fill(1)]).map(\.width) == [5, 5])
        #expect(area.splitRows([.length(30), .length(5)]).map(\.height) == [20, 0])
        #expect(area.splitRows([.min(4), .fill(1)]).map(\.height) == [12, 8])
        #expect(Rect(width: 1, height: 1).inset(horizontal: 1, vertical: 1) == Rect(width: 1, height: 1))
        #expect(Rect(width: 10, height: 4).inset(horizontal: 2, vertical: 1) == Rect(x: 2, y: 1, width: 6, height: 2))
        #expect(Rect(width: 4, height: 4).intersection(Rect(x: 6, y: 6, width: 2, height: 2)).isEmpty)
    }
}
