/// A JSON value as a strict reader sees it: the control protocol, tokens, and the role table file.
///
/// Objects keep their members in the order they were written, so encoding is deterministic and a decoded
/// message can be compared byte for byte with its source.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without a fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object: members in source order, each key at most once.
public struct JSONObject: Sendable, Equatable {
    /// The members in the order they were written.
    public private(set) var members: [(key: String, value: JSONValue)]

    /// An empty object.
    public init() {
        members = []
    }

    /// An object with these members; a later duplicate key replaces the earlier value in place.
    public init(_ members: [(String, JSONValue)]) {
        self.members = []
        for (key, value) in members {
            self[key] = value
        }
    }

    /// The value of a member, or nil when the object has no such key.
    public subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue {
                    members[index].value = newValue
                } else {
                    members.remove(at: index)
                }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// The keys in source order.
    public var keys: [String] { members.map(\.key) }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// Why a text is not acceptable JSON, with the byte offset where the problem was found and the place in the
/// document around it.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable, Equatable {
        case unexpectedEnd
        case unexpectedByte(UInt8)
        case invalidUTF8
        case invalidEscape
        case invalidNumber
        case controlCharacterInString
        case duplicateKey(String)
        case tooDeep(limit: Int)
        case tooLarge(limit: Int)
        case trailingData
    }

    /// What went wrong.
    public var problem: Problem
    /// The byte offset in the input where it went wrong.
    public var offset: Int
    /// The member or element being read when it went wrong, such as `roles[1].permissions` (empty at the top
    /// level). A duplicate key's path names the object that holds it.
    public var path: String = ""

    /// The same error, seen from the object that holds `key`.
    func inside(key: String) -> JSONParseError {
        var outer = self
        outer.path = path.isEmpty ? key : path.hasPrefix("[") ? key + path : key + "." + path
        return outer
    }

    /// The same error, seen from the array that holds element `index`.
    func inside(index: Int) -> JSONParseError {
        var outer = self
        outer.path = path.isEmpty || path.hasPrefix("[") ? "[\(index)]" + path : "[\(index)]." + path
        return outer
    }

    /// The line and column (both from 1, the column counted in Unicode scalars) of `offset` in `bytes`, for
    /// errors in files a person edits.
    public static func lineAndColumn(of offset: Int, in bytes: some Collection<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    public var description: String {
        switch problem {
        case .unexpectedEnd: "JSON ends too early at byte \(offset)"
        case .unexpectedByte(let byte): "unexpected byte 0x\(String(byte, radix: 16)) at byte \(offset)"
        case .invalidUTF8: "invalid UTF-8 at byte \(offset)"
        case .invalidEscape: "invalid escape sequence at byte \(offset)"
        case .invalidNumber: "invalid number at byte \(offset)"
        case .controlCharacterInString: "unescaped control character in a string at byte \(offset)"
        case .duplicateKey(let key):
            // The key is the document's text: quoted with its control characters escaped, and cut short.
            "duplicate key \(key.count > 64 ? String(key.prefix(64)).debugDescription + "…" : key.debugDescription) "
                + "at byte \(offset)"
        case .tooDeep(let limit): "JSON nested deeper than \(limit) levels at byte \(offset)"
        case .tooLarge(let limit): "JSON larger than \(limit) bytes"
        case .trailingData: "unexpected data after the JSON value at byte \(offset)"
        }
    }
}

/// A strict RFC 8259 parser: it rejects duplicate keys, unescaped control characters, invalid UTF-8,
/// lone surrogates, leading zeros, trailing data and nesting deeper than a limit.
///
/// Foundation's `JSONSerialization` and `JSONDecoder` silently keep one of two duplicate keys, which would let
/// a crafted message mean different things to different readers; this parser refuses such input instead.
public struct StrictJSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted.
    public var maxDepth: Int
    /// The largest input accepted, in bytes.
    public var maxBytes: Int

    /// A parser with the given limits.
    public init(maxDepth: Int = 32, maxBytes: Int = 64 * 1024) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    /// Parses one JSON value that must fill the whole input (surrounding whitespace allowed).
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let buffer = Array(bytes)
        guard buffer.count <= maxBytes else {
            throw JSONParseError(problem: .tooLarge(limit: maxBytes), offset: 0)
        }
        var reader = Reader(bytes: buffer, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.parseValue(depth: 0)
        reader.skipWhitespace()
        guard reader.position == buffer.count else {
            throw JSONParseError(problem: .trailingData, offset: reader.position)
        }
        return value
    }

    /// Parses the UTF-8 form of a string.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

private struct Reader {
    let bytes: [UInt8]
    let maxDepth: Int
    var position = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func fail(_ problem: JSONParseError.Problem, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(problem: problem, offset: offset ?? position)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        return bytes[position]
    }

    mutating func expect(_ literal: StaticString, value: JSONValue) throws(JSONParseError) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        for index in 0..<count {
            let expected = literal.utf8Start[index]
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            guard bytes[position] == expected else { throw fail(.unexpectedByte(bytes[position])) }
            position += 1
        }
        return value
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        let byte = try peek()
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", value: .bool(true))
        case UInt8(ascii: "f"): return try expect("false", value: .bool(false))
        case UInt8(ascii: "n"): return try expect("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail(.unexpectedByte(byte))
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw fail(.tooDeep(limit: maxDepth)) }
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        var seen: Set<String> = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return .object(JSONObject())
        }
        while true {
            skipWhitespace()
            let keyOffset = position
            let byte = try peek()
            guard byte == UInt8(ascii: "\"") else { throw fail(.unexpectedByte(byte)) }
            let key = try parseString()
            guard seen.insert(key).inserted else { throw fail(.duplicateKey(key), at: keyOffset) }
            skipWhitespace()
            let colon = try peek()
            guard colon == UInt8(ascii: ":") else { throw fail(.unexpectedByte(colon)) }
            position += 1
            skipWhitespace()
            let value: JSONValue
            do {
                value = try parseValue(depth: depth)
            } catch {
                throw error.inside(key: key)
            }
            members.append((key, value))
            skipWhitespace()
            let next = try peek()
            position += 1
            if next == UInt8(ascii: "}") { break }
            guard next == UInt8(ascii: ",") else { throw fail(.unexpectedByte(next), at: position - 1) }
        }
        var object = JSONObject()
        for member in members {
            object[member.key] = member.value
        }
        return .object(object)
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else { throw fail(.tooDeep(limit: maxDepth)) }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return .array([])
        }
        while true {
            skipWhitespace()
            do {
                elements.append(try parseValue(depth: depth))
            } catch {
                throw error.inside(index: elements.count)
            }
            skipWhitespace()
            let next = try peek()
            position += 1
            if next == UInt8(ascii: "]") { break }
            guard next == UInt8(ascii: ",") else { throw fail(.unexpectedByte(next), at: position - 1) }
        }
        return .array(elements)
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if isDigit(bytes[position]) {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        } else {
            throw fail(.invalidNumber)
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            guard isDigit(bytes[position]) else { throw fail(.invalidNumber) }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            guard isDigit(bytes[position]) else { throw fail(.invalidNumber) }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let value = Int64(text) {
            return .integer(value)
        }
        guard let value = Double(text), value.isFinite else { throw fail(.invalidNumber, at: start) }
        return .double(value)
    }

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    mutating func parseString() throws(JSONParseError) -> String {
        position += 1
        var scalars = String.UnicodeScalarView()
        while true {
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                position += 1
                scalars.append(try parseEscape())
            case 0x00..<0x20:
                throw fail(.controlCharacterInString)
            case 0x00..<0x80:
                scalars.append(Unicode.Scalar(byte))
                position += 1
            default:
                scalars.append(try parseUTF8Scalar())
            }
        }
    }

    mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        let byte = bytes[position]
        position += 1
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
            let first = try parseHex4()
            if (0xD800...0xDBFF).contains(first) {
                guard position < bytes.count else { throw fail(.unexpectedEnd) }
                guard bytes[position] == UInt8(ascii: "\\") else { throw fail(.invalidEscape) }
                guard position + 1 < bytes.count else { throw fail(.unexpectedEnd) }
                guard bytes[position + 1] == UInt8(ascii: "u") else { throw fail(.invalidEscape) }
                position += 2
                let second = try parseHex4()
                guard (0xDC00...0xDFFF).contains(second) else { throw fail(.invalidEscape) }
                let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw fail(.invalidEscape) }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else { throw fail(.invalidEscape) }
            return scalar
        default:
            throw fail(.invalidEscape, at: position - 1)
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail(.invalidEscape)
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    /// Decodes one multi-byte UTF-8 sequence, refusing overlong forms, surrogates and values past U+10FFFF.
    mutating func parseUTF8Scalar() throws(JSONParseError) -> Unicode.Scalar {
        let start = position
        let lead = bytes[position]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            value = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            value = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            value = UInt32(lead & 0x07)
        default:
            throw fail(.invalidUTF8)
        }
        guard position + length <= bytes.count else { throw fail(.unexpectedEnd) }
        for index in 1..<length {
            let next = bytes[position + index]
            guard next & 0xC0 == 0x80 else { throw fail(.invalidUTF8, at: start) }
            value = value << 6 | UInt32(next & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { throw fail(.invalidUTF8, at: start) }
        position += length
        return scalar
    }
}

extension JSONValue {
    /// The compact UTF-8 encoding: no whitespace, members in order, non-ASCII written as is.
    public var encoded: [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(into: &output)
        return output
    }

    /// The compact encoding as a string.
    public var encodedString: String {
        String(decoding: encoded, as: UTF8.self)
    }

    /// Appends the compact encoding of this value.
    public func write(into output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value):
            if value.isFinite {
                output.append(contentsOf: value.description.utf8)
            } else {
                output.append(contentsOf: "null".utf8)
            }
        case .string(let value): JSONValue.writeString(value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONValue.writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Escapes with the short forms RFC 8259 names and `\u00XX` for other control bytes and DEL, as Python's
    /// `json.dumps` does for ASCII, so a token's claims come out byte for byte as PyJWT writes them.
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
