/// A refused or malformed HTTP upgrade, with the HTTP status to answer (server) or report (client).
public struct WebSocketHandshakeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The HTTP status: 400 malformed, 426 wrong WebSocket version, 431 head too large; on the client side,
    /// the status the server answered (0 when the answer itself was malformed).
    public var status: Int
    /// What was wrong.
    public var problem: String

    public init(status: Int, _ problem: String) {
        self.status = status
        self.problem = problem
    }

    public var description: String { "websocket handshake: \(problem) (HTTP \(status))" }
}

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

/// A client's request to open a WebSocket, parsed and validated (RFC 6455 section 4.2.1).
public struct WebSocketUpgradeRequest: Sendable, Equatable {
    /// The request target as sent, e.g. `/rooms/lobby?token=abc`.
    public var target: String
    /// The percent-decoded path, e.g. `/rooms/lobby`.
    public var path: String
    /// The percent-decoded query items in order.
    public var query: [(name: String, value: String)]
    public var headers: HTTPHeaders
    /// The client's `Sec-WebSocket-Key` (base64 of 16 bytes).
    public var key: String

    /// The room named by a path of the form `/rooms/ROOM`, or nil for any other path.
    public var room: String? {
        let prefix = "/rooms/"
        guard path.hasPrefix(prefix) else { return nil }
        let name = String(path.dropFirst(prefix.count))
        return name.isEmpty || name.contains("/") ? nil : name
    }

    /// The bearer token from `Authorization: Bearer …`, or else from the `token` query item.
    public var bearerToken: String? {
        if let authorization = headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2 && parts[0].lowercased() == "bearer" {
                let token = trimSpaces(parts[1])
                if !token.isEmpty { return token }
            }
        }
        return queryValue("token")
    }

    /// The first value of the named query item.
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }

    public static func == (lhs: WebSocketUpgradeRequest, rhs: WebSocketUpgradeRequest) -> Bool {
        lhs.target == rhs.target && lhs.path == rhs.path && lhs.headers == rhs.headers && lhs.key == rhs.key
            && lhs.query.elementsEqual(rhs.query) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Parses and validates a request head (everything up to and including the blank line).
    public static func parse(head: [UInt8]) throws(WebSocketHandshakeError) -> WebSocketUpgradeRequest {
        let (startLine, headers) = try parseHead(head)
        let parts = startLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw WebSocketHandshakeError(status: 400, "malformed request line") }
        guard parts[0] == "GET" else { throw WebSocketHandshakeError(status: 405, "method \(parts[0]) is not GET") }
        guard parts[2] == "HTTP/1.1" else {
            throw WebSocketHandshakeError(status: 505, "version \(parts[2]) is not HTTP/1.1")
        }
        let target = String(parts[1])
        guard target.hasPrefix("/") else { throw WebSocketHandshakeError(status: 400, "request target is not a path") }
        let targetParts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = percentDecode(targetParts[0], plusIsSpace: false) else {
            throw WebSocketHandshakeError(status: 400, "bad percent-encoding in the path")
        }
        var query: [(name: String, value: String)] = []
        if targetParts.count == 2 {
            for item in targetParts[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = percentDecode(pair[0], plusIsSpace: true),
                    let value = percentDecode(pair.count == 2 ? pair[1] : "", plusIsSpace: true)
                else { throw WebSocketHandshakeError(status: 400, "bad percent-encoding in the query") }
                query.append((name: name, value: value))
            }
        }
        guard headers["Host"] != nil else { throw WebSocketHandshakeError(status: 400, "missing Host header") }
        guard headers.tokens("Upgrade").contains(where: { $0.lowercased() == "websocket" }) else {
            throw WebSocketHandshakeError(status: 400, "missing Upgrade: websocket")
        }
        guard headers.tokens("Connection").contains(where: { $0.lowercased() == "upgrade" }) else {
            throw WebSocketHandshakeError(status: 400, "missing Connection: upgrade")
        }
        guard headers["Sec-WebSocket-Version"].map(trimSpaces) == "13" else {
            throw WebSocketHandshakeError(status: 426, "Sec-WebSocket-Version is not 13")
        }
        guard let key = headers["Sec-WebSocket-Key"].map(trimSpaces), Base64.decode(key)?.count == 16 else {
            throw WebSocketHandshakeError(status: 400, "Sec-WebSocket-Key is not base64 of 16 bytes")
        }
        return WebSocketUpgradeRequest(target: target, path: path, query: query, headers: headers, key: key)
    }
}

/// A server's answer to an upgrade request, as the client reads it (RFC 6455 section 4.2.2).
public struct WebSocketUpgradeResponse: Sendable, Equatable {
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders

    /// Parses a response head (everything up to and including the blank line). The status is three digits from 100
    /// to 599 (RFC 9110 §15).
    public static func parse(head: [UInt8]) throws(WebSocketHandshakeError) -> WebSocketUpgradeResponse {
        let (statusLine, headers) = try parseHead(head)
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1", parts[1].utf8.count == 3,
            parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let status = Int(parts[1]),
            (100...599).contains(status)
        else {
            throw WebSocketHandshakeError(status: 0, "malformed status line")
        }
        return WebSocketUpgradeResponse(
            status: status, reason: parts.count == 3 ? String(parts[2]) : "", headers: headers)
    }

    /// Checks that the server switched protocols for the key the client sent.
    public func validate(expectedAccept: String) throws(WebSocketHandshakeError) {
        guard status == 101 else {
            throw WebSocketHandshakeError(status: status, "server refused the upgrade: \(status) \(reason)")
        }
        guard headers.tokens("Upgrade").contains(where: { $0.lowercased() == "websocket" }),
            headers.tokens("Connection").contains(where: { $0.lowercased() == "upgrade" })
        else { throw WebSocketHandshakeError(status: 0, "response lacks Upgrade/Connection headers") }
        guard headers["Sec-WebSocket-Accept"].map(trimSpaces) == expectedAccept else {
            throw WebSocketHandshakeError(status: 0, "Sec-WebSocket-Accept does not match the key")
        }
    }
}

/// Building and measuring handshake messages.
public enum WebSocketHandshake {
    /// The largest request or response head accepted by default.
    public static let defaultMaxHeadSize = 8 * 1024

    /// The length of the head (through the blank line) at the start of `bytes`, or nil when it is not complete.
    /// Throws 431 when no complete head fits in `maxHeadSize`, and 400 at once when the first byte cannot start
    /// an HTTP message (a TLS handshake to a plain server, say), so such a peer is answered without waiting for a
    /// head that never comes.
    public static func headLength(
        in bytes: [UInt8], maxHeadSize: Int = defaultMaxHeadSize
    ) throws(WebSocketHandshakeError) -> Int? {
        if let first = bytes.first, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) {
            throw WebSocketHandshakeError(
                status: 400,
                first == 0x16
                    ? "a TLS handshake arrived, but this address speaks plain HTTP: use ws://, not wss://"
                    : "not an HTTP message")
        }
        let limit = min(bytes.count, maxHeadSize)
        var index = 3
        while index < limit {
            if bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
                return index + 1
            }
            index += 1
        }
        if bytes.count >= maxHeadSize {
            throw WebSocketHandshakeError(status: 431, "header larger than \(maxHeadSize) bytes")
        }
        return nil
    }

    /// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)). SHA-1 comes from the caller so this target
    /// stays free of C.
    public static func acceptKey(forKey key: String, sha1: ([UInt8]) -> [UInt8]) -> String {
        Base64.encode(sha1(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
    }

    /// A `Sec-WebSocket-Key` from 16 random bytes.
    public static func key(fromRandomBytes bytes: [UInt8]) -> String { Base64.encode(bytes) }

    /// The client's upgrade request for `target` (path and query) on `host` (with `:port` when not default).
    public static func requestBytes(
        host: String, target: String, key: String, headers: HTTPHeaders = HTTPHeaders()
    )
        -> [UInt8]
    {
        var text = "GET \(target) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The server's 101 answer accepting a request.
    public static func acceptResponseBytes(acceptKey: String) -> [UInt8] {
        Array(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(acceptKey)\r\n\r\n").utf8)
    }

    /// The server's refusal: a status, a plain-text reason as the body, and the connection closed after it.
    public static func rejectResponseBytes(status: Int, reason: String) -> [UInt8] {
        let body = reason.filter { $0 != "\r" && $0 != "\n" } + "\n"
        var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\nContent-Type: text/plain; charset=utf-8\r\n"
        if status == 426 { text += "Sec-WebSocket-Version: 13\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        return Array(text.utf8)
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Error"
        }
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

/// Decodes `%XX` escapes (and `+` as a space in queries); nil on a bad escape or invalid UTF-8.
func percentDecode(_ text: Substring, plusIsSpace: Bool) -> String? {
    var bytes: [UInt8] = []
    var iterator = Array(text.utf8).makeIterator()
    while let byte = iterator.next() {
        if byte == UInt8(ascii: "%") {
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        } else if plusIsSpace && byte == UInt8(ascii: "+") {
            bytes.append(UInt8(ascii: " "))
        } else {
            bytes.append(byte)
        }
    }
    return String(validating: bytes, as: UTF8.self)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
}

/// Standard base64 (RFC 4648) with padding, as the handshake uses it.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    /// Each byte's value in the alphabet, 0xFF for a byte outside it.
    private static let decodeTable = Base64URL.decodeTable(for: alphabet)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded base64; nil when the text is not canonical base64 (which includes unused bits before the
    /// padding that are not zero: otherwise several texts would decode to the same bytes).
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            var chunk: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let char = chars[index + offset]
                var value: UInt8 = 0
                if char == UInt8(ascii: "=") {
                    guard index + 4 == chars.count, offset >= 2 else { return nil }
                    padding += 1
                } else {
                    value = decodeTable[Int(char)]
                    guard padding == 0, value != 0xFF else { return nil }
                }
                chunk = chunk << 6 | UInt32(value)
            }
            // The bits the padding leaves unused must be zero, or several texts would spell the same bytes.
            if (padding == 2 && chunk & 0xFFFF != 0) || (padding == 1 && chunk & 0xFF != 0) { return nil }
            out.append(UInt8(chunk >> 16))
            if padding < 2 { out.append(UInt8(chunk >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(chunk & 0xFF)) }
            index += 4
        }
        return out
    }
}

/// A `ws://` or `wss://` address split into what the client needs.
public struct WebSocketURL: Sendable, Equatable {
    /// Whether the connection uses TLS (`wss://`).
    public var secure: Bool
    /// The host name or address, without IPv6 brackets.
    public var host: String
    public var port: Int
    /// The request target: path and query, `/` at least.
    public var target: String

    /// The `Host` header value: the host, bracketed if IPv6, with the port when it is not the default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    public init(secure: Bool, host: String, port: Int, target: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.target = target
    }

    /// Parses `ws://host[:port][/path][?query]` or the `wss://` form.
    public init(_ text: String) throws(WebSocketHandshakeError) {
        let rest: Substring
        if text.lowercased().hasPrefix("ws://") {
            secure = false
            rest = text.dropFirst(5)
        } else if text.lowercased().hasPrefix("wss://") {
            secure = true
            rest = text.dropFirst(6)
        } else {
            throw WebSocketHandshakeError(status: 0, "URL \(text) does not start with ws:// or wss://")
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        let pathAndQuery = rest[authorityEnd...]
        target = pathAndQuery.isEmpty ? "/" : (pathAndQuery.hasPrefix("?") ? "/" + pathAndQuery : String(pathAndQuery))
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw WebSocketHandshakeError(status: 0, "URL \(text) has an unclosed IPv6 bracket")
            }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw WebSocketHandshakeError(status: 0, "URL \(text) has text after the IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[authority.startIndex..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty, !host.contains("@") else {
            throw WebSocketHandshakeError(status: 0, "URL \(text) has no host")
        }
        guard !host.contains("["), !host.contains("]") else {
            throw WebSocketHandshakeError(status: 0, "URL \(text) has a bracket inside its host")
        }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw WebSocketHandshakeError(status: 0, "URL \(text) has a bad port")
            }
            port = value
        } else {
            port = secure ? 443 : 80
        }
    }
}
