import RoomTesting
import TermUI
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// glibc's `wcwidth`, which ncursesw places every scalar by and tmux advances by (the Glibc module does not
/// declare it: it needs _XOPEN_SOURCE).
private let systemWidth: @convention(c) (wchar_t) -> Int32 = {
    setlocale(LC_CTYPE, "C.UTF-8")
    guard let symbol = dlsym(nil, "wcwidth") else { fatalError("no wcwidth in the C library") }
    return unsafeBitCast(symbol, to: (@convention(c) (wchar_t) -> Int32).self)
}()

@Suite("Display width", .ownThread)
struct WidthTests {
    @Test func asciiIsOneColumnPerCharacter() {
        #expect(DisplayWidth.of("Hello, world") == 12)
    }

    @Test func wideAndFullwidthAreTwo() {
        #expect(DisplayWidth.of("王小明") == 6)
        #expect(DisplayWidth.of("さくら") == 6)
        #expect(DisplayWidth.of("ＡＢ") == 4)
        #expect(DisplayWidth.of(Character("한")) == 2)
    }

    @Test func emojiPresentationIsTwo() {
        #expect(DisplayWidth.of(Character("🔇")) == 2)
        #expect(DisplayWidth.of(Character("😀")) == 2)
        // Unicode 14, the newest that glibc 2.36 knows.
        #expect(DisplayWidth.of(Character("\u{1FAE0}")) == 2)
    }

    /// glibc up to 2.36 has no width for characters added after Unicode 14: ncurses writes them as one blank
    /// column and newer terminals draw two. They are written as U+FFFD, one column everywhere.
    @Test func charactersNewerThanUnicode14AreReplaced() {
        #expect(DisplayWidth.of(Character("\u{1FAE8}")) == 1)
        #expect(DisplayWidth.drawable(Character("\u{1FAE8}")) == "\u{FFFD}")
        #expect(DisplayWidth.drawable(Character("\u{31350}")) == "\u{FFFD}")
        #expect(DisplayWidth.drawable(Character("\u{378}")) == "\u{FFFD}")
    }

    @Test func textPresentationSymbolsAreOne() {
        #expect(DisplayWidth.of(Character("★")) == 1)
        #expect(DisplayWidth.of(Character("🎙")) == 1)
        #expect(DisplayWidth.of(Character("…")) == 1)
        #expect(DisplayWidth.of(Character("─")) == 1)
    }

    @Test func combiningMarksJoinTheirBase() {
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("Zoe\u{308}") == 3)
        #expect(DisplayWidth.of(Unicode.Scalar(0x301)!) == 0)
    }

    @Test func zwjSequencesAndFlagsAreOneWideCluster() {
        #expect(DisplayWidth.of(Character("👩‍💻")) == 2)
        #expect(DisplayWidth.of(Character("👨‍👩‍👧")) == 2)
        #expect(DisplayWidth.of(Character("🇯🇵")) == 2)
        #expect(DisplayWidth.of("👍🏽") == 2)
    }

    /// What terminals draw differently is written in a form they all agree on (docs/ui.md, "Width").
    @Test func clustersAreWrittenInAFormEveryTerminalAdvancesAlike() {
        // A ZWJ sequence: some terminals draw one emoji, tmux 3.3 and ncurses lay out every part. Keep the first.
        #expect(DisplayWidth.drawable("👨‍👩‍👧‍👦") == "👨")
        #expect(DisplayWidth.drawable("👩‍💻") == "👩")
        // A skin tone: drawn on its base by some, as a swatch of its own (two more columns) by tmux and ncurses.
        #expect(DisplayWidth.drawable("👍🏽") == "👍")
        // VS16 widens a text-default symbol in some terminals only; without it, it is one column everywhere.
        #expect(DisplayWidth.drawable("❤️") == "❤")
        #expect(DisplayWidth.of(Character("❤️")) == 1)
        #expect(DisplayWidth.drawable("1️⃣") == "1\u{20E3}")
        #expect(DisplayWidth.drawable("🏳️‍🌈") == "🏳")
        #expect(DisplayWidth.of(Character("🏳️‍🌈")) == 1)
        #expect(DisplayWidth.drawable("🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}") == "🏴")
        // A flag is two columns everywhere; a lone regional indicator is one in some and two in others.
        #expect(DisplayWidth.drawable("🇯🇵") == "🇯🇵")
        #expect(DisplayWidth.pieces(of: "🇯🇵").map(\.width) == [2])
        #expect(DisplayWidth.drawable(Character("\u{1F1EF}")) == "J")
        // A flag with more to its character (a spacing mark may follow it in one cluster) is written as its
        // letters, each one column: found by the display-width fuzz target.
        let flagWithMark = Character("🇯🇵\u{93E}")
        #expect(flagWithMark.unicodeScalars.count == 3)
        #expect(DisplayWidth.pieces(of: flagWithMark).map(\.text) == ["J", "P", "\u{93E}"])
        #expect(DisplayWidth.of(flagWithMark) == 3)
        #expect(DisplayWidth.pieces(of: Character("🇯🇵\u{301}")).map(\.text) == ["🇯🇵\u{301}"])
        // Spacing marks take their own column, as wcwidth (and so ncurses) counts them.
        #expect(DisplayWidth.of(Character("का")) == 2)
        #expect(DisplayWidth.pieces(of: "का").map(\.text) == ["क", "ा"])
        // Combining marks stay with their base, at most four (what an ncurses cell holds).
        let stacked = Character("a" + String(repeating: "\u{301}", count: 6))
        #expect(DisplayWidth.of(stacked) == 1)
        #expect(DisplayWidth.drawable(stacked) == "a" + String(repeating: "\u{301}", count: 4))
        #expect(DisplayWidth.pieces(of: Character("\u{301}")).isEmpty)
        #expect(DisplayWidth.drawable(" \u{FE0F}") == " ")
    }

    /// Every scalar, written as the screen writes it, takes as many columns as this machine's `wcwidth` (so
    /// ncurses and tmux) gives what is written, and never something `wcwidth` has no width for. The hexagrams
    /// (䷀, U+4DC0–U+4DFF) and the circled numbers on black squares (㉈, U+3248–U+324F) were one column here and
    /// two there, and a row of them spilled past the screen's edge.
    @Test func everyScalarIsWrittenAtTheWidthWcwidthGivesIt() {
        var mismatches: [String] = []
        for value in UInt32(0xA0)...0x3FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let character = Character(scalar)
            var columns = 0
            var undrawable = false
            for written in DisplayWidth.drawable(character).unicodeScalars {
                let width = Int(systemWidth(wchar_t(bitPattern: written.value)))
                undrawable = undrawable || width < 0
                columns += max(0, width)
            }
            if undrawable || columns != DisplayWidth.of(character) {
                mismatches.append(
                    "U+\(String(value, radix: 16, uppercase: true)): \(DisplayWidth.of(character)) vs \(columns)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) scalars: \(mismatches.prefix(20))")
        #expect(DisplayWidth.drawable(Character("\u{4DC0}")) == "\u{FFFD}")
        #expect(DisplayWidth.drawable(Character("\u{3248}")) == "\u{FFFD}")
        #expect(DisplayWidth.of("\u{4DC0}\u{4DC1} Hex") == 6)
    }

    /// Each kind of sequence terminals disagree on, as the screen writes it and measures it; measured in tmux
    /// 3.3a as docs/ui.md ("Width") says.
    @Test func eachSequenceKindHasTheWidthOfWhatIsWritten() {
        let kinds: [(String, String, Int)] = [
            ("🇯🇵", "🇯🇵", 2), ("🇯🇵🇺🇸", "🇯🇵🇺🇸", 4), ("👨‍👩‍👧‍👦", "👨", 2), ("🧑‍🤝‍🧑", "🧑", 2), ("👍🏽", "👍", 2),
            ("👩🏽‍💻", "👩", 2), ("1️⃣", "1\u{20E3}", 1), ("#️⃣", "#\u{20E3}", 1), ("❤️", "❤", 1), ("☀️", "☀", 1),
            ("🏳️‍🌈", "🏳", 1), ("🏴‍☠️", "🏴", 2),
        ]
        for (sequence, written, columns) in kinds {
            let drawn = sequence.map(DisplayWidth.drawable).joined()
            #expect(drawn == written, "\(sequence.debugDescription)")
            #expect(DisplayWidth.of(sequence) == columns, "\(sequence.debugDescription)")
            let system = drawn.unicodeScalars.reduce(0) { $0 + max(0, Int(systemWidth(wchar_t(bitPattern: $1.value)))) }
            #expect(system == columns, "\(sequence.debugDescription)")
        }
    }

    @Test func controlCharactersAreZero() {
        #expect(DisplayWidth.of("\u{7}\t\u{1B}") == 0)
        #expect(DisplayWidth.of(Character("\r\n")) == 0)
        #expect(DisplayWidth.of(Unicode.Scalar(0x85)!) == 0)
    }

    @Test func truncationAddsAnEllipsisWithinTheWidth() {
        #expect(DisplayWidth.truncate("Alexandra", to: 6) == "Alexa…")
        #expect(DisplayWidth.truncate("Alexandra", to: 6, ellipsis: "~") == "Alexa~")
        #expect(DisplayWidth.truncate("Ana", to: 6) == "Ana")
        #expect(DisplayWidth.truncate("Ana", to: 0) == "")
        #expect(DisplayWidth.truncate("Anabel", to: 1) == "…")
    }

    @Test func truncationNeverSplitsAWideCharacter() {
        // Four columns leave three for text: one wide character fits, the next would straddle.
        #expect(DisplayWidth.truncate("王小明", to: 4) == "王…")
        #expect(DisplayWidth.of(DisplayWidth.truncate("王小明", to: 4)) == 3)
        #expect(DisplayWidth.fit("王小明", to: 4) == "王… ")
        #expect(DisplayWidth.truncate("a👩‍💻b", to: 3) == "a…")
    }

    @Test func countsUseCommasInEveryLocale() {
        #expect(formatCount(0) == "0")
        #expect(formatCount(999) == "999")
        #expect(formatCount(1204) == "1,204")
        #expect(formatCount(1_234_567) == "1,234,567")
        #expect(formatCount(-1204) == "-1,204")
    }

    @Test func waitingTimes() {
        #expect(formatWaiting(seconds: 9) == "0m09s")
        #expect(formatWaiting(seconds: 252) == "4m12s")
        #expect(formatWaiting(seconds: 3725) == "1h02m")
        #expect(formatWaiting(seconds: 2 * 86_400 + 3 * 3600) == "2d03h")
        #expect(formatWaiting(seconds: -5) == "0m00s")
        #expect(ordinal(1) == "1st" && ordinal(2) == "2nd" && ordinal(3) == "3rd" && ordinal(11) == "11th")
        #expect(ordinal(22) == "22nd" && ordinal(104) == "104th")
    }

    @Test func wrappingBreaksAtSpaces() {
        #expect(wrap("the quick brown fox", width: 10) == ["the quick", "brown fox"])
        // A word that ends exactly at the width stays on its line.
        #expect(wrap("the quick brown", width: 9) == ["the quick", "brown"])
        #expect(wrap("ab cd ef", width: 2) == ["ab", "cd", "ef"])
        #expect(wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(wrap("王小明王", width: 5) == ["王小", "明王"])
        #expect(wrap("anything", width: 0) == [])
    }
}
