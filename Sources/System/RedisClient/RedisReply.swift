/// One Redis reply (RESP2), decoded from hiredis's reply tree into Swift values at once.
public enum RedisReply: Sendable, Equatable, CustomStringConvertible {
    /// A status line such as `OK` or `QUEUED`.
    case status(String)
    /// An error line such as `ERR unknown command` or `FENCED ...`; in a pipeline it is one reply among others.
    case error(String)
    case integer(Int64)
    /// A bulk string: arbitrary bytes.
    case bulk([UInt8])
    /// A nil bulk string or nil array (a missing key, an XREAD that timed out).
    case null
    case array([RedisReply])

    /// The reply as text: a status, or a bulk string as UTF-8; `nil` otherwise.
    public var string: String? {
        switch self {
        case .status(let text): text
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// The reply as an integer: an integer reply, or a bulk string holding a decimal number.
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .bulk(let bytes): Int64(String(decoding: bytes, as: UTF8.self))
        default: nil
        }
    }

    /// The elements of an array reply; `nil` otherwise.
    public var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .status(let text): "+\(text)"
        case .error(let text): "-\(text)"
        case .integer(let value): ":\(value)"
        case .bulk(let bytes): "\"\(String(decoding: bytes, as: UTF8.self))\""
        case .null: "(nil)"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }

    /// Throws `RedisError.server` for an error reply, and returns the reply otherwise.
    public func checked() throws(RedisError) -> RedisReply {
        if case .error(let message) = self { throw .server(message) }
        return self
    }

    /// The reply as text, or a `RedisError.unexpectedReply` naming what was wanted.
    public func requireString(_ what: String) throws(RedisError) -> String {
        guard let text = try checked().string else { throw .unexpectedReply(expected: what, got: description) }
        return text
    }

    /// The reply as an integer, or a `RedisError.unexpectedReply` naming what was wanted.
    public func requireInteger(_ what: String) throws(RedisError) -> Int64 {
        guard let value = try checked().integer else { throw .unexpectedReply(expected: what, got: description) }
        return value
    }

    /// The reply's elements, or a `RedisError.unexpectedReply` naming what was wanted.
    public func requireArray(_ what: String) throws(RedisError) -> [RedisReply] {
        guard let elements = try checked().elements else {
            throw .unexpectedReply(expected: what, got: description)
        }
        return elements
    }
}

/// One command: its name and arguments, each binary-safe.
public struct RedisCommand: Sendable, Equatable, CustomStringConvertible {
    public var arguments: [[UInt8]]

    /// A command from text arguments, such as `RedisCommand("SET", key, value)`.
    public init(_ arguments: String...) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command from text arguments held in an array.
    public init(_ arguments: [String]) {
        self.arguments = arguments.map { Array($0.utf8) }
    }

    /// A command from raw arguments.
    public init(bytes: [[UInt8]]) {
        arguments = bytes
    }

    /// Adds a text argument.
    public mutating func append(_ argument: String) { arguments.append(Array(argument.utf8)) }

    /// Adds a raw argument.
    public mutating func append(bytes: [UInt8]) { arguments.append(bytes) }

    /// The command's name, for messages (arguments are left out: they may hold room data).
    public var name: String { arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    public var description: String { name }
}
