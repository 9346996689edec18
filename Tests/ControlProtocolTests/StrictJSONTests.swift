import Testing

@testable import StrictJSON

@Suite struct StrictJSONTests {
    let parser = StrictJSONParser()

    @Test func parsesEveryKindOfValueInOrder() throws {
        let value = try parser.parse(#" {"b":[1,-2,3.5,1e3],"a":{"t":true,"f":false,"n":null},"s":"x"} "#)
        let expected = JSONValue.object(
            JSONObject([
                ("b", .array([.integer(1), .integer(-2), .double(3.5), .double(1000)])),
                ("a", .object(JSONObject([("t", .bool(true)), ("f", .bool(false)), ("n", .null)]))),
                ("s", .string("x")),
            ]))
        #expect(value == expected)
        #expect(value.encodedString == #"{"b":[1,-2,3.5,1000.0],"a":{"t":true,"f":false,"n":null},"s":"x"}"#)
    }

    @Test func refusesDuplicateKeysAtAnyDepth() {
        #expect(throws: JSONParseError(problem: .duplicateKey("type"), offset: 19)) {
            try parser.parse(#"{"type":"leave",   "type":"chat"}"#)
        }
        #expect(throws: JSONParseError(problem: .duplicateKey("peer"), offset: 32, path: "to")) {
            try parser.parse(#"{"type":"chat","to":{"peer":"a","peer":"b"}}"#)
        }
        #expect(throws: JSONParseError(problem: .duplicateKey("k"), offset: 8, path: "[0]")) {
            try parser.parse(#"[{"k":1,"k":1}]"#)
        }
    }

    /// An error names the member or element it was found in, so a person can find it in a file.
    @Test func errorsNameTheirPlace() {
        #expect(throws: JSONParseError(problem: .duplicateKey("rank"), offset: 31, path: "roles[1]")) {
            try parser.parse(#"{"roles":[{"rank":0},{"rank":1,"rank":2}]}"#)
        }
        #expect(throws: JSONParseError(problem: .unexpectedByte(UInt8(ascii: "x")), offset: 21, path: "a.b[2]")) {
            try parser.parse(#"{"a":{"b":[true,null,x]}}"#)
        }
        let position = JSONParseError.lineAndColumn(of: 10, in: Array("{\n  \"é\": x".utf8))
        #expect(position.line == 2 && position.column == 8)
    }

    @Test func keysThatDifferOnlyByEscapingAreTheSameKey() {
        #expect(throws: JSONParseError(problem: .duplicateKey("type"), offset: 16)) {
            try parser.parse(#"{"type":"leave","t\u0079pe":"chat"}"#)
        }
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try parser.parse(#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\u{08}\u{0C}\n\r\té😀"))
    }

    @Test func stringsRoundTripThroughTheEncoder() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{07} delete \u{7F} 名前 🎙"
        let encoded = JSONValue.string(text).encoded
        #expect(try parser.parse(encoded) == .string(text))
        #expect(String(decoding: encoded, as: UTF8.self).contains("\\u0007"))
    }

    @Test(arguments: [
        (#""\ud800""#, JSONParseError.Problem.invalidEscape),
        (#""\udc00x""#, .invalidEscape),
        (#""\x""#, .invalidEscape),
        ("\"a\u{01}\"", .controlCharacterInString),
        ("01", .trailingData),
        ("-", .unexpectedEnd),
        ("1.", .unexpectedEnd),
        ("1.e5", .invalidNumber),
        ("{\"a\" 1}", .unexpectedByte(UInt8(ascii: "1"))),
        ("[1,]", .unexpectedByte(UInt8(ascii: "]"))),
        ("{,}", .unexpectedByte(UInt8(ascii: ","))),
        ("nul", .unexpectedEnd),
        ("tru e", .unexpectedByte(UInt8(ascii: " "))),
        ("{} {}", .trailingData),
        ("", .unexpectedEnd),
    ])
    func refusesMalformedText(_ text: String, _ problem: JSONParseError.Problem) {
        #expect(throws: JSONParseError.self) { try parser.parse(text) }
        do {
            _ = try parser.parse(text)
        } catch {
            #expect(error.problem == problem)
        }
    }

    @Test func refusesInvalidUTF8() {
        let cases: [[UInt8]] = [
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // past U+10FFFF
            [0x22, 0xE2, 0x82, 0x22],  // truncated sequence
            [0x22, 0xFF, 0x22],
        ]
        for bytes in cases {
            #expect(throws: JSONParseError.self) { try parser.parse(bytes) }
        }
    }

    @Test func boundsNestingAndSize() throws {
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        let path = String(repeating: "[0]", count: 32)
        #expect(throws: JSONParseError(problem: .tooDeep(limit: 32), offset: 32, path: path)) {
            try parser.parse(deep)
        }
        let fine = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        _ = try parser.parse(fine)
        let small = StrictJSONParser(maxDepth: 4, maxBytes: 8)
        #expect(throws: JSONParseError(problem: .tooLarge(limit: 8), offset: 0)) { try small.parse("\"123456789\"") }
    }

    @Test func integersTooLargeForSixtyFourBitsBecomeDoubles() throws {
        #expect(try parser.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try parser.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(throws: JSONParseError.self) { try parser.parse("1e999") }
    }
}
