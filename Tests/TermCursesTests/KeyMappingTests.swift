import CNcursesw
import TermUI
import Testing

@testable import TermCurses

@Suite("Key mapping")
struct KeyMappingTests {
    @Test func controlCharactersBecomeNamedKeys() {
        #expect(Terminal.key(character: 3) == .ctrlC)
        #expect(Terminal.key(character: 13) == .enter)
        #expect(Terminal.key(character: 10) == .enter)
        #expect(Terminal.key(character: 9) == .tab)
        #expect(Terminal.key(character: 27) == .escape)
        #expect(Terminal.key(character: 127) == .backspace)
        #expect(Terminal.key(character: 1) == .ctrl("a"))
    }

    @Test func printableCharactersArriveWhole() {
        #expect(Terminal.key(character: 0x6A) == .char("j"))
        #expect(Terminal.key(character: 0x20) == .char(" "))
        #expect(Terminal.key(character: 0x738B) == .char("王"))
        #expect(Terminal.key(character: 0x1F3A7) == .char("🎧"))
        #expect(Terminal.key(character: 0xD800) == .unknown(0xD800))
    }

    @Test func keypadCodesBecomeKeys() {
        #expect(Terminal.key(code: KEY_UP) == .up)
        #expect(Terminal.key(code: KEY_LEFT) == .left)
        #expect(Terminal.key(code: KEY_NPAGE) == .pageDown)
        #expect(Terminal.key(code: KEY_BTAB) == .backTab)
        #expect(Terminal.key(code: KEY_RESIZE) == .resize)
        #expect(Terminal.key(code: KEY_F0 + 5) == .function(5))
        #expect(Terminal.key(code: 0o777) == .unknown(0o777))
    }

    @Test func errorsSayWhatToDoNext() {
        #expect(TerminalError.notATerminal.description.contains("--plain"))
        #expect(TerminalError.cannotStart(term: "vt999").description.contains("TERM=vt999"))
        #expect(TerminalError.cannotStart(term: "").description.contains("TERM=(unset)"))
    }
}
