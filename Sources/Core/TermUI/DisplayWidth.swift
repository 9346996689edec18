/// How many terminal columns text occupies, and the form in which the screen writes it so that every terminal
/// advances by exactly that many.
///
/// One scalar's width follows the East Asian Width property of Unicode 15: Wide and Fullwidth characters (which
/// include every emoji with default emoji presentation) take two columns, combining marks and format characters
/// take none, control characters take none, and everything else, Ambiguous included, takes one. That is what
/// glibc's `wcwidth` says, and what ncursesw (which places every scalar by `wcwidth`) and tmux advance by.
///
/// A grapheme cluster is written as `pieces(of:)`: a spacing scalar with at most four combining marks each, the
/// pieces' widths adding up to the cluster's width. What terminals disagree on is replaced (see docs/ui.md,
/// "Width"): a ZWJ emoji sequence keeps its first emoji, skin-tone modifiers, variation selectors, tag characters
/// and other format characters inside a cluster are dropped, a lone regional indicator becomes its letter, and a
/// character this machine's `wcwidth` may not know (unassigned, or added to Unicode after 14.0) or gives another
/// width than Unicode 15 does (`isDisputed`) becomes U+FFFD.
/// A flag (two regional indicators) stays, two columns wide.
public enum DisplayWidth {
    /// One piece of a cluster as the screen writes it: a spacing scalar and its combining marks, and the columns
    /// it takes (1 or 2).
    public struct Piece: Sendable, Equatable {
        public var text: String
        public var width: Int
    }

    /// The most combining marks written with one spacing scalar: ncursesw keeps four in a cell.
    public static let maxMarksPerPiece = 4

    /// The newest Unicode version whose characters are written as they are. glibc up to 2.36 (Debian 12,
    /// Ubuntu 22.04) knows Unicode 14.0; newer characters have no `wcwidth` there, and ncurses writes them as a
    /// blank column while newer terminals draw two.
    public static let newestUnicode = (major: 14, minor: 0)

    /// The width of one Unicode scalar: 0, 1 or 2.
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x7F { return value >= 0x20 ? 1 : 0 }
        if value < 0xA0 { return 0 }
        if contains(WidthTables.zero, value) { return 0 }
        return contains(WidthTables.wide, value) ? 2 : 1
    }

    /// The width of one grapheme cluster as the screen writes it: the sum of its pieces' widths (0 for a control
    /// character or a cluster of marks alone; more than 2 only for clusters of several spacing letters).
    public static func of(_ character: Character) -> Int {
        if let width = plainWidth(character) { return width }
        var total = 0
        for piece in pieces(of: character) { total += piece.width }
        return total
    }

    /// The cluster as the screen writes it: its pieces, in order; empty when nothing of it is drawn.
    public static func pieces(of character: Character) -> [Piece] {
        if let width = plainWidth(character) {
            return width == 0 ? [] : [Piece(text: String(character), width: width)]
        }
        let scalars = Array(character.unicodeScalars)
        var pieces: [Piece] = []
        var marks = 0
        var index = 0
        while index < scalars.count {
            var scalar = scalars[index]
            let isFirst = index == 0
            index += 1
            let properties = scalar.properties
            if scalar.value == 0x200D {
                // A zero-width joiner before an emoji makes a ZWJ sequence, drawn as one emoji by some terminals
                // and as all of them by others: keep the first. Elsewhere (Indic scripts) drop the joiner alone.
                if index < scalars.count, scalars[index].value > 0x7F, scalars[index].properties.isEmoji { break }
                continue
            }
            if isVariationSelector(scalar) || properties.generalCategory == .control { continue }
            if !isFirst && (properties.isEmojiModifier || properties.generalCategory == .format) { continue }
            if isRegionalIndicator(scalar) {
                if let last = pieces.last, pieces.count == 1, last.width == 1,
                    last.text.unicodeScalars.count == 1, isRegionalIndicator(last.text.unicodeScalars.first!)
                {
                    pieces[0] = Piece(text: last.text + String(scalar), width: 2)
                    continue
                }
            }
            if isTooNew(scalar) || isDisputed(scalar) {
                if properties.generalCategory == .nonspacingMark || properties.generalCategory == .enclosingMark
                    || properties.generalCategory == .format
                {
                    continue
                }
                scalar = "\u{FFFD}"
            }
            let width = of(scalar)
            if width == 0 {
                // A mark belongs to the spacing scalar before it; with none, or with four already, it goes.
                guard !pieces.isEmpty, marks < maxMarksPerPiece else { continue }
                pieces[pieces.count - 1].text.unicodeScalars.append(scalar)
                marks += 1
                continue
            }
            pieces.append(Piece(text: String(scalar), width: width))
            marks = 0
        }
        // A pair of regional indicators is drawn as one flag only when it is the whole character. One without
        // its pair, or a flag with more to the character (a spacing mark after it), is drawn one column wide by
        // some terminals and two by others, or joined with what follows: write the letters instead, which every
        // terminal draws one column wide each.
        let wholeFlag = pieces.count == 1 && pieces[0].width == 2
        if !wholeFlag, pieces.contains(where: { isRegionalIndicator($0.text.unicodeScalars.first!) }) {
            pieces = pieces.flatMap(regionalIndicatorsAsLetters)
        }
        return pieces
    }

    /// `piece` with each regional indicator written as its letter, a piece of one column each (the marks stay
    /// with the letter before them); other pieces as they are.
    private static func regionalIndicatorsAsLetters(_ piece: Piece) -> [Piece] {
        guard isRegionalIndicator(piece.text.unicodeScalars.first!) else { return [piece] }
        var letters: [Piece] = []
        for scalar in piece.text.unicodeScalars {
            if isRegionalIndicator(scalar) {
                letters.append(Piece(text: String(Unicode.Scalar(scalar.value - 0x1F1E6 + 0x41)!), width: 1))
            } else {
                letters[letters.count - 1].text.unicodeScalars.append(scalar)
            }
        }
        return letters
    }

    /// The cluster as the screen writes it, as one string.
    public static func drawable(_ character: Character) -> String {
        pieces(of: character).map(\.text).joined()
    }

    /// The width of a cluster that is written as it is (one scalar that every terminal agrees on), or nil when
    /// `pieces(of:)` must look at it.
    @inline(__always)
    static func plainWidth(_ character: Character) -> Int? {
        var scalars = character.unicodeScalars.makeIterator()
        guard let first = scalars.next() else { return 0 }
        guard scalars.next() == nil else { return nil }
        // ASCII is most of what is drawn: one scalar, no table lookup.
        if first.value < 0x7F { return first.value >= 0x20 ? 1 : 0 }
        if isRegionalIndicator(first) || isVariationSelector(first) { return nil }
        let value = first.value
        // Blocks assigned in full by Unicode 14 that names and the screen use most: Latin, IPA and the combining
        // diacritics, dashes and ellipsis, arrows, box drawing to dingbats, kana, CJK ideographs, Hangul syllables,
        // the older emoji. Anything else has its age looked up.
        let old =
            value < 0x0370 || (0x2010...0x2027).contains(value) || (0x2190...0x21FF).contains(value)
            || (0x2500...0x27BF).contains(value) || (0x3099...0x30FF).contains(value)
            || (0x4E00...0x9FFF).contains(value) || (0xAC00...0xD7A3).contains(value)
            || (0x1F300...0x1F64F).contains(value)
        if !old && (isTooNew(first) || isDisputed(first)) { return nil }
        return of(first)
    }

    /// Whether terminals draw `scalar` at different widths although Unicode 15 has one for it: the Yijing
    /// hexagrams (U+4DC0–U+4DFF, Neutral, which Unicode 16 makes Wide) and the circled numbers on black squares
    /// (U+3248–U+324F, Ambiguous). glibc 2.36's `wcwidth` says 2 for both, so ncurses and tmux advance by 2 where
    /// terminals that follow Unicode 15 (xterm, VTE) draw 1: a row of them spilled past the screen's edge.
    /// The line and paragraph separators (U+2028, U+2029) have no width to `wcwidth` at all.
    static func isDisputed(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return (0x4DC0...0x4DFF).contains(value) || (0x3248...0x324F).contains(value) || value == 0x2028
            || value == 0x2029
    }

    static func isTooNew(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        guard properties.generalCategory != .unassigned, let age = properties.age else { return true }
        return age.major > newestUnicode.major || (age.major == newestUnicode.major && age.minor > newestUnicode.minor)
    }

    static func isVariationSelector(_ scalar: Unicode.Scalar) -> Bool {
        (0xFE00...0xFE0F).contains(scalar.value) || (0xE0100...0xE01EF).contains(scalar.value)
    }

    /// The width of a string: the sum of its grapheme clusters' widths.
    public static func of(_ text: some StringProtocol) -> Int {
        var ascii = true
        for byte in text.utf8 where byte >= 0x7F || byte < 0x20 {
            ascii = false
            break
        }
        if ascii { return text.utf8.count }
        var total = 0
        for character in text { total += of(character) }
        return total
    }

    /// Shortens `text` to at most `width` columns, ending it with `ellipsis` when anything was cut.
    ///
    /// A wide character that would straddle the limit is dropped whole, so the result can be one column
    /// narrower than `width`; callers that need an exact width pad it (see `fit(_:to:ellipsis:)`).
    public static func truncate(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if of(text) <= width { return text }
        let ellipsisWidth = of(ellipsis)
        guard ellipsisWidth <= width else { return String(repeating: ".", count: width) }
        let budget = width - ellipsisWidth
        var result = ""
        var used = 0
        for character in text {
            let w = of(character)
            if used + w > budget { break }
            result.append(character)
            used += w
        }
        return result + ellipsis
    }

    /// Truncates `text` like `truncate(_:to:ellipsis:)` and pads it with spaces to exactly `width` columns.
    public static func fit(_ text: String, to width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        let cut = truncate(text, to: width, ellipsis: ellipsis)
        let missing = width - of(cut)
        return missing > 0 ? cut + String(repeating: " ", count: missing) : cut
    }

    private static func isRegionalIndicator(_ scalar: Unicode.Scalar) -> Bool {
        (0x1F1E6...0x1F1FF).contains(scalar.value)
    }

    /// Binary search in a flat table of inclusive `[low, high]` pairs.
    private static func contains(_ table: [UInt32], _ value: UInt32) -> Bool {
        var low = 0
        var high = table.count / 2 - 1
        if value < table[0] || value > table[table.count - 1] { return false }
        while low <= high {
            let middle = (low + high) / 2
            if value < table[middle * 2] {
                high = middle - 1
            } else if value > table[middle * 2 + 1] {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }
}

/// Groups a non-negative count with commas every three digits (`1,204`), whatever the locale.
public func formatCount(_ count: Int) -> String {
    let digits = String(count.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return count < 0 ? "-" + result : result
}
