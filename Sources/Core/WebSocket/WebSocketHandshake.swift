import Platform

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
        guard let path = PercentEncoding.decode(targetParts[0], plusIsSpace: false) else {
            throw WebSocketHandshakeError(status: 400, "bad percent-encoding in the path")
        }
        var query: [(name: String, value: String)] = []
        if targetParts.count == 2 {
            for item in targetParts[1].split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.decode(pair[0], plusIsSpace: true),
                    let value = PercentEncoding.decode(pair.count == 2 ? pair[1] : "", plusIsSpace: true)
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
