import TermUI
import Testing

@Suite("Command line editor")
struct EditorTests {
    func type(_ text: String, into editor: inout LineEditor) {
        for character in text { _ = editor.handle(.char(character)) }
    }

    @Test func insertsAndMovesTheCursor() {
        var editor = LineEditor(prompt: "/")
        type("invte Eli", into: &editor)
        for _ in 0..<6 { _ = editor.handle(.left) }
        _ = editor.handle(.char("i"))
        #expect(editor.text == "invite Eli")
        #expect(editor.cursor == 4)
        _ = editor.handle(.home)
        #expect(editor.cursor == 0)
        _ = editor.handle(.delete)
        #expect(editor.text == "nvite Eli")
        _ = editor.handle(.end)
        _ = editor.handle(.backspace)
        #expect(editor.text == "nvite El")
        _ = editor.handle(.right)
        #expect(editor.cursor == 8)
    }

    @Test func submitsAndKeepsHistory() {
        var editor = LineEditor(prompt: "/")
        type("chat hi", into: &editor)
        #expect(editor.handle(.enter) == .submitted("chat hi"))
        type("mute Gus", into: &editor)
        #expect(editor.handle(.enter) == .submitted("mute Gus"))
        type("dra", into: &editor)
        _ = editor.handle(.up)
        #expect(editor.text == "mute Gus")
        _ = editor.handle(.up)
        #expect(editor.text == "chat hi")
        _ = editor.handle(.up)
        #expect(editor.text == "chat hi")
        _ = editor.handle(.down)
        #expect(editor.text == "mute Gus")
        _ = editor.handle(.down)
        #expect(editor.text == "dra")
        #expect(editor.history == ["chat hi", "mute Gus"])
    }

    @Test func cancelsOnEscapeOrBackspaceWhenEmpty() {
        var editor = LineEditor(prompt: ":")
        type("x", into: &editor)
        #expect(editor.handle(.backspace) == .editing)
        #expect(editor.handle(.backspace) == .cancelled)
        #expect(editor.handle(.escape) == .cancelled)
        #expect(editor.handle(.function(5)) == .ignored)
    }

    @Test func controlKeysEditLikeAShell() {
        var editor = LineEditor(prompt: "/", text: "topic Friday terminal hour")
        _ = editor.handle(.ctrl("w"))
        #expect(editor.text == "topic Friday terminal ")
        _ = editor.handle(.ctrl("a"))
        _ = editor.handle(.ctrl("k"))
        #expect(editor.text == "")
        type("abc", into: &editor)
        _ = editor.handle(.left)
        _ = editor.handle(.ctrl("u"))
        #expect(editor.text == "c" && editor.cursor == 0)
        _ = editor.handle(.char("\u{7}"))
        #expect(editor.text == "c")
    }

    @Test func rendersWithTheCursorVisible() {
        var editor = LineEditor(prompt: "/")
        type("invite 王小明 and everyone else", into: &editor)
        var buffer = CellBuffer(width: 12, height: 1)
        editor.render(into: &buffer, area: buffer.area)
        #expect(buffer.lines() == ["/ryone else "])
        #expect(buffer[11, 0].style.reverse)
        for _ in 0..<21 { _ = editor.handle(.left) }
        editor.render(into: &buffer, area: buffer.area)
        #expect(buffer.lines() == ["/invite 王小"])
        #expect(buffer[8, 0].text == "王" && buffer[8, 0].style.reverse)
        var tiny = CellBuffer(width: 1, height: 1)
        editor.render(into: &tiny, area: tiny.area)
        #expect(tiny.lines() == ["/"])
        var none = CellBuffer(width: 0, height: 0)
        editor.render(into: &none, area: none.area)
        #expect(none.lines() == [])
    }
}
