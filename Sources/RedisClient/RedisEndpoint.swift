/// Where Redis listens: `redis://HOST:PORT` or `redis://HOST:PORT/DB`, as given to `--cluster`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The logical database selected after connecting (0 unless the URL names one).
    public var database: Int

    public static let defaultPort = 6379

    public init(host: String, port: Int = defaultPort, database: Int = 0) {
        self.host = host
        self.port = port
        self.database = database
    }

    /// Parses `redis://HOST[:PORT][/DB]`; the port defaults to 6379. IPv6 hosts go in brackets.
    public init(url: String) throws(RedisEndpointError) {
        let prefix = "redis://"
        guard url.hasPrefix(prefix) else { throw .notRedisURL(url) }
        var rest = Substring(url.dropFirst(prefix.count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty {
                guard let number = Int(path), (0...15).contains(number) else { throw .badDatabase(String(path)) }
                database = number
            }
        }
        guard !rest.contains("@") else { throw .credentialsNotSupported }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .badHost(String(rest)) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .badHost(String(rest)) }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" }) else { throw .badHost(String(host)) }
        var port = Self.defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw .badPort(String(portText)) }
            port = number
        }
        self.init(host: String(host), port: port, database: database)
    }

    /// `HOST:PORT`, as log lines and errors name it.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return database == 0 ? "\(shownHost):\(port)" : "\(shownHost):\(port)/\(database)"
    }
}

/// A `--cluster` address that is not a Redis URL this program can use.
public enum RedisEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    case notRedisURL(String)
    case badHost(String)
    case badPort(String)
    case badDatabase(String)
    case credentialsNotSupported

    public var description: String {
        switch self {
        case .notRedisURL(let text): "'\(text)' is not a Redis address (expected redis://HOST:PORT)"
        case .badHost(let text): "'\(text)' is not a host name or address"
        case .badPort(let text): "'\(text)' is not a port (1-65535)"
        case .badDatabase(let text): "'\(text)' is not a Redis database number (0-15)"
        case .credentialsNotSupported: "a Redis address with a user or password is not supported"
        }
    }
}
