import Foundation
import Glibc
import Testing

@testable import RoomServer

@Suite struct ServerLogTests {
    /// Whatever a message holds, it is one line: line breaks, terminal escapes, C1 controls, DEL and
    /// bidirectional controls are written as escapes; other text (accents, CJK, emoji) as it is.
    @Test func aMessageIsOneLineWithItsControlCharactersEscaped() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let log = ServerLog(minimum: .info, descriptor: ends[1])
        log.info("a\nb\r\tc\u{1B}]0;t\u{07} \u{7F}\u{85}\u{9B} \u{202E}evil\u{2066}\u{2028} é 漢 🎙")
        close(ends[1])
        let text = String(decoding: FileHandle(fileDescriptor: ends[0]).readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2)
        #expect(lines.last == "")
        #expect(
            lines.first?.hasSuffix(
                #" INFO a\nb\r\tc\u{1B}]0;t\u{07} \u{7F}\u{85}\u{9B} \u{202E}evil\u{2066}\u{2028} é 漢 🎙"#) == true,
            "\(lines)")
    }
}
