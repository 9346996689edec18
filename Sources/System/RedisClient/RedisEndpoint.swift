import Platform

/// Where Redis listens and how to log in: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, as given to `--cluster`.
/// The password never appears in `description` (which log lines and errors print).
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The logical database selected after connecting (0 unless the URL names one).
    public var database: Int
    /// The ACL user to log in as (`AUTH USER PASSWORD`); nil: the default user (`AUTH PASSWORD`).
    public var user: String?
    /// The password sent with `AUTH` after every connect; nil: none is sent.
    public var password: String?

    public static let defaultPort = 6379

    public init(host: String, port: Int = defaultPort, database: Int = 0, user: String? = nil, password: String? = nil)
    {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
    }

    /// Parses `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`; the port defaults to 6379. IPv6 hosts go in brackets;
    /// a user or password with `:`, `@` or `/` in it is percent-encoded (`%40` for `@`).
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
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = credentials.firstIndex(of: ":") else { throw .passwordMissing }
            let name = credentials[..<colon]
            let secret = credentials[credentials.index(after: colon)...]
            guard !secret.isEmpty else { throw .passwordMissing }
            guard let decodedSecret = PercentEncoding.decode(secret) else { throw .badCredentials }
            password = decodedSecret
            if !name.isEmpty {
                guard let decodedName = PercentEncoding.decode(name) else { throw .badCredentials }
                user = decodedName
            }
        }
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
        self.init(host: String(host), port: port, database: database, user: user, password: password)
    }

    /// The URL as it may be shown: a password replaced by `***` (for error messages about a URL given).
    public static func redacted(_ url: String) -> String {
        let prefix = "redis://"
        guard url.hasPrefix(prefix) else { return url }
        let rest = url.dropFirst(prefix.count)
        let authority = rest.prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@") else { return url }
        let credentials = authority[..<at]
        let user = credentials.prefix { $0 != ":" }
        return prefix + user + ":***" + rest[at...]
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
    /// `USER@HOST`, or an empty password: Redis logs in with a password.
    case passwordMissing
    /// A user or password whose `%` escapes are broken.
    case badCredentials

    public var description: String {
        switch self {
        case .notRedisURL(let text): "'\(text)' is not a Redis address (expected redis://HOST:PORT)"
        case .badHost(let text): "'\(text)' is not a host name or address"
        case .badPort(let text): "'\(text)' is not a port (1-65535)"
        case .badDatabase(let text): "'\(text)' is not a Redis database number (0-15)"
        case .passwordMissing: "a Redis login needs a password (redis://:PASSWORD@HOST or redis://USER:PASSWORD@HOST)"
        case .badCredentials: "the user or password has a broken %-escape"
        }
    }
}
