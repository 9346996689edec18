/// HTTP header fields in arrival order, looked up without regard to case.
public struct HTTPHeaders: Sendable, Equatable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// The first value of the named field.
    public subscript(name: String) -> String? {
        let wanted = name.lowercased()
        return fields.first { $0.name.lowercased() == wanted }?.value
    }

    /// Every value of the named field, comma-separated lists split into trimmed items.
    public func tokens(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.flatMap { field in
            field.value.split(separator: ",").map { trimSpaces(Substring($0)) }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Splits a head into its first line and header fields; rejects control characters and folded lines.
func parseHead(_ head: [UInt8]) throws(WebSocketHandshakeError) -> (String, HTTPHeaders) {
    var lines: [ArraySlice<UInt8>] = []
    var start = 0
    var index = 0
    while index + 1 < head.count {
        if head[index] == 13 && head[index + 1] == 10 {
            lines.append(head[start..<index])
            index += 2
            start = index
        } else {
            index += 1
        }
    }
    while let last = lines.last, last.isEmpty { lines.removeLast() }
    guard let first = lines.first, start == head.count else {
        throw WebSocketHandshakeError(status: 400, "incomplete head")
    }
    for line in lines {
        for byte in line where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            throw WebSocketHandshakeError(status: 400, "control character in the head")
        }
    }
    guard let startLine = String(validating: first, as: UTF8.self) else {
        throw WebSocketHandshakeError(status: 400, "start line is not UTF-8")
    }
    var headers = HTTPHeaders()
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            throw WebSocketHandshakeError(status: 400, "header line without a name")
        }
        let nameBytes = line[line.startIndex..<colon]
        for byte in nameBytes where !isTokenByte(byte) {
            throw WebSocketHandshakeError(status: 400, "bad character in a header name")
        }
        guard let value = String(validating: line[(colon + 1)...], as: UTF8.self) else {
            throw WebSocketHandshakeError(status: 400, "header value is not UTF-8")
        }
        headers.add(String(decoding: nameBytes, as: UTF8.self), trimSpaces(Substring(value)))
    }
    return (startLine, headers)
}

private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}

func trimSpaces(_ text: Substring) -> String {
    var slice = text
    while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
    while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
    return String(slice)
}

func trimSpaces(_ text: String) -> String { trimSpaces(Substring(text)) }
