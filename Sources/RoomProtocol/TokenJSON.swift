/// A small, strict JSON reader and writer for token headers and claims.
///
/// Tokens come from the network, so the reader is deliberately narrow: RFC 8259 syntax only, valid UTF-8, bounded
/// nesting, and duplicate member names rejected (RFC 7519 §4 allows a parser to refuse them, and accepting the
/// first or the last one is how two parsers come to disagree about what a token says).
enum TokenJSON {
    /// One parsed JSON value. Numbers keep their text so that integers are read exactly.
    enum Value: Equatable {
        case string(String)
        case number(String)
        case bool(Bool)
        case null
        case array([Value])
        case object([String: Value])
    }

    /// Why a JSON text was refused; `offset` is a byte offset into the text.
    struct ParseError: Error, Equatable {
        var offset: Int
        var problem: String
    }

    static let maximumDepth = 16

    static func parse(_ bytes: [UInt8]) throws(ParseError) -> Value {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        if reader.index != bytes.count {
            throw ParseError(offset: reader.index, problem: "unexpected text after the value")
        }
        return value
    }

    /// Writes `text` as a JSON string literal, escaping what RFC 8259 requires.
    static func quoted(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
        return output
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                index += 1
            }
        }

        func failure(_ problem: String) -> ParseError {
            ParseError(offset: index, problem: problem)
        }

        mutating func value(depth: Int) throws(ParseError) -> Value {
            guard index < bytes.count else {
                throw failure("unexpected end of text")
            }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                return try object(depth: depth + 1)
            case UInt8(ascii: "["):
                return try array(depth: depth + 1)
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return .number(try number())
            default:
                throw failure("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(ParseError) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected
            else {
                throw failure("unknown literal")
            }
            index += expected.count
        }

        mutating func object(depth: Int) throws(ParseError) -> Value {
            if depth > TokenJSON.maximumDepth {
                throw failure("nested too deeply")
            }
            index += 1
            var members: [String: Value] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                    throw failure("expected a member name")
                }
                let nameOffset = index
                let name = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                    throw failure("expected ':'")
                }
                index += 1
                skipWhitespace()
                let member = try value(depth: depth)
                if members[name] != nil {
                    throw ParseError(offset: nameOffset, problem: "duplicate member \"\(name)\"")
                }
                members[name] = member
                skipWhitespace()
                guard index < bytes.count else {
                    throw failure("unexpected end of text")
                }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                throw failure("expected ',' or '}'")
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> Value {
            if depth > TokenJSON.maximumDepth {
                throw failure("nested too deeply")
            }
            index += 1
            var elements: [Value] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth))
                skipWhitespace()
                guard index < bytes.count else {
                    throw failure("unexpected end of text")
                }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements)
                }
                throw failure("expected ',' or ']'")
            }
        }

        mutating func number() throws(ParseError) -> String {
            let start = index
            if bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure("expected a digit")
            }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                skipDigits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else {
                    throw failure("expected a digit after '.'")
                }
                skipDigits()
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < bytes.count, isDigit(bytes[index]) else {
                    throw failure("expected a digit in the exponent")
                }
                skipDigits()
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }

        mutating func skipDigits() {
            while index < bytes.count, isDigit(bytes[index]) {
                index += 1
            }
        }

        mutating func string() throws(ParseError) -> String {
            index += 1
            var scalars = String.UnicodeScalarView()
            var runStart = index
            while true {
                guard index < bytes.count else {
                    throw failure("unterminated string")
                }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    try appendRun(from: runStart, to: index, into: &scalars)
                    index += 1
                    return String(scalars)
                }
                if byte < 0x20 {
                    throw failure("control character in string")
                }
                if byte == UInt8(ascii: "\\") {
                    try appendRun(from: runStart, to: index, into: &scalars)
                    index += 1
                    scalars.append(try escape())
                    runStart = index
                    continue
                }
                index += 1
            }
        }

        /// Validates one run of raw string bytes as UTF-8 and appends it.
        func appendRun(from start: Int, to end: Int, into scalars: inout String.UnicodeScalarView) throws(ParseError) {
            if start == end {
                return
            }
            var decoder = UTF8()
            var iterator = bytes[start..<end].makeIterator()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar):
                    scalars.append(scalar)
                case .emptyInput:
                    return
                case .error:
                    throw ParseError(offset: start, problem: "invalid UTF-8 in string")
                }
            }
        }

        mutating func escape() throws(ParseError) -> Unicode.Scalar {
            guard index < bytes.count else {
                throw failure("unterminated escape")
            }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let first = try hexQuad()
                if (0xD800...0xDBFF).contains(first) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else {
                        throw failure("unpaired surrogate")
                    }
                    index += 2
                    let second = try hexQuad()
                    guard (0xDC00...0xDFFF).contains(second) else {
                        throw failure("unpaired surrogate")
                    }
                    let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    guard let scalar = Unicode.Scalar(combined) else {
                        throw failure("invalid escape")
                    }
                    return scalar
                }
                guard let scalar = Unicode.Scalar(first) else {
                    throw failure("unpaired surrogate")
                }
                return scalar
            default:
                throw failure("unknown escape")
            }
        }

        mutating func hexQuad() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count else {
                throw failure("short \\u escape")
            }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw failure("bad hex digit in \\u escape")
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }
    }
}
