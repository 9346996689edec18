import RoomCore
import TermUI

/// Text as the screen measures and draws it: names from the network end up here.
enum WidthChecks {
    /// What a terminal that places every scalar by `wcwidth` (ncursesw does) advances for `text`.
    static func advance(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + DisplayWidth.of($1) }
    }

    /// Scalars that terminals treat differently and the screen must never write.
    static func isUnreliable(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value == 0x200D || (0xFE00...0xFE0F).contains(value) || (0xE0000...0xE01EF).contains(value)
            || scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .unassigned
    }

    /// Input: a byte choosing a width, then UTF-8 text.
    static func displayWidth(_ input: [UInt8]) throws(FuzzFailure) {
        var choices = Choices(input)
        let width = Int(choices.byte() % 48)
        guard let text = String(validating: choices.rest, as: UTF8.self) else { return }

        var total = 0
        for character in text {
            let pieces = DisplayWidth.pieces(of: character)
            let columns = DisplayWidth.of(character)
            try expect(
                columns == pieces.reduce(0) { $0 + $1.width },
                "\(character.debugDescription) measures \(columns) but its pieces \(pieces) do not")
            for (index, piece) in pieces.enumerated() {
                let scalars = Array(piece.text.unicodeScalars)
                try expect((1...2).contains(piece.width), "a piece \(piece) of \(character.debugDescription)")
                try expect(
                    advance(piece.text) == piece.width,
                    "\(piece.text.debugDescription) of \(character.debugDescription) advances \(advance(piece.text)), "
                        + "not \(piece.width)")
                try expect(!scalars.contains(where: isUnreliable), "\(piece.text.debugDescription) is unreliable")
                try expect(DisplayWidth.of(scalars[0]) > 0, "a piece \(piece.text.debugDescription) starts with a mark")
                let marks = scalars.filter { DisplayWidth.of($0) == 0 }.count
                try expect(marks <= DisplayWidth.maxMarksPerPiece, "\(marks) marks in a piece")
                let spacing = scalars.count - marks
                try expect(
                    spacing == 1 || (spacing == 2 && pieces.count == 1 && index == 0 && piece.width == 2),
                    "\(spacing) spacing scalars in \(piece.text.debugDescription)")
            }
            total += columns
        }
        try expect(DisplayWidth.of(text) == total, "the text measures \(DisplayWidth.of(text)), its clusters \(total)")

        // The buffer holds what the terminal advances by, cell by cell and run by run.
        let columns = 240
        var buffer = CellBuffer(width: columns, height: 2)
        let end = buffer.put(text, x: 0, y: 0, style: .plain)
        if total <= columns { try expect(end == total, "put ends at \(end), the text is \(total) wide") }
        for column in 0..<columns {
            let cell = buffer[column, 0]
            let wide = column + 1 < columns && buffer[column + 1, 0].isContinuation
            if cell.isContinuation {
                try expect(column > 0 && !buffer[column - 1, 0].isContinuation, "a stray continuation at \(column)")
            } else {
                try expect(
                    advance(cell.text) == (wide ? 2 : 1),
                    "cell \(column) holds \(cell.text.debugDescription) for "
                        + "\(wide ? 2 : 1) columns")
            }
        }
        for run in buffer.diff(from: CellBuffer(width: columns, height: 2)) {
            try expect(advance(run.text) == run.width, "a run \(run.text.debugDescription) of \(run.width) columns")
        }
        // Writing at an offset into a narrow clip never leaves half a wide character.
        var clipped = CellBuffer(width: 12, height: 1)
        clipped.put(
            text, x: -1 - width % 3, y: 0, style: .plain, maxWidth: width, clip: Rect(x: 2, y: 0, width: 7, height: 1))
        for column in 0..<12 where clipped[column, 0].isContinuation {
            try expect(column > 0 && advance(clipped[column - 1, 0].text) == 2, "half a wide character at \(column)")
        }

        let cut = DisplayWidth.truncate(text, to: width)
        try expect(
            DisplayWidth.of(cut) <= width, "\(text.debugDescription) cut to \(width) is \(DisplayWidth.of(cut)) wide")
        let fitted = DisplayWidth.fit(text, to: width)
        try expect(
            DisplayWidth.of(fitted) == width,
            "\(text.debugDescription) fitted to \(width) is \(DisplayWidth.of(fitted))")

        // The quick check for clean text agrees with the rules, for text of any kind.
        for limit in [DisplayName.maxGraphemes, 2000] {
            try expect(
                DisplayName.sanitizeLine(text, maxGraphemes: limit)
                    == DisplayName.rebuildLine(text, maxGraphemes: limit),
                "the quick check passes \(text.debugDescription), which the rules change")
        }

        // A name the rules cleaned holds nothing a terminal acts on, and cleaning it again changes nothing.
        let name = DisplayName.sanitize(text)
        try expect(
            name.unicodeScalars.allSatisfy { !DisplayName.isInvisibleControl($0) },
            "unsafe name \(name.debugDescription)")
        try expect(DisplayName.sanitize(name) == name, "cleaning \(name.debugDescription) again changes it")
        try expect(name.count <= DisplayName.maxGraphemes, "a name of \(name.count) characters")
        try expect(
            name.unicodeScalars.first != " " && name.unicodeScalars.last != " ", "untrimmed \(name.debugDescription)")
    }

    static func seeds() -> [[UInt8]] {
        let texts = [
            "Ana", "王小明", "e\u{301}", "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466} family",
            "\u{1F44D}\u{1F3FD}", "\u{2764}\u{FE0F}", "\u{1F1EF}\u{1F1F5}", "\u{1F1EB}", "1\u{FE0F}\u{20E3}",
            "\u{1F3F3}\u{FE0F}\u{200D}\u{1F308}", "\u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
            "\u{915}\u{94D}\u{937}\u{93E}", "\u{1FAE8}", "a\u{1B}[2J\u{202E}b\r\nc", "  two  spaces  ",
        ]
        return texts.enumerated().map { [UInt8($0.offset * 3)] + Array($0.element.utf8) }
    }
}
