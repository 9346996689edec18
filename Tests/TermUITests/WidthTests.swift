import TermUI
import Testing

@Suite("Display width")
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
        // Unicode 15 additions.
        #expect(DisplayWidth.of(Character("\u{1FAE8}")) == 2)
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
        #expect(wrap("abcdefghij", width: 4) == ["abcd", "efgh", "ij"])
        #expect(wrap("王小明王", width: 5) == ["王小", "明王"])
        #expect(wrap("anything", width: 0) == [])
    }
}
