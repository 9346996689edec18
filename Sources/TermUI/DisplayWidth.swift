/// How many terminal columns text occupies.
///
/// Widths follow the East Asian Width property of Unicode 15: Wide and Fullwidth characters (which include every
/// emoji with default emoji presentation) take two columns, combining marks and format characters take none,
/// control characters take none, and everything else, Ambiguous included, takes one. A grapheme cluster takes
/// the width of its first scalar, so a base with combining marks or a ZWJ emoji sequence is measured once; a pair
/// of regional indicators (a flag) takes two. A variation selector does not widen its base, because ncursesw,
/// glibc's `wcwidth` and tmux all place the next character by the base's width.
public enum DisplayWidth {
    /// The width of one Unicode scalar: 0, 1 or 2.
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x7F { return value >= 0x20 ? 1 : 0 }
        if value < 0xA0 { return 0 }
        if contains(WidthTables.zero, value) { return 0 }
        return contains(WidthTables.wide, value) ? 2 : 1
    }

    /// The width of one grapheme cluster: 0, 1 or 2.
    public static func of(_ character: Character) -> Int {
        var scalars = character.unicodeScalars.makeIterator()
        guard let first = scalars.next() else { return 0 }
        // ASCII (bar CR LF, one cluster of two scalars) is most of what is drawn: one scalar, no table lookup.
        if first.value < 0x7F { return first.value >= 0x20 ? 1 : 0 }
        if isRegionalIndicator(first) { return 2 }
        let base = of(first)
        if base != 0 || first.value < 0xA0 { return base }
        // A cluster that starts with a zero-width scalar (a stray combining mark, say) is as wide as what follows.
        while let next = scalars.next() {
            let width = of(next)
            if width > 0 { return width }
        }
        return 0
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
