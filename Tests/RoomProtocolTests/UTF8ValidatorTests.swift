import Testing
import WebSocket

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

    /// Runs of plain ASCII are skipped eight bytes at a time: a sequence anywhere among them, whole or cut between
    /// two calls at any byte, is judged as the standard library judges it.
    @Test func agreesAmongRunsOfASCIIWhereverTheTextIsCut() {
        let sequences: [[UInt8]] = [
            [], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x8E, 0xB5], [0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xFF], [0xE2, 0x82], [0xC3, 0x41],
        ]
        var disagreements: [[UInt8]] = []
        for sequence in sequences {
            for before in 0...17 {
                for after in [0, 1, 7, 8, 9, 16] {
                    let bytes =
                        Array(repeating: UInt8(ascii: "a"), count: before) + sequence
                        + Array(repeating: UInt8(ascii: "z"), count: after)
                    let expected = String(validating: bytes, as: UTF8.self) != nil
                    for cut in 0...bytes.count {
                        var validator = UTF8Validator()
                        let taken =
                            bytes[..<cut].withContiguousStorageIfAvailable { validator.take($0) } ?? false
                            && bytes[cut...].withContiguousStorageIfAvailable { validator.take($0) } ?? false
                        if (taken && validator.isAtCharacterBoundary) != expected { disagreements.append(bytes) }
                    }
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }
}
