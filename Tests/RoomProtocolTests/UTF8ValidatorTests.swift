import RoomProtocol
import Testing

@Suite struct UTF8ValidatorTests {
    /// Every sequence of one to four bytes from a spread of interesting values: the validator, fed byte by byte,
    /// agrees with the standard library on whether the bytes are valid UTF-8, and refuses at the same byte as a
    /// check of each prefix would.
    @Test func agreesWithTheStandardLibraryOnEverySequence() {
        // Each boundary of table 3-7: the ASCII range, continuation bytes, every kind of lead byte, never-valid.
        let values: [UInt8] = [
            0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC1, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
        ]
        var sequences: [[UInt8]] = values.map { [$0] }
        var longest = sequences
        for length in 2...4 {
            // Four-byte sequences only from the bytes that begin one, to keep the test short.
            let starts = length == 4 ? longest.filter { $0[0] >= 0xF0 && $0[0] <= 0xF4 } : longest
            longest = starts.flatMap { start in values.map { start + [$0] } }
            sequences += longest
        }
        let completions: [[UInt8]] = [
            [], [0x80], [0x80, 0x80], [0x80, 0x80, 0x80], [0xA0, 0x80], [0x90, 0x80, 0x80],
        ]
        var disagreements: [[UInt8]] = []
        for bytes in sequences {
            var validator = UTF8Validator()
            let taken = bytes.withUnsafeBufferPointer { validator.take($0) }
            let whole = taken && validator.isAtCharacterBoundary
            if whole != (String(validating: bytes, as: UTF8.self) != nil) { disagreements.append(bytes) }
            // A refused prefix is one that no end can make valid: check it against a spread of ends.
            if !taken && completions.contains(where: { String(validating: bytes + $0, as: UTF8.self) != nil }) {
                disagreements.append(bytes)
            }
        }
        #expect(sequences.count == 17 + 17 * 17 + 17 * 17 * 17 + 2 * 17 * 17 * 17)
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }
}
