import Testing

@testable import RoomProtocol
@testable import StrictJSON

/// Token headers and claims are read by the shared strict parser with the token limits; these are the checks the
/// token code relies on.
@Suite struct TokenJSONTests {
    func parse(_ text: String) -> JSONValue? {
        try? TokenClaims.parser.parse(Array(text.utf8))
    }

    @Test func readsNestedValues() {
        #expect(
            parse(#" {"a":[1,-2.5e3,true,false,null],"b":{"c":"d"}} "#)
                == .object(
                    JSONObject([
                        ("a", .array([.integer(1), .double(-2500), .bool(true), .bool(false), .null])),
                        ("b", .object(JSONObject([("c", .string("d"))]))),
                    ])))
    }

    @Test func refusesWhatRFC8259Refuses() {
        let bad = [
            "", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "'a'", "\"a", "\"\u{01}\"",
            #""\x""#, #""\ud800""#, #""\udc00""#, "tru", "1 2", "{\"a\" 1}", "{1:2}", "nul",
        ]
        for text in bad {
            #expect(parse(text) == nil, "\(text)")
        }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParseError(problem: .invalidUTF8, offset: 1)) {
            try TokenClaims.parser.parse([0x22, 0xC3, 0x28, 0x22])
        }
    }

    @Test func refusesDuplicateMembers() {
        #expect(throws: JSONParseError(problem: .duplicateKey("a"), offset: 8)) {
            try TokenClaims.parser.parse(Array(#"{"a":1, "a":2}"#.utf8))
        }
    }

    @Test func refusesDeepNesting() {
        let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)
        let fine = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
        #expect(parse(deep) == nil)
        #expect(parse(fine) != nil)
    }

    @Test func refusesMoreThanATokenCanHold() {
        let large = "\"" + String(repeating: "a", count: RoomToken.maximumBytes - 1) + "\""
        #expect(throws: JSONParseError(problem: .tooLarge(limit: 4096), offset: 0)) {
            try TokenClaims.parser.parse(Array(large.utf8))
        }
    }

    @Test func quotingRoundTrips() {
        let text = "a\"b\\c\n\u{01}é😀"
        #expect(parse(JSONValue.string(text).encodedString) == .string(text))
        #expect(JSONValue.string("\u{01}").encodedString == #""\u0001""#)
        #expect(JSONValue.string("\u{08}\u{0C}\u{7F}").encodedString == #""\b\f\u007f""#)
    }
}
