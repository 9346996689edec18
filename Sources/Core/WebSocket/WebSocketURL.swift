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
