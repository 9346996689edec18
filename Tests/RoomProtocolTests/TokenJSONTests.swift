import Testing

@testable import RoomProtocol

@Suite struct TokenJSONTests {
    func parse(_ text: String) -> TokenJSON.Value? {
        try? TokenJSON.parse(Array(text.utf8))
    }

    @Test func readsNestedValues() {
        #expect(
            parse(#" {"a":[1,-2.5e3,true,false,null],"b":{"c":"d"}} "#)
                == .object([
                    "a": .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null]),
                    "b": .object(["c": .string("d")]),
                ]))
    }

    @Test func decodesEscapes() {
        #expect(parse(#""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#) == .string("\"\\/\u{08}\u{0C}\n\r\té😀"))
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
        #expect((try? TokenJSON.parse([0x22, 0xC3, 0x28, 0x22])) == nil)
    }

    @Test func refusesDuplicateMembers() {
        #expect(throws: TokenJSON.ParseError(offset: 8, problem: #"duplicate member "a""#)) {
            try TokenJSON.parse(Array(#"{"a":1, "a":2}"#.utf8))
        }
    }

    @Test func refusesDeepNesting() {
        let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)
        let fine = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
        #expect(parse(deep) == nil)
        #expect(parse(fine) != nil)
    }

    @Test func quotingRoundTrips() {
        let text = "a\"b\\c\n\u{01}é😀"
        #expect(parse(TokenJSON.quoted(text)) == .string(text))
        #expect(TokenJSON.quoted("\u{01}") == #""\u0001""#)
    }
}
