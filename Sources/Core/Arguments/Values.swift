/// The kind of value an option or positional argument accepts, and how it is checked.
public enum ValueType: Sendable, Equatable {
    /// Any text, including the empty string.
    case string
    /// A whole number inside the range.
    case integer(ClosedRange<Int>)
    /// A positive duration written as numbers with units: `500ms`, `30s`, `5m`, `1h`, `2d`, or `1h30m`.
    case duration
    /// `HOST:PORT`, with an IPv6 host in brackets (`[::1]:7480`) and a port from 0 to 65535.
    case endpoint
    /// A file or directory path; its existence is checked by whoever opens it.
    case path
    /// A URL whose scheme is one of these, such as `ws` or `wss`.
    case url(schemes: [String])
    /// One of a fixed list of words.
    case choice([String])

    /// What a valid value looks like, in words, for error messages.
    public var expected: String {
        switch self {
        case .string: return "text"
        case .integer(let range): return "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .duration: return "a positive duration such as 30s, 5m or 1h"
        case .endpoint: return "HOST:PORT with a port from 0 to 65535"
        case .path: return "a file path"
        case .url(let schemes):
            let list = schemes.map { "\($0)://" }
            return
                "a \(list.joined(separator: " or ")) URL such as \(schemes.first ?? "ws")://127.0.0.1:7480/rooms/lobby"
        case .choice(let words): return "one of \(words.joined(separator: ", "))"
        }
    }

    /// Parses and validates `text`; nil when it is not a valid value of this type.
    public func parse(_ text: String) -> Value? {
        switch self {
        case .string:
            return .string(text)
        case .integer(let range):
            guard let number = Int(text), range.contains(number) else { return nil }
            return .integer(number)
        case .duration:
            return parseDuration(text).map(Value.duration)
        case .endpoint:
            return Endpoint(parsing: text).map(Value.endpoint)
        case .path:
            return text.isEmpty || text.contains("\0") ? nil : .path(text)
        case .url(let schemes):
            return isURL(text, schemes: schemes) ? .string(text) : nil
        case .choice(let words):
            return words.contains(text) ? .choice(text) : nil
        }
    }
}

/// A parsed, validated value.
public enum Value: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case duration(Duration)
    case endpoint(Endpoint)
    case path(String)
    case choice(String)
}

/// A host and port, as given to `--listen`.
public struct Endpoint: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// A host name or an IP address, without brackets.
    public var host: String
    /// The port; 0 asks the system for a free one.
    public var port: UInt16

    /// Creates an endpoint from its parts.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[IPV6]:PORT`; nil when either part is missing or invalid.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return nil }
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil
        }
        let allowed = host.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" }
        guard !host.isEmpty, allowed, !portText.isEmpty, portText.allSatisfy(\.isASCII),
            let port = UInt16(portText)
        else { return nil }
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

private func parseDuration(_ text: String) -> Duration? {
    var total = Duration.zero
    var digits = ""
    var rest = Substring(text)
    guard !rest.isEmpty else { return nil }
    while let first = rest.first {
        if first.isASCII, first.isNumber {
            guard digits.count < 9 else { return nil }
            digits.append(first)
            rest = rest.dropFirst()
            continue
        }
        guard let amount = Int64(digits) else { return nil }
        digits = ""
        let unit: Duration
        if rest.hasPrefix("ms") {
            unit = .milliseconds(1)
            rest = rest.dropFirst(2)
        } else {
            switch first {
            case "s": unit = .seconds(1)
            case "m": unit = .seconds(60)
            case "h": unit = .seconds(3600)
            case "d": unit = .seconds(86_400)
            default: return nil
            }
            rest = rest.dropFirst()
        }
        total += unit * amount
    }
    guard digits.isEmpty, total > .zero else { return nil }
    return total
}

private func isURL(_ text: String, schemes: [String]) -> Bool {
    for scheme in schemes where text.hasPrefix("\(scheme)://") {
        let afterScheme = text.dropFirst(scheme.count + 3)
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return !authority.isEmpty && !text.contains(where: \.isWhitespace)
    }
    return false
}
